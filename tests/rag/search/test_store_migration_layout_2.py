"""A store of layout 2 (each sentence's head stored with it, paragraph ids and heading paths in full, 8-byte
postings) is rebuilt into layout 3 on first open, into the very rows a fresh layout-3 store holds: the same search
results, nothing embedded again."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rag.documents import Block, SourceDocument
from rag.ingest.chunking import Chunker
from rag.search.section_index import Posting
from rag.search.sentence_blocks import Candidates, StoredBlock
from rag.search.sentences import chunk_sentences
from rag.search.sqlite_store import SCHEMA_VERSION, SQLiteKnowledgeStore, full_heading
from rag.search.store import ChunkVectors, Filters

LAYOUT_2_TABLES = """
CREATE TABLE subchunks (id INTEGER PRIMARY KEY, sub_id TEXT NOT NULL UNIQUE, chunk_id TEXT NOT NULL
    REFERENCES chunks(chunk_id) ON DELETE CASCADE, ordinal INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL,
    heading_path TEXT NOT NULL, page INTEGER);
CREATE INDEX subchunks_chunk ON subchunks(chunk_id);
CREATE TABLE section_postings (term TEXT NOT NULL, doc INTEGER NOT NULL, rows BLOB NOT NULL, head BLOB NOT NULL,
    body BLOB NOT NULL, PRIMARY KEY (term, doc)) WITHOUT ROWID;
CREATE INDEX section_postings_doc ON section_postings(doc);
CREATE TABLE sentence_blocks (chunk INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE, subs TEXT NOT NULL,
    meta BLOB NOT NULL, tokens BLOB NOT NULL, vectors BLOB NOT NULL, scales BLOB NOT NULL,
    paragraph_norms BLOB NOT NULL);
"""

DOCS = [
    SourceDocument(doc_id="snap", title="SNAP rules", tags=["snap"], blocks=[
        Block("heading", "Students", 1), Block("paragraph", "College students may get SNAP. They must work 20 hours."),
        Block("heading", "Exemptions", 2), Block("paragraph", "Students caring for a child under 6 are exempt."),
        Block("paragraph", "So are students in work study. Ask the school."),
        Block("heading", "Vehicles", 1), Block("paragraph", "One car is not counted as a resource.")]),
    SourceDocument(doc_id="liheap", title="Heating help", groups=["supervisors"], blocks=[
        Block("paragraph", "Heating bills can be paid in a crisis. Apply at the county office.")]),
]
QUESTIONS = ["can a college student get snap", "heating crisis county", "is my car a resource", "child under 6"]


def _build(path: Path) -> None:
    rng = np.random.default_rng(2)
    store = SQLiteKnowledgeStore(path)
    store.check_embedder("test-model", 8)
    for doc in DOCS:
        chunks = Chunker().chunk(doc)
        n = sum(len(chunk_sentences(c)) for c in chunks)
        store.replace_document(doc, chunks, ChunkVectors(rng.normal(size=(len(chunks), 8)).astype(np.float32),
                                                         rng.normal(size=(n, 8)).astype(np.float32)))
    store.close()


def _as_layout_2(path: Path) -> None:
    """Rewrite the three tables layout 3 changed as layout 2 had them."""
    db = sqlite3.connect(path)
    chunk_of = {row: (cid, json.loads(heading_path))
                for row, cid, heading_path in db.execute("SELECT id, chunk_id, heading_path FROM chunks")}
    subs = db.execute("SELECT chunk, sub_id, ordinal, kind, text, heading, page FROM subchunks ORDER BY id").fetchall()
    blocks = db.execute("SELECT chunk, subs, meta, tokens, vectors, scales, paragraph_norms, shared_heads"
                        " FROM sentence_blocks ORDER BY chunk").fetchall()
    postings = db.execute("SELECT term, doc, first, rows, counts FROM section_postings").fetchall()
    db.executescript("DROP TABLE subchunks; DROP TABLE sentence_blocks; DROP TABLE section_postings;" + LAYOUT_2_TABLES)
    db.executemany("INSERT INTO subchunks(sub_id, chunk_id, ordinal, kind, text, heading_path, page) VALUES"
                   " (?,?,?,?,?,?,?)", [(sub_id or f"{chunk_of[c][0]}.{o}", chunk_of[c][0], o, kind, text,
                                         json.dumps(full_heading(chunk_of[c][1], heading)), page)
                                        for c, sub_id, o, kind, text, heading, page in subs])
    for chunk, *columns in blocks:
        block = StoredBlock(*columns)
        joined = Candidates.join([block], None, [chunk_of[chunk][0]])
        tokens = joined.tokens.astype(np.uint16 if joined.tokens.max(initial=0) <= 0xFFFF else np.int32)
        db.execute("INSERT INTO sentence_blocks VALUES (?,?,?,?,?,?,?)", (chunk, json.dumps(joined.subs), block.meta,
                   tokens.tobytes(), block.vectors, block.scales, block.paragraph_norms))
    for term, doc, *stored in postings:
        p = Posting.join([(int(stored[0]), bytes(stored[1]), bytes(stored[2]))])
        db.execute("INSERT INTO section_postings VALUES (?,?,?,?,?)", (term, doc, p.rows.astype(np.int32).tobytes(),
                   p.head.astype(np.uint16).tobytes(), p.body.astype(np.uint16).tobytes()))
    db.execute("PRAGMA user_version=2")
    db.commit()
    db.close()


def _tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(path)
    try:
        return {t: db.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in (
            "chunks", "subchunks", "sentence_blocks", "section_postings", "section_vectors", "section_codes",
            "vocabulary")}
    finally:
        db.close()


def test_a_layout_2_store_is_rebuilt_into_the_rows_of_a_fresh_store(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    fresh, old = tmp_path / "fresh.sqlite3", tmp_path / "old.sqlite3"
    _build(fresh)
    shutil.copy(fresh, old)
    _as_layout_2(old)
    assert sqlite3.connect(old).execute("SELECT COUNT(*) FROM subchunks WHERE heading_path LIKE '[%'").fetchone()[0]
    migrated = SQLiteKnowledgeStore(old)
    assert f"has layout 2; rebuilding it in layout {SCHEMA_VERSION}" in capsys.readouterr().err
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert _tables(old) == _tables(fresh)  # every row as a fresh layout-3 store writes it: vectors included
    expected = SQLiteKnowledgeStore(fresh)
    ids = [c.chunk_id for doc in DOCS for c in Chunker().chunk(doc)]
    assert migrated.get_chunks(ids) == expected.get_chunks(ids) and len(ids) == 2
    query = np.random.default_rng(9).normal(size=8).astype(np.float32)
    for question in QUESTIONS:
        for filters in (Filters(), Filters.of(groups=["supervisors"])):
            assert migrated.lexical_search(question, 5, filters) == expected.lexical_search(question, 5, filters)
        assert migrated.sentence_evidence(question, query, ids) == expected.sentence_evidence(question, query, ids)
    assert migrated.vector_search(query, 5, Filters()) == expected.vector_search(query, 5, Filters())
    migrated.close()
    expected.close()
