"""The learned paragraph ranking: the features read from the candidates' sentences, the model that re-orders the
head of the fused order, and the store and Retriever that carry them."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest

from bot.wiring.runtime import Core
from rag.ingest.chunking import Chunker
from rag.ingest.ingestor import Ingestor
from rag.search.paragraph_features import FEATURES, paragraph_features, policy_term_ids
from rag.search.paragraph_ranker import HEAD, WEIGHTS, learned_order, normalised
from rag.search.retrieve import PARAGRAPH_RRF_K, Retriever, rank_candidate_paragraphs, reciprocal_rank_fusion
from rag.search.sentence_blocks import Candidates
from rag.search.sentences import SentenceEvidence
from rag.search.sqlite_store import SQLiteKnowledgeStore
from rag.search.store import Filters
from rag.search.word_links import parse_word_links
from tests.conftest import write
from tests.fakes.fake_mongo import FakeDatabase
from tests.rag.mongo.test_mongo_knowledge import open_store

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")


def _candidates() -> Candidates:
    """Two sections: p0 (two sentences) and p1 in the first, p2 in the second. Term ids 1, 2, 3 are the question's;
    every sentence starts with its paragraph's heading (one id)."""
    sentences = [[9, 1, 5, 2], [9, 3, 6, 6, 6, 6], [9, 1, 1, 7], [3, 2, 8]]
    return Candidates(
        chunk_of_sentence=np.array([0, 0, 0, 1]), paragraph_of_sentence=np.array([0, 0, 1, 2]),
        subs=["c1.0", "c1.1", "c2.0"], chunk_of_paragraph=np.array([0, 0, 1]),
        tokens=np.array([t for s in sentences for t in s], dtype=np.int32),
        head_lens=np.array([1, 1, 1, 1]), body_lens=np.array([3, 5, 3, 2]),
        vectors=np.zeros((4, 2), dtype=np.float32), paragraph_norms=np.ones(3, dtype=np.float32))


def test_features_read_each_paragraph_from_its_sentences() -> None:
    f = paragraph_features(_candidates(), np.array([1.0, 2.0, 3.0, 0.5]), np.array([0.1, 0.2, 0.3]),
                           [1, 2, 3], {1: 1.0, 2: 1.0, 3: 2.0})
    column = {name: f[:, i] for i, name in enumerate(FEATURES)}
    assert f.shape == (3, len(FEATURES))
    assert column["bm25_best"].tolist() == [2.0, 3.0, 0.5]
    assert column["bm25_sum"].tolist() == [3.0, 3.0, 0.5]  # p0's words are shared out over two sentences
    # idf-weighted share of the question's terms in the text: p0 holds all three across its sentences; p2's
    # heading holds term 3, which does not count (siblings share headings)
    assert column["coverage"].tolist() == [1.0, 0.25, 0.25]
    # terms 1 and 2 two places apart in p0; p1's "1 1" is one word twice
    assert column["proximity"].tolist() == pytest.approx([math.log1p(1), 0.0, 0.0])
    assert column["vector_mean"].tolist() == pytest.approx([0.1, 0.2, 0.3])
    assert column["ordinal"].tolist() == pytest.approx([0.0, math.log1p(1), 0.0])  # the second paragraph of its section
    assert column["length"].tolist() == pytest.approx([math.log1p(8), math.log1p(3), math.log1p(2)])
    assert column["one_sentence"].tolist() == [0.0, 1.0, 1.0]  # a lead-in or list item is one sentence


def test_the_glossary_column_counts_policy_terms_a_body_holds_whole() -> None:
    sentences = _candidates()
    scores, sims, idfs = np.zeros(4), None, {1: 1.0}
    glossary = FEATURES.index("glossary")
    # term (1, 2): p0 holds both words; p1 holds 1 only; p2 holds 2 only. Term (6,): p0's second sentence. Term
    # (2, 8): p2 holds both, p0 has 2 but not 8.
    f = paragraph_features(sentences, scores, sims, [1], idfs, [[1, 2], [6], [2, 8]])
    assert f[:, glossary].tolist() == pytest.approx([2 / 3, 0.0, 1 / 3])
    # a heading token does not count: 9 heads p0's and p1's sentences, 3 p2's (and is in p0's body)
    assert paragraph_features(sentences, scores, sims, [1], idfs, [[9], [3]])[:, glossary].tolist() == [0.5, 0.0, 0.0]
    assert not paragraph_features(sentences, scores, sims, [1], idfs)[:, glossary].any()  # no glossary terms


def test_policy_terms_are_read_whole_and_odd_ones_left_out() -> None:
    ids = {"recertif": 1, "period": 2, "expedit": 3, "servic": 4}
    assert policy_term_ids("recertification period; expedited service", ids) == [[1, 2], [3, 4]]
    # an empty line, bare separators, function words only, a word no stored sentence uses: nothing to count
    assert policy_term_ids("", ids) == [] and policy_term_ids(";;; ;", ids) == []
    assert policy_term_ids("the; of and", ids) == []
    assert policy_term_ids("recertification zzzqx; expedited service", ids) == [[3, 4]]
    assert len(policy_term_ids("; ".join(["expedited service"] * 5000), ids)) == 5000  # long, still linear


def test_features_without_question_words_or_vector() -> None:
    f = paragraph_features(_candidates(), np.zeros(4), None, [42], {})
    column = {name: f[:, i] for i, name in enumerate(FEATURES)}
    assert not column["coverage"].any() and not column["proximity"].any() and not column["vector_mean"].any()
    assert column["length"].all()


def test_normalised_ranks_each_column_and_ties_share_the_best() -> None:
    x = np.array([[3.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    out = normalised(x)
    assert out[:, 0].argsort().tolist() == [1, 2, 0]
    assert out[:, 1].tolist() == [0.0, 0.0, 0.0]  # all tied: no information
    assert normalised(x * 1000.0).tolist() == out.tolist()  # the scale of a corpus's scores does not matter


OTHERS = [f"o{i}" for i in range(28)]  # weaker paragraphs of another section: a head as long as real questions get


def _evidence(features: dict[str, tuple[float, ...]]) -> SentenceEvidence:
    """"spec" (a later sibling that repeats the question's words in one long sentence) ranks first by best-sentence
    BM25 and vector; "rule" (the general rule, first in its section, short, holding more of the question's words
    across its sentences) second; then OTHERS."""
    order = ["spec", "rule", *OTHERS]
    return SentenceEvidence(["c1", "c2"], ["c1", "c2"], order, order,
                            {"rule": "c1", "spec": "c1"} | dict.fromkeys(OTHERS, "c2"), features)


def _row(**values: float) -> tuple[float, ...]:
    return tuple(values.get(name, 0.0) for name in FEATURES)


def test_the_general_rule_beats_a_sibling_that_repeats_the_question() -> None:
    rule = _row(bm25_best=4.0, bm25_sum=9.0, coverage=0.9, proximity=1.0, vector_mean=0.5, ordinal=0.0,
                length=math.log1p(30))
    spec = _row(bm25_best=5.0, bm25_sum=5.0, coverage=0.5, proximity=0.0, vector_mean=0.55, ordinal=math.log1p(6),
                length=math.log1p(120), one_sentence=1.0)
    others = {sub: _row(bm25_best=1.0 + i / 100, bm25_sum=1.0 + i / 100, coverage=0.2, vector_mean=0.2 - i / 1000,
                        ordinal=math.log1p(i), length=math.log1p(60), one_sentence=1.0)
              for i, sub in enumerate(OTHERS)}
    fused = [sub for sub, _ in reciprocal_rank_fusion([["spec", "rule"], ["spec", "rule"], ["spec", "rule"]])]
    assert fused == ["spec", "rule"]  # what the fusion alone ranks first
    fused_order, ranked = rank_candidate_paragraphs(_evidence({"rule": rule, "spec": spec} | others), ["c1", "c2"])
    assert ranked[:2] == ["rule", "spec"]
    assert fused_order[:2] == ["spec", "rule"]  # what picks the sections stays the fusion's
    # without features (a store that computes none) the fused order stands
    assert rank_candidate_paragraphs(_evidence({}), ["c1", "c2"])[1][:2] == ["spec", "rule"]


def test_learned_order_reorders_the_head_only() -> None:
    order = [f"p{i}" for i in range(HEAD + 5)]
    coverage = FEATURES.index("coverage")
    # coverage rises down the list: with weight on coverage alone, the head is reversed
    features = {sub: tuple(float(i) if j == coverage else 0.0 for j in range(len(FEATURES)))
                for i, sub in enumerate(order)}
    weights = {name: 1.0 if name == "coverage" else 0.0 for name in WEIGHTS}
    ranked = learned_order(order, features, weights)
    assert ranked[:HEAD] == order[:HEAD][::-1]
    assert ranked[HEAD:] == order[HEAD:]  # the tail keeps its place
    assert learned_order(order, {}, weights) == order
    assert learned_order(["p0"], features, weights) == ["p0"]
    assert learned_order(order, features, dict.fromkeys(WEIGHTS, 0.0)) == order  # no signal: today's order


def test_the_shipped_weights_name_every_column() -> None:
    assert list(WEIGHTS) == ["fused_rank", *FEATURES]
    assert WEIGHTS["fused_rank"] > 0  # the learned model extends the fusion, it does not replace it


REGULATION = """# Reporting rules

## § 273.99 Reporting changes

(a) General rule. A household must report a change in its income within 10 days of the change. The household
reports it by phone, by mail or in person.

(b) Simplified reporting. Households assigned to simplified reporting report when income exceeds the limit.

(c) Changes reported by others. When a landlord, an employer or a relative reports a change in the household's
circumstances to the office, the office treats the report of the change as a report made by the household
only after the household confirms the change, and a report of a change made by a person outside the household
is never a report of the household's own change for any period of certification or for any benefit month.
"""


def test_the_sqlite_store_gives_every_paragraph_its_features(core: Core, tmp_path: Path) -> None:
    core.ingestor.ingest_paths([write(tmp_path / "reg" / "reporting.md", REGULATION)])
    store = core.store
    assert isinstance(store, SQLiteKnowledgeStore)
    question = "How long does a household have to report a change in income?"
    vector = core.embedder.embed_query(question)
    chunk_ids = [cid for cid, _ in store.lexical_search(question, 10, Filters())]
    evidence = store.sentence_evidence(question, vector, chunk_ids)
    assert set(evidence.features) == set(evidence.chunk_of)
    assert all(len(row) == len(FEATURES) for row in evidence.features.values())
    subs = {s.sub_id: s.text for c in store.get_chunks(chunk_ids) for s in c.subchunks}
    coverage = {subs[sub][:3]: row[FEATURES.index("coverage")] for sub, row in evidence.features.items()}
    assert coverage["(a)"] == 1.0  # household, report, change, income: all in the general rule
    assert coverage["(b)"] < coverage["(a)"]
    # The glossary's terms after the question (second line) count for BM25 but not as the question's own words.
    expanded = store.sentence_evidence(f"{question}\nrecertification", vector, chunk_ids)
    assert {s: r[FEATURES.index("coverage")] for s, r in expanded.features.items()} == {
        s: r[FEATURES.index("coverage")] for s, r in evidence.features.items()}
    # Each policy term is held whole or not at all: "simplified reporting" is (b)'s, "report a change" is not a term.
    policy = store.sentence_evidence(f"{question}\nsimplified reporting; landlord employer", vector, chunk_ids)
    held = {subs[sub][:3]: row[FEATURES.index("glossary")] for sub, row in policy.features.items()}
    assert held["(b)"] == 0.5 and held["(c)"] == 0.5 and held["(a)"] == 0.0
    assert not any(row[FEATURES.index("glossary")] for row in evidence.features.values())
    # The Retriever's paragraph ranks follow the learned order (without word links, learned on 7 CFR 273 itself:
    # this made-up "§ 273.99" is in their scope; tests/rag/search/test_word_links.py).
    core.retriever.word_links = parse_word_links("")
    hits = core.retriever.search(question, k=3)
    ranks = {sub: rank for hit in hits for sub, rank in hit.paragraph_ranks.items()}
    first = min(ranks, key=lambda sub: ranks[sub])
    assert subs[first].startswith("(a)")


def test_mongodb_computes_no_features_and_keeps_the_fused_order(core: Core, tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    store = open_store(FakeDatabase())
    Ingestor(store, core.embedder, Chunker(450)).ingest_paths([write(tmp_path / "reg" / "reporting.md", REGULATION)])
    with caplog.at_level(logging.INFO, logger="rag.search.retrieve"):
        retriever = Retriever(store, core.embedder)
    assert "computes no paragraph features" in caplog.text
    question = "How long does a household have to report a change in income?"
    chunk_ids = [cid for cid, _ in store.lexical_search(question, 10, Filters())]
    evidence = store.sentence_evidence(question, core.embedder.embed_query(question), chunk_ids)
    assert evidence.chunk_of and evidence.features == {}
    assert rank_candidate_paragraphs(evidence, chunk_ids)[1] == [
        sub for sub, _ in reciprocal_rank_fusion([evidence.paragraphs_lexical, evidence.paragraphs_vector,
                                                  sorted(evidence.chunk_of, key=lambda s: chunk_ids.index(
                                                      evidence.chunk_of[s]))], k=PARAGRAPH_RRF_K)]
    assert retriever.search(question, k=2)
