"""A store of layout 1 (one row per sentence, FTS5 index, float32 everywhere) is rebuilt into the current layout on
first open: the same documents, chunks and vectors, a clear message, and the old file untouched if it fails."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rag.documents import Block, Chunk, SourceDocument
from rag.ingest.chunking import Chunker
from rag.search import store_migration
from rag.search.bm25 import stemmed
from rag.search.sentences import chunk_sentences
from rag.search.sqlite_store import SCHEMA_VERSION, SQLiteKnowledgeStore
from rag.search.store import ChunkVectors, EmbeddingMismatch, Filters

# The tables layout 1 had (as navibot wrote them before issue 21).
LAYOUT_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (doc_id TEXT PRIMARY KEY, title TEXT NOT NULL, url TEXT, source_path TEXT,
    content_hash TEXT NOT NULL, updated TEXT, tags TEXT NOT NULL DEFAULT '[]', groups TEXT NOT NULL DEFAULT '["all"]',
    metadata TEXT NOT NULL DEFAULT '{}', ingested_at TEXT NOT NULL);
CREATE TABLE chunks (id INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, ordinal INTEGER
    NOT NULL, heading_path TEXT NOT NULL, text TEXT NOT NULL, page INTEGER, embedding BLOB NOT NULL);
CREATE TABLE subchunks (id INTEGER PRIMARY KEY, sub_id TEXT NOT NULL UNIQUE, chunk_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, heading_path TEXT NOT NULL, page INTEGER);
CREATE VIRTUAL TABLE chunks_fts USING fts5(head, body, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE sentences (id INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL, sub_id TEXT NOT NULL, head_terms TEXT NOT NULL,
    body_terms TEXT NOT NULL, length INTEGER NOT NULL, embedding BLOB NOT NULL);
CREATE TABLE sentence_df (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
PRAGMA user_version=1;
"""

DOCS = [
    SourceDocument(doc_id="snap", title="SNAP rules", tags=["snap"], blocks=[
        Block("heading", "Students", 1), Block("paragraph", "College students may get SNAP. They must work 20 hours."),
        Block("heading", "Vehicles", 1), Block("paragraph", "One car is not counted as a resource.")]),
    SourceDocument(doc_id="liheap", title="Heating help", groups=["supervisors"], blocks=[
        Block("paragraph", "Heating bills can be paid in a crisis. Apply at the county office.")]),
]


def _vector(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=8).astype(np.float32)
    return v / np.linalg.norm(v)


def _layout_1(path: Path) -> dict[str, np.ndarray]:
    """A layout-1 file of DOCS, written as navibot wrote it then; returns each chunk's vector."""
    rng = np.random.default_rng(1)
    db = sqlite3.connect(path)
    db.executescript(LAYOUT_1)
    db.execute("INSERT INTO meta VALUES ('embedder', ?)", (json.dumps({"name": "test-model", "dim": 8}),))
    vectors = {}
    for doc in DOCS:
        db.execute("INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (doc.doc_id, doc.title, doc.url, None, doc.content_hash, None, json.dumps(doc.tags),
                    json.dumps(doc.groups), "{}", "2026-01-01T00:00:00+00:00"))
        for chunk in Chunker().chunk(doc):
            vectors[chunk.chunk_id] = _vector(rng)
            row = db.execute("INSERT INTO chunks(chunk_id, doc_id, ordinal, heading_path, text, page, embedding)"
                             " VALUES (?,?,?,?,?,?,?)", (chunk.chunk_id, doc.doc_id, chunk.ordinal,
                                                         json.dumps(chunk.heading_path), chunk.text, None,
                                                         vectors[chunk.chunk_id].tobytes())).lastrowid
            db.execute("INSERT INTO chunks_fts(rowid, head, body) VALUES (?,?,?)",
                       (row, chunk.heading_text, chunk.text))
            for sub in chunk.subchunks:
                db.execute("INSERT INTO subchunks(sub_id, chunk_id, ordinal, kind, text, heading_path, page)"
                           " VALUES (?,?,?,?,?,?,?)", (sub.sub_id, sub.chunk_id, sub.ordinal, sub.kind, sub.text,
                                                        json.dumps(sub.heading_path), None))
            for sentence in chunk_sentences(chunk):
                head, body = stemmed(sentence.head), stemmed(sentence.text)
                db.execute("INSERT INTO sentences(chunk_id, sub_id, head_terms, body_terms, length, embedding)"
                           " VALUES (?,?,?,?,?,?)", (chunk.chunk_id, sentence.sub_id, " ".join(head), " ".join(body),
                                                      len(head) + len(body), _vector(rng).tobytes()))
    db.commit()
    db.close()
    return vectors


def test_a_layout_1_store_is_rebuilt_on_first_open(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "knowledge.sqlite3"
    vectors = _layout_1(path)
    store = SQLiteKnowledgeStore(path)
    assert f"has layout 1; rebuilding it in layout {SCHEMA_VERSION}" in capsys.readouterr().err
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert not list(tmp_path.glob("*.migrating*"))
    assert store.counts() == {"documents": 2, "chunks": len(vectors),
                              "subchunks": sum(len(c.subchunks) for doc in DOCS for c in Chunker().chunk(doc))}
    expected = {c.chunk_id: c for doc in DOCS for c in Chunker().chunk(doc)}
    for chunk in store.get_chunks(list(expected)):
        assert (chunk.text, chunk.heading_path, [s.text for s in chunk.subchunks]) == (
            expected[chunk.chunk_id].text, expected[chunk.chunk_id].heading_path,
            [s.text for s in expected[chunk.chunk_id].subchunks])
    for cid, vector in vectors.items():  # the stored vectors themselves, not embedded again
        hits = store.vector_search(vector, 1, Filters())
        assert hits[0][0] == cid and hits[0][1] == pytest.approx(1.0, abs=1e-6)
    assert [c for c, _ in store.lexical_search("heating crisis", 5, Filters.of(groups=["navigators"]))] == []
    assert [c for c, _ in store.lexical_search("heating crisis", 5, Filters.of(groups=["supervisors"]))] == [
        "liheap::0"]
    sentences = [stemmed(s.index_text) for c in expected.values() for s in chunk_sentences(c)]
    assert store.sentence_df()["student"] == sum("student" in stems for stems in sentences) == 2
    with pytest.raises(EmbeddingMismatch):  # the model the old file was built with is remembered
        store.check_embedder("another-model", 8)
    store.close()
    SQLiteKnowledgeStore(path).close()  # opened again: already the current layout, no second migration
    assert "rebuilding" not in capsys.readouterr().err


def test_a_failed_migration_leaves_the_old_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "knowledge.sqlite3"
    _layout_1(path)
    before = path.read_bytes()
    calls: list[str] = []

    def failing(self: SQLiteKnowledgeStore, row: tuple[object, ...], chunks: list[Chunk],
                vectors: ChunkVectors) -> None:
        calls.append(str(row[0]))
        if len(calls) == 2:
            raise sqlite3.OperationalError("disk I/O error")
        original(self, row, chunks, vectors)

    original = SQLiteKnowledgeStore.write_document
    monkeypatch.setattr(SQLiteKnowledgeStore, "write_document", failing)
    with pytest.raises(RuntimeError, match=r"cannot migrate the knowledge store .*ingest the documents again"):
        SQLiteKnowledgeStore(path)
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("*.migrating*"))
    monkeypatch.setattr(SQLiteKnowledgeStore, "write_document", original)
    assert SQLiteKnowledgeStore(path).counts()["documents"] == 2  # the next open migrates it


def test_store_migration_refuses_a_layout_it_does_not_know(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="cannot migrate"):
        store_migration.migrate(tmp_path / "x.sqlite3", 7)
