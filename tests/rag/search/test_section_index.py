"""Section BM25 from stored postings: the very scores and order SQLite FTS5's bm25() gives, with filters exact."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rag.documents import Chunk, SourceDocument, SubChunk
from rag.search.section_index import TOKENIZER, top_rows
from rag.search.sqlite_store import SQLiteKnowledgeStore, fts_query
from rag.search.store import ChunkVectors, Filters

WORDS = ("household households income incomes student students working works worked heating bill bills "
         "resource resources vehicle vehicles élan naïve café 273 36 months month able bodied adult adults").split()


def _chunk(doc_id: str, n: int, title: str, heading: list[str], text: str) -> Chunk:
    cid = f"{doc_id}::{n}"
    return Chunk(chunk_id=cid, doc_id=doc_id, ordinal=n, title=title, heading_path=heading, text=text,
                 subchunks=[SubChunk(f"{cid}.0", cid, 0, "paragraph", text, heading)])


def _write(store: SQLiteKnowledgeStore, doc_id: str, chunks: list[Chunk], groups: list[str] | None = None) -> None:
    doc = SourceDocument(doc_id=doc_id, title=chunks[0].title, blocks=[], groups=groups or ["all"])
    n_sentences = sum(1 for c in chunks for _ in c.subchunks)  # one sentence each: the texts have no full stop
    store.replace_document(doc, chunks, ChunkVectors(np.ones((len(chunks), 4), np.float32) / 2,
                                                     np.ones((n_sentences, 4), np.float32) / 2))


def _random_docs(rng: random.Random, n_docs: int) -> dict[str, list[Chunk]]:
    docs = {}
    for d in range(n_docs):
        doc_id = f"doc{d}"
        title = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
        docs[doc_id] = [_chunk(doc_id, n, title, [" ".join(rng.choices(WORDS, k=rng.randint(0, 3)))],
                               " ".join(rng.choices(WORDS, k=rng.randint(1, 40))))
                        for n in range(rng.randint(1, 6))]
    return docs


def _fts5(docs: dict[str, list[Chunk]]) -> sqlite3.Connection:
    """What layout 1 searched: an FTS5 table of each section's head and body."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE f USING fts5(cid UNINDEXED, head, body, tokenize = '{TOKENIZER}')")
    for chunks in docs.values():
        db.executemany("INSERT INTO f(cid, head, body) VALUES (?,?,?)",
                       [(c.chunk_id, c.heading_text, c.text) for c in chunks])
    return db


def test_lexical_scores_are_fts5s_bm25_bit_for_bit(tmp_path: Path) -> None:
    rng = random.Random(21)
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    docs = _random_docs(rng, 12)
    for doc_id, chunks in docs.items():
        _write(store, doc_id, chunks)
    # replace and delete some, so that the stored statistics must follow
    docs["doc3"] = _random_docs(random.Random(5), 1)["doc0"]
    docs["doc3"] = [_chunk("doc3", c.ordinal, c.title, c.heading_path, c.text) for c in docs["doc3"]]
    _write(store, "doc3", docs["doc3"])
    store.delete_documents(["doc7"])
    del docs["doc7"]
    fts = _fts5(docs)
    for _ in range(60):
        question = " ".join(rng.choices([*WORDS, "the", "of", "what"], k=rng.randint(1, 8)))
        if not fts_query(question):
            assert store.lexical_search(question, 5, Filters()) == []
            continue
        expected = {cid: -r for cid, r in fts.execute(
            "SELECT cid, bm25(f, 0, 8.0, 1.0) FROM f WHERE f MATCH ?", (fts_query(question),))}
        got = store.lexical_search(question, 1000, Filters())
        assert dict(got) == expected  # the same sections, the same float64 scores
        scores = [s for _, s in got]
        assert scores == sorted(scores, reverse=True)
    reopened = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")  # statistics read back from the file, not counted
    question = "household income students"
    assert reopened.lexical_search(question, 50, Filters()) == store.lexical_search(question, 50, Filters())


def test_filters_are_exact_however_many_sections_they_exclude(tmp_path: Path) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    for d in range(30):  # 30 public documents that match better than the one the chat may also see
        _write(store, f"public{d}", [_chunk(f"public{d}", 0, "Household rules", [], "household household income")],
               groups=["supervisors"])
    _write(store, "mine", [_chunk("mine", 0, "Other", [], "household income")], groups=["navigators"])
    hits = store.lexical_search("household", 3, Filters.of(groups=["navigators"]))
    assert [cid for cid, _ in hits] == ["mine::0"]  # layout 1 fetched 8x the limit, then filtered: none found
    assert len(store.lexical_search("household", 3, Filters())) == 3


def test_top_rows_best_first_ties_in_row_order() -> None:
    scores = np.array([1.0, 3.0, 2.0, 3.0, 0.5, 3.0])
    allowed = np.array([True, True, True, True, True, False])
    assert top_rows(scores, allowed, 3).tolist() == [1, 3, 2]
    assert top_rows(scores, allowed, 10).tolist() == [1, 3, 2, 0, 4]
    assert top_rows(scores, np.zeros(6, dtype=bool), 3).tolist() == []


@pytest.mark.parametrize("question", ["naive cafe", "CAFE 273", "ABLE-BODIED adults", "273.7(a)"])
def test_query_words_are_tokenized_as_fts5_does(tmp_path: Path, question: str) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    docs = {"d": [_chunk("d", 0, "Élan naïve café", ["273"], "able bodied adults 7 a")]}
    _write(store, "d", docs["d"])
    expected = _fts5(docs).execute("SELECT -bm25(f, 0, 8.0, 1.0) FROM f WHERE f MATCH ?",
                                   (fts_query(question),)).fetchall()
    assert [s for _, s in store.lexical_search(question, 5, Filters())] == [s for (s,) in expected]
    assert expected


def test_the_group_filter_costs_nothing_while_no_document_is_restricted(tmp_path: Path) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    _write(store, "a", [_chunk("a", 0, "Household", [], "household income")])
    chat = Filters.of(groups=["navigators"])  # every chat question carries its chat's groups
    assert store._mask(chat) is None  # the unfiltered path: no mask applied to any score
    _write(store, "b", [_chunk("b", 0, "Household", [], "household rules")], groups=["supervisors"])
    mask = store._mask(chat)
    assert mask is not None and mask.tolist() == [True, False]
    assert [c for c, _ in store.lexical_search("household", 5, chat)] == ["a::0"]


def test_sections_load_in_row_order_whatever_the_document_order(tmp_path: Path) -> None:
    store = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    _write(store, "a", [_chunk("a", 0, "Household", [], "household income"), _chunk("a", 1, "Other", [], "income")])
    _write(store, "b", [_chunk("b", 0, "Household", [], "household household rules")])
    before = store.lexical_search("household income", 5, Filters()), store.section_vectors()[0]
    store._db.execute("PRAGMA foreign_keys=OFF")  # document a now sorts after b: its sections' rows do not
    store._db.execute("UPDATE documents SET id = 100 WHERE doc_id = 'a'")
    store._db.execute("UPDATE section_vectors SET doc = 100 WHERE doc = 1")
    reopened = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    assert (reopened.lexical_search("household income", 5, Filters()), reopened.section_vectors()[0]) == before
    assert before[1] == ["a::0", "a::1", "b::0"]
