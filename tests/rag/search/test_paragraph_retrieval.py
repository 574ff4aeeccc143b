"""Paragraph-level retrieval: the candidates' paragraphs ranked from their stored sentences, the chunks of the best
paragraphs pulled into the hits, and rank_paragraphs using that ranking without embedding anything again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bot.cli.main import demo_kb_path
from bot.wiring.runtime import Core
from rag.documents import Chunk
from rag.ingest.chunking import Chunker
from rag.ingest.ingestor import Ingestor
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from rag.mongo.indexes import CHUNKS, create_or_update, search_index_models
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.search.paragraphs import rank_paragraphs
from rag.search.retrieve import rank_candidate_paragraphs, section_of, with_another_section, with_best_paragraphs
from rag.search.sentences import SentenceEvidence, rank_sentences
from rag.search.sqlite_store import SQLiteKnowledgeStore
from rag.search.store import Filters
from tests.conftest import write
from tests.fakes.fake_mongo import FakeDatabase

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")


def test_paragraph_vector_is_the_mean_of_its_sentences() -> None:
    # p1 has one sentence right on the question and two far from it; p2 two sentences close to it throughout.
    rows = [("c1", "p1"), ("c1", "p1"), ("c1", "p1"), ("c2", "p2"), ("c2", "p2")]
    matrix = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.9, 0.436], [0.9, 0.436]], dtype=np.float32)
    evidence = rank_sentences(rows, np.array([0.0, 2.0, 0.0, 1.0, 0.5]), matrix, np.array([1.0, 0.0]))
    assert evidence.paragraphs_vector == ["p2", "p1"]  # the best single sentence (p1's first) would put p1 first
    assert evidence.chunks_vector == ["c1", "c2"]  # chunks keep their best sentence
    assert evidence.paragraphs_lexical == ["p1", "p2"]  # a paragraph's best sentence by BM25
    assert evidence.chunks_lexical == ["c1", "c2"]
    assert evidence.chunk_of == {"p1": "c1", "p2": "c2"}
    assert rank_sentences(rows, np.zeros(5), matrix, None).paragraphs_vector == []
    assert rank_sentences(rows, np.zeros(5), matrix, None).paragraphs_lexical == []  # no word found


def test_paragraphs_fuse_their_sentences_with_their_chunks_rank() -> None:
    evidence = SentenceEvidence([], [], ["p3", "p1"], ["p3", "p2", "p1"],
                                {"p1": "c1", "p2": "c1", "p3": "c2"})
    assert rank_candidate_paragraphs(evidence, ["c1", "c2"]) == (["p3", "p1", "p2"], ["p3", "p1", "p2"])
    assert rank_candidate_paragraphs(SentenceEvidence([], [], [], [], {}), ["c1"]) == ([], [])


def test_chunks_of_the_best_paragraphs_are_pulled_into_the_first_five() -> None:
    fused = [f"c{i}" for i in range(1, 11)]
    chunk_of = {"a": "c9", "b": "c1", "c": "c7", "d": "c10"}
    # c9 and c7 hold two of the three best paragraphs: they take the places of c4 and c5, the best two stay first.
    assert with_best_paragraphs(fused, ["a", "b", "c", "d"], chunk_of, 10) == \
        ["c1", "c2", "c3", "c9", "c7", "c4", "c5", "c6", "c8", "c10"]
    assert with_best_paragraphs(fused, ["b"], chunk_of, 10) == fused  # already among them: nothing moves
    assert with_best_paragraphs(fused, ["a", "c", "d"], chunk_of, 5) == ["c1", "c2", "c9", "c7", "c10"]
    assert with_best_paragraphs(fused, ["a", "c", "d"], chunk_of, 1) == ["c1"]  # the best chunk always stays
    assert with_best_paragraphs(fused, [], chunk_of, 3) == ["c1", "c2", "c3"]


LONG_SECTION = """# Heating assistance

## Who can get help

{filler}

Households that heat with wood pellets may ask for a pellet voucher worth 300 dollars once a winter.
"""


def test_retriever_ranks_paragraphs_and_rank_paragraphs_embeds_nothing(core: Core, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    filler = "\n\n".join(f"Paragraph {i} on heating help: households apply at the county office and bring a bill "
                         f"from the utility company for the month {i}." for i in range(40))
    write(tmp_path / "kb" / "heat.md", LONG_SECTION.format(filler=filler))
    core.ingestor.ingest_paths([tmp_path / "kb"])
    hits = core.retriever.search("pellet voucher for a wood stove", k=5)
    assert all(hit.paragraph_ranks for hit in hits)
    best = min((rank, sub_id) for hit in hits for sub_id, rank in hit.paragraph_ranks.items())[1]
    assert "pellet voucher" in next(s.text for h in hits for s in h.chunk.subchunks if s.sub_id == best)

    def no_embedding(texts: list[str]) -> np.ndarray:
        raise AssertionError("paragraphs embedded again at query time")

    monkeypatch.setattr(core.embedder, "embed_documents", no_embedding)
    ranked = rank_paragraphs("pellet voucher for a wood stove", hits, core.embedder)
    assert ranked[0].sub.sub_id == best and "pellet voucher" in ranked[0].sub.text
    assert len(ranked) == sum(1 for h in hits for s in h.chunk.subchunks if s.text.strip())


STUDENT_QUESTION = "Can a college student working 20 hours a week get SNAP?"


def _student_store(core: Core, kb: Path) -> tuple[SQLiteKnowledgeStore, np.ndarray]:
    """The demo knowledge base ingested into the embedded store, and the vector of STUDENT_QUESTION."""
    core.ingestor.ingest_paths([kb])
    store = core.store
    assert isinstance(store, SQLiteKnowledgeStore)
    return store, np.asarray(core.embedder.embed_query(STUDENT_QUESTION))


def test_sqlite_sentence_evidence_agrees_with_sentence_rankings(core: Core, kb: Path) -> None:
    store, vector = _student_store(core, kb)
    question = STUDENT_QUESTION
    chunk_ids = [cid for cid, _ in store.lexical_search(question, 10, Filters())]
    evidence = store.sentence_evidence(question, vector, chunk_ids)
    assert (evidence.chunks_lexical, evidence.chunks_vector) == store.sentence_rankings(question, vector, chunk_ids)
    assert set(evidence.paragraphs_vector) == set(evidence.chunk_of)
    assert {evidence.chunk_of[s] for s in evidence.paragraphs_lexical} <= set(chunk_ids)
    assert store.sentence_evidence(question, vector, []) == SentenceEvidence([], [], [], [], {})


def test_mongo_sentence_evidence_is_the_sqlite_stores(core: Core) -> None:
    db = FakeDatabase()
    mongo = MongoKnowledgeStore(MongoConnection(AsyncBridge(), db))
    mongo.connection.run(create_or_update(db[CHUNKS], search_index_models(256, mongo.options)))  # type: ignore[arg-type]
    db[CHUNKS].build_search_indexes()
    try:
        Ingestor(mongo, core.embedder, Chunker(450)).ingest_paths([demo_kb_path()])
        core.ingestor.ingest_paths([demo_kb_path()])
        question = "Can a college student working 20 hours a week get SNAP?"
        vector = core.embedder.embed_query(question)
        chunk_ids = [cid for cid, _ in core.store.lexical_search(question, 10, Filters())]
        ours, theirs = mongo.sentence_evidence(question, vector, chunk_ids), core.store.sentence_evidence(
            question, vector, chunk_ids)
        assert ours.paragraphs_lexical and ours.paragraphs_vector
        # Same statistics, same vectors: the same rankings. SQLite keeps sentence vectors in int8 (issue 21), which
        # may swap near-ties far down the paragraphs' vector ranking (here past rank 50 of 82), never the top.
        assert ours.paragraphs_vector[:10] == theirs.paragraphs_vector[:10]
        assert sorted(ours.paragraphs_vector) == sorted(theirs.paragraphs_vector)
        assert (ours.chunks_lexical, ours.chunks_vector, ours.paragraphs_lexical, ours.chunk_of) == (
            theirs.chunks_lexical, theirs.chunks_vector, theirs.paragraphs_lexical, theirs.chunk_of)
        assert mongo.sentence_rankings(question, vector, chunk_ids) == (ours.chunks_lexical, ours.chunks_vector)
    finally:
        mongo.close()


def _chunk(chunk_id: str, *heading: str, doc: str = "reg") -> Chunk:
    return Chunk(chunk_id=chunk_id, doc_id=doc, ordinal=0, title="7 CFR 273", heading_path=list(heading), subchunks=[])


def test_the_first_three_hits_are_not_all_one_section_when_another_is_close() -> None:
    work = [_chunk(f"w{i}", "Subpart C", "§ 273.7 Work provisions.", f"({x})") for i, x in enumerate("abcd")]
    abawd = _chunk("t", "Subpart G", "§ 273.24 Time limit for able-bodied adults.", "(b)")
    # Three chunks of § 273.7 first: the runner-up section (5th) takes the third place, the rest keep their order.
    assert with_another_section([*work, abawd]) == ["w0", "w1", "t", "w2", "w3"]
    assert with_another_section([work[0], abawd, *work[1:]]) == ["w0", "t", "w1", "w2", "w3"]  # already varied
    assert with_another_section([*work, _chunk("x", "Subpart C", "§ 273.7 Work provisions.", "(e)"), abawd]) == \
        ["w0", "w1", "w2", "w3", "x", "t"]  # no other section among the first five: nothing moves
    assert with_another_section(work[:3]) == ["w0", "w1", "w2"]
    # Outside a regulation a section is the document's first heading; another document is another section.
    pages = [_chunk(f"p{i}", "Apply", f"Step {i}", doc="page") for i in range(3)]
    assert with_another_section([*pages, _chunk("q", "Apply", doc="other")]) == ["p0", "p1", "q", "p2"]
    assert with_another_section([*pages, _chunk("r", "Eligibility", doc="page")]) == ["p0", "p1", "r", "p2"]
    assert section_of(abawd) == ("reg", "273.24") and section_of(_chunk("z")) == ("reg", "")


APPEALS = """# Fair hearings

## Asking for a hearing

A household that wants to appeal a cut to its food benefits may ask for a fair hearing. It has 90 days from the
notice to ask for the hearing, and it may ask in writing or by phone.

An appeal of a cut to food benefits is heard by an official who took no part in the decision being appealed.

## While the hearing is pending

Benefits continue unchanged, at the same amount, while the household waits for the decision, when it asks within
the notice period. The office reduces or ends them only once the hearing official has decided against the
household, or when the household's certification period ends before the decision is made.
"""


def test_a_follow_ups_own_words_rank_the_paragraphs_too(core: Core, tmp_path: Path) -> None:
    write(tmp_path / "kb" / "appeals.md", APPEALS)
    core.ingestor.ingest_paths([tmp_path / "kb"])
    thread = "client wants to appeal the cut to her food benefits, how long does she have to ask for a hearing"
    follow_up = "will she keep getting the same amount while she waits"

    def first_paragraph(hits: list) -> str:  # type: ignore[type-arg]
        best = min((rank, sub) for hit in hits for sub, rank in hit.paragraph_ranks.items())[1]
        return next(s.text for h in hits for s in h.chunk.subchunks if s.sub_id == best)

    searched = f"{thread} {follow_up}"
    # Read with its thread alone, the follow-up finds the paragraph the thread was about first.
    assert "90 days" in first_paragraph(core.retriever.search(searched, k=5))
    # Its own words rank the same candidates again: the paragraph it asks about comes first.
    assert "continue unchanged" in first_paragraph(core.retriever.search(searched, k=5, follow_up=follow_up))
    # The chunks found are the same: the thread still decides where to look.
    assert [h.chunk.chunk_id for h in core.retriever.search(searched, k=5, follow_up=follow_up)] == \
        [h.chunk.chunk_id for h in core.retriever.search(searched, k=5)]


def test_the_same_candidates_sentences_are_read_once_until_the_store_changes(core: Core, kb: Path,
                                                                              tmp_path: Path) -> None:
    # A follow-up ranks the same candidates twice: the second ranking reuses the sentences the first one read.
    store, vector = _student_store(core, kb)
    question = STUDENT_QUESTION
    chunk_ids = [cid for cid, _ in store.vector_search(vector, 10, Filters())]
    assert len(chunk_ids) > 3
    reads: list[str] = []
    store._db.set_trace_callback(lambda sql: reads.append(sql) if "FROM sentence_blocks" in sql else None)
    try:
        first = store.sentence_evidence(question, vector, chunk_ids)
        again = store.sentence_evidence("what if she is 60", core.embedder.embed_query("what if she is 60"),
                                        chunk_ids)
        assert len(reads) == 1 and set(again.chunk_of) == set(first.chunk_of)
        assert store.sentence_evidence(question, vector, chunk_ids) == first  # the same evidence, from the reuse
        assert len(reads) == 1
        store.sentence_evidence(question, vector, chunk_ids[:3])  # other candidates are read
        assert len(reads) == 2
        write(tmp_path / "more" / "wic.md", "# WIC\n\nWIC serves pregnant women and children under five.\n")
        core.ingestor.ingest_paths([tmp_path / "more"])  # a write: what was read is read again
        store.sentence_evidence(question, vector, chunk_ids[:3])
        assert len(reads) == 3
    finally:
        store._db.set_trace_callback(None)
