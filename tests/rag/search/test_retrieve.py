"""Hybrid retrieval: fusion arithmetic, lexical and semantic matches, filters, embedder failure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bot.wiring.runtime import Core
from rag.search.glossary import Glossary
from rag.search.retrieve import Retriever, reciprocal_rank_fusion


def test_rrf_scores_by_hand() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]], k=5)
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 6)
    assert scores["b"] == pytest.approx(1 / 7 + 1 / 6)
    assert scores["c"] == pytest.approx(1 / 8)
    assert scores["d"] == pytest.approx(1 / 7)
    assert [x for x, _ in fused] == ["b", "a", "d", "c"]
    weighted = dict(reciprocal_rank_fusion([["a"], ["b"]], weights=[2.0, 1.0], k=0))
    assert weighted == {"a": 2.0, "b": 1.0}


def test_right_section_ranks_first(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    hits = core.retriever.search("Can college students get SNAP?", k=3)
    assert hits[0].chunk.doc_id == "kb/snap/students"
    hits = core.retriever.search("help paying my heating bill", k=3)
    assert hits[0].chunk.doc_id == "kb/liheap"
    hits = core.retriever.search("food for a pregnant mother and her baby", k=3)
    assert hits[0].chunk.doc_id == "kb/wic"


def test_rare_code_found_by_lexical_side(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    hits = core.retriever.search("ZX-42", k=1)
    assert hits[0].chunk.doc_id == "kb/internal/fraud-procedures"
    assert hits[0].lexical_rank == 1


def test_hits_carry_subchunks_and_metadata(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    hit = core.retriever.search("work study exemption for students", k=1)[0]
    assert hit.chunk.url == "https://www.fns.usda.gov/snap/students"
    assert hit.chunk.title == "SNAP for college students"
    assert hit.chunk.tags == ["snap"]
    quoted = [s.text for s in hit.chunk.subchunks]
    assert ("- works at least 20 hours a week for pay\n- takes part in federal or state work study\n"
            "- cares for a child under age 6") in quoted
    assert hit.as_dict()["subchunks"][0]["sub_id"].startswith("kb/snap/students::")


def test_tag_and_group_filters(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    q = "referral desk for trafficking cases"
    assert "kb/internal/fraud-procedures" not in {h.chunk.doc_id for h in core.retriever.search(q, k=10,
                                                                                             groups=["navigators"])}
    assert core.retriever.search(q, k=1, groups=["supervisors"])[0].chunk.doc_id == "kb/internal/fraud-procedures"
    assert {h.chunk.doc_id for h in core.retriever.search("benefits", k=10, tags=["wic"])} == {"kb/wic"}


class _BrokenEmbedder:
    name, dim = "broken", 256

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        raise AssertionError("not used")

    def embed_query(self, text: str) -> np.ndarray:
        raise TimeoutError("embedding service timed out")

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        raise TimeoutError("embedding service timed out")


def test_failing_query_embedding_falls_back_to_lexical(core: Core, kb: Path, caplog: pytest.LogCaptureFixture) -> None:
    core.ingestor.ingest_paths([kb])
    retriever = Retriever(core.store, _BrokenEmbedder())
    hits = retriever.search("heating bills energy crisis", k=2)
    assert hits[0].chunk.doc_id == "kb/liheap"
    assert hits[0].vector_rank is None
    assert "lexical search only" in caplog.text


def test_empty_question_and_empty_store(core: Core) -> None:
    assert core.retriever.search("   ") == []
    assert core.retriever.search("anything at all") == []


class _CountingEmbedder:
    """Records each query-embedding call: a hosted embedder bills (and waits for) every round trip."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.query_calls: list[list[str]] = []
        self.name, self.dim = inner.name, inner.dim  # type: ignore[attr-defined]

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)  # type: ignore[attr-defined]

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        self.query_calls.append(list(texts))
        return self.inner.embed_documents(texts)  # type: ignore[attr-defined]


def test_a_question_and_its_glossary_terms_are_embedded_in_one_call(core: Core, kb: Path) -> None:
    core.ingestor.ingest_paths([kb])
    glossary = Glossary()
    question = "can a green card holder get food stamps"
    assert glossary.expand(question), "the bundled glossary maps this question's words"
    embedder = _CountingEmbedder(core.embedder)
    retriever = Retriever(core.store, embedder, glossary=glossary)
    assert retriever.search(question, k=3)
    assert len(embedder.query_calls) == 1 and embedder.query_calls[0][0] == question
    assert len(embedder.query_calls[0]) == 2  # the question, then the policy terms
    retriever.search("heating bills energy crisis", k=1)
    assert embedder.query_calls[-1] == ["heating bills energy crisis"]
