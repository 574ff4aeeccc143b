"""Store layout 4: each document's section vectors also as int8 codes, written with the document in the same
transaction and removed with it; a layout-3 store gets them added in place on first open (a clear message, one
transaction: a failure leaves layout 3), and searches give what they gave before."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rag.documents import Block, SourceDocument
from rag.ingest.chunking import Chunker
from rag.search import vector_scan
from rag.search.sentences import chunk_sentences
from rag.search.sqlite_store import SCHEMA_VERSION, SQLiteKnowledgeStore
from rag.search.store import ChunkVectors, Filters

DOCS = [
    SourceDocument(doc_id=f"manual-{i}", title=f"Manual {i}", tags=["snap"] if i % 2 else ["tanf"],
                   groups=["supervisors"] if i == 3 else ["all"], blocks=[
                       Block("heading", "Students", 1), Block("paragraph", f"College students may get SNAP {i}."),
                       Block("heading", "Vehicles", 1), Block("paragraph", f"One car is not counted ({i})."),
                       Block("heading", "Heating", 1), Block("paragraph", "Heating bills can be paid in a crisis.")])
    for i in range(6)
]
DIM = 16


def _build(path: Path) -> None:
    rng = np.random.default_rng(2)
    store = SQLiteKnowledgeStore(path)
    store.check_embedder("test-model", DIM)
    for doc in DOCS:
        chunks = Chunker().chunk(doc)
        n = sum(len(chunk_sentences(c)) for c in chunks)
        store.replace_document(doc, chunks, ChunkVectors(rng.normal(size=(len(chunks), DIM)).astype(np.float32),
                                                         rng.normal(size=(n, DIM)).astype(np.float32)))
    store.close()


def _as_layout_3(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("DROP TABLE section_codes")
    db.execute("PRAGMA user_version=3")
    db.commit()
    db.close()


def _codes(path: Path) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT * FROM section_codes ORDER BY doc").fetchall()
    finally:
        db.close()


def _searches(store: SQLiteKnowledgeStore) -> list[object]:
    rng = np.random.default_rng(9)
    found: list[object] = []
    for _ in range(10):
        query = rng.normal(size=DIM).astype(np.float32)
        for filters in (Filters(), Filters.of(tags=["snap"]), Filters.of(groups=["supervisors"])):
            found.append(store.vector_search(query, 4, filters))
    return found


def _full_scan(store: SQLiteKnowledgeStore, query: np.ndarray, limit: int) -> list[str]:
    ids, matrix = store.section_vectors()
    scores = matrix.astype(np.float64) @ query.astype(np.float64)
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:limit]]


def test_codes_are_written_with_each_document_and_removed_with_it(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    _build(path)
    store = SQLiteKnowledgeStore(path)
    assert len(_codes(path)) == len(DOCS)
    query = np.random.default_rng(1).normal(size=DIM).astype(np.float32)
    assert [c for c, _ in store.vector_search(query, 7, Filters())] == _full_scan(store, query, 7)
    assert store.delete_documents(["manual-0", "manual-4"]) == 2
    assert len(_codes(path)) == len(DOCS) - 2
    assert [c for c, _ in store.vector_search(query, 7, Filters())] == _full_scan(store, query, 7)
    store.close()


def test_a_layout_3_store_gets_its_codes_in_place_and_searches_the_same(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fresh, old = tmp_path / "fresh.sqlite3", tmp_path / "old.sqlite3"
    _build(fresh)
    shutil.copy(fresh, old)
    _as_layout_3(old)
    migrated = SQLiteKnowledgeStore(old)
    assert f"has layout 3; adding the int8 codes of its section vectors (layout {SCHEMA_VERSION}" in \
        capsys.readouterr().err
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    assert _codes(old) == _codes(fresh)  # the very codes a fresh store writes
    expected = SQLiteKnowledgeStore(fresh)
    assert _searches(migrated) == _searches(expected)
    migrated.close()
    expected.close()
    SQLiteKnowledgeStore(old).close()  # opened again: nothing more to do
    assert "layout 3" not in capsys.readouterr().err


def test_a_failed_code_migration_leaves_layout_3_and_is_tried_again(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "k.sqlite3"
    _build(path)
    _as_layout_3(path)
    calls: list[int] = []
    original = vector_scan.SectionCodes.of

    def failing(matrix: np.ndarray) -> vector_scan.SectionCodes:
        calls.append(len(matrix))
        if len(calls) == 3:
            raise sqlite3.OperationalError("disk I/O error")
        return original(matrix)

    monkeypatch.setattr(vector_scan.SectionCodes, "of", staticmethod(failing))
    with pytest.raises(RuntimeError, match=r"cannot migrate the knowledge store .*disk I/O error"):
        SQLiteKnowledgeStore(path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3  # never half-migrated
    assert db.execute("SELECT 1 FROM sqlite_master WHERE name='section_codes'").fetchone() is None
    db.close()
    monkeypatch.setattr(vector_scan.SectionCodes, "of", original)
    store = SQLiteKnowledgeStore(path)
    assert len(_codes(path)) == len(DOCS)
    store.close()


def test_a_document_without_codes_is_still_searched_exactly(tmp_path: Path) -> None:
    path = tmp_path / "k.sqlite3"
    _build(path)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM section_codes WHERE doc IN (SELECT id FROM documents WHERE doc_id='manual-2')")
    db.commit()
    db.close()
    store = SQLiteKnowledgeStore(path)
    for seed in range(5):
        query = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
        assert [c for c, _ in store.vector_search(query, 5, Filters())] == _full_scan(store, query, 5)
    store.close()
