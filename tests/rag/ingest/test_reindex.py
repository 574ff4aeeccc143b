"""`navibot reindex`: every stored chunk re-embedded with another embedder into a new store, without the sources;
SQLite and MongoDB (the mongomock facade); resumable after a kill."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.cli.main import main
from bot.config.settings import Settings
from bot.wiring.runtime import build_core
from rag.ingest.reindex import reindex
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.search.embedding import EmbeddingUnavailable
from rag.search.sentences import chunk_sentences
from rag.search.sqlite_store import SQLiteKnowledgeStore
from rag.search.store import EmbeddingMismatch, Filters
from tests.fakes.fake_models import hashed_vector
from tests.fakes.fake_mongo import FakeDatabase
from tests.fakes.fake_openai import FakeOpenAI

KEY = "sk-reindex-do-not-log"


class HashEmbedder:
    """A deterministic stand-in for a new embedding model (bag-of-words vectors); counts the texts it embeds."""

    def __init__(self, dim: int = 64, fail_after: int | None = None) -> None:
        self._dim = dim
        self.texts = 0
        self.calls = 0
        self.fail_after = fail_after

    @property
    def name(self) -> str:
        return f"test/hash-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise EmbeddingUnavailable("test model down")
        self.texts += len(texts)
        vectors = np.asarray([hashed_vector(t, self._dim) for t in texts], dtype=np.float32).reshape(-1, self._dim)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-9)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_documents(texts)


@pytest.fixture
def source(demo_store_file: Path, tmp_path: Path) -> Iterator[SQLiteKnowledgeStore]:
    store = SQLiteKnowledgeStore(shutil.copy(demo_store_file, tmp_path / "old.sqlite3"))
    yield store
    store.close()


def mongo_store() -> MongoKnowledgeStore:
    return MongoKnowledgeStore(MongoConnection(AsyncBridge(), FakeDatabase()))


def test_every_chunk_is_re_embedded_into_a_new_sqlite_store(source: SQLiteKnowledgeStore, tmp_path: Path) -> None:
    embedder = HashEmbedder()
    target = SQLiteKnowledgeStore(tmp_path / "new.sqlite3")
    seen: list[tuple[int, int]] = []
    try:
        summary = reindex(source, target, embedder, lambda done, total: seen.append((done, total)))
        docs = source.documents()
        assert summary.reindexed == len(docs) == summary.documents and summary.problems == []
        assert seen[-1] == (len(docs), len(docs)) and len(seen) == len(docs)
        assert target.documents() == docs and target.document_hashes() == source.document_hashes()
        assert target.counts() == source.counts()
        chunk_ids = [f"{d.doc_id}::{n}" for d in docs for n in range(d.chunk_count)]
        assert target.get_chunks(chunk_ids) == source.get_chunks(chunk_ids)  # text, paragraphs, tags, groups
        chunks = source.get_chunks(chunk_ids)
        sentences = sum(len(chunk_sentences(c)) for c in chunks)
        assert summary.chunks == len(chunks) and summary.sentences == sentences
        assert embedder.texts == len(chunks) + sentences
        # the new vectors are the new model's: a query embedded by it finds the section it names
        target.check_embedder(embedder.name, embedder.dim)
        with pytest.raises(EmbeddingMismatch):
            target.check_embedder("wordllama/l2_supercat-256", 256)
        question = chunks[3].index_text
        [(best, _)] = target.vector_search(embedder.embed_query(question), 1, Filters())
        assert best == chunks[3].chunk_id
    finally:
        target.close()


def test_a_killed_run_resumes_where_it_stopped(source: SQLiteKnowledgeStore, tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    target = SQLiteKnowledgeStore(path)
    down = HashEmbedder(fail_after=6)  # three documents (two calls each), then the model is down
    with pytest.raises(EmbeddingUnavailable):
        reindex(source, target, down)
    assert len(target.documents()) == 3

    def killed(done: int, total: int) -> None:
        if done == 5:
            raise KeyboardInterrupt  # Ctrl-C (or a kill) between two documents

    with pytest.raises(KeyboardInterrupt):
        reindex(source, target, HashEmbedder(), killed)
    target.close()
    target = SQLiteKnowledgeStore(path)  # opened again, as a new process would
    try:
        again = HashEmbedder()
        summary = reindex(source, target, again)
        total = len(source.documents())
        assert summary.skipped == 5 and summary.reindexed == total - 5
        assert target.document_hashes() == source.document_hashes()
        assert again.calls == 2 * (total - 5)
    finally:
        target.close()


def test_sqlite_to_mongodb_and_back(source: SQLiteKnowledgeStore, tmp_path: Path) -> None:
    embedder = HashEmbedder()
    mongo = mongo_store()
    back = SQLiteKnowledgeStore(tmp_path / "back.sqlite3")
    try:
        assert reindex(source, mongo, embedder).reindexed == len(source.documents())
        assert mongo.documents() == source.documents() and mongo.counts() == source.counts()
        summary = reindex(mongo, back, HashEmbedder(32))
        assert summary.reindexed == len(source.documents()) and summary.problems == []
        ids = [f"{d.doc_id}::{n}" for d in source.documents() for n in range(d.chunk_count)]
        assert back.get_chunks(ids) == source.get_chunks(ids)
        assert reindex(mongo, back, HashEmbedder(32)).skipped == len(source.documents())
    finally:
        mongo.close()
        back.close()


def test_navibot_reindex_with_an_openai_compatible_embedder(demo_store_file: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    old = Path(shutil.copy(demo_store_file, tmp_path / "old.sqlite3"))
    new = tmp_path / "new.sqlite3"
    with FakeOpenAI("ollama") as server:
        monkeypatch.setenv("NAVIBOT_STORE_FILE", str(old))
        monkeypatch.setenv("NAVIBOT_EMBEDDER", "openai")
        monkeypatch.setenv("NAVIBOT_OPENAI_BASE_URLS", f"{server.url}/v1")
        monkeypatch.setenv("NAVIBOT_OPENAI_EMBED_MODEL", "nomic-embed-text")
        monkeypatch.setenv("NAVIBOT_OPENAI_EMBED_DIM", "768")
        monkeypatch.setenv("NAVIBOT_OPENAI_EMBED_SEND_DIMENSIONS", "false")
        assert main(["reindex", "--to", str(new)]) == 0
        out = capsys.readouterr().out
        assert f"-> {new} (openai/nomic-embed-text-768)" in out and "0 failed" in out
        assert f"next: set NAVIBOT_STORE_FILE={new}" in out
        assert server.paths() and set(server.paths()) == {"/v1/embeddings"}
        # the bot opens the new store with the new embedder, and searches it by vector
        monkeypatch.setenv("NAVIBOT_STORE_FILE", str(new))
        core = build_core(Settings())
        try:
            hits = core.retriever.search("Can college students get SNAP?")
            assert hits[0].vector_rank is not None and "student" in hits[0].chunk.text.lower()
        finally:
            core.close()
        # the old store is untouched, and opening it with the new embedder is still refused
        with pytest.raises(EmbeddingMismatch):
            build_core(Settings(), old)
        # a second run has nothing to do; the same file as source and target is refused
        server.calls.clear()
        assert main(["reindex", "--from", str(old), "--to", str(new)]) == 0
        assert server.calls == [] and "0 re-embedded" in capsys.readouterr().out
        assert main(["reindex", "--from", str(new), "--to", str(new)]) == 2
        assert "the target must be another store" in capsys.readouterr().err
        # the model down midway: one line, and the command says to run it again
        server.status = 503
        assert main(["reindex", "--from", str(old), "--to", str(tmp_path / "third.sqlite3")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "run the same command again" in err and "HTTP 503" in err


def test_navibot_reindex_into_another_mongodb_database(demo_store_file: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """--to-database: the same NAVIBOT_MONGODB_URI, another database (the mongomock facade stands for the server)."""
    databases: dict[str, FakeDatabase] = {}

    def open_connection(cls: type[MongoConnection], config: Any) -> MongoConnection:
        return cls(AsyncBridge(), databases.setdefault(config.database, FakeDatabase()), host="atlas")

    monkeypatch.setattr(MongoConnection, "open", classmethod(open_connection))
    monkeypatch.setenv("NAVIBOT_MONGODB_URI", "mongodb+srv://navi:mongo-pass-do-not-print@cluster0.example.net/")
    old = Path(shutil.copy(demo_store_file, tmp_path / "old.sqlite3"))
    assert main(["reindex", "--from", str(old), "--to-database", "navibot_new"]) == 0
    out = capsys.readouterr().out
    assert "-> MongoDB cluster0.example.net/navibot_new" in out and "mongo-pass-do-not-print" not in out
    assert "next: NAVIBOT_MONGODB_DATABASE=navibot_new navibot db init" in out
    assert set(databases) == {"navibot_new"}
    store = MongoKnowledgeStore(MongoConnection(AsyncBridge(), databases["navibot_new"]))
    source = SQLiteKnowledgeStore(old)
    try:
        assert store.documents() == source.documents() and store.counts() == source.counts()
    finally:
        store.close()
        source.close()
    assert main(["reindex", "--from-database", "navibot_new", "--to-database", "navibot_new"]) == 2
    assert "the target must be another store" in capsys.readouterr().err
