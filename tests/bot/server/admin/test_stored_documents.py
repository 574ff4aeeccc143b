"""The admin page's Documents view reads each document's link and `updated` date from the knowledge store's
document list, on SQLite and on MongoDB (the mongomock facade)."""

from __future__ import annotations

from pathlib import Path

from bot.config.settings import Settings
from bot.wiring.choose_models import make_embedder
from rag.ingest.chunking import Chunker
from rag.ingest.ingestor import Ingestor
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.search.sqlite_store import SQLiteKnowledgeStore
from rag.search.store import KnowledgeStore
from tests.conftest import write
from tests.fakes.fake_mongo import FakeDatabase

PAGE = """---
title: WIC basics
url: https://www.fns.usda.gov/wic
updated: 2019-04-01
---

# WIC basics

WIC serves pregnant women, new mothers and children under five with food and nutrition advice.
"""


def _ingest(store: KnowledgeStore, folder: Path) -> None:
    embedder = make_embedder(Settings(_env_file=None))  # type: ignore[call-arg]
    Ingestor(store, embedder, Chunker(450)).ingest_paths([write(folder / "kb" / "wic.md", PAGE)])


def test_documents_carry_their_url_and_updated_date(tmp_path: Path) -> None:
    sqlite = SQLiteKnowledgeStore(tmp_path / "k.sqlite3")
    mongo = MongoKnowledgeStore(MongoConnection(AsyncBridge(), FakeDatabase()))
    try:
        for store in (sqlite, mongo):
            _ingest(store, tmp_path)
            [doc] = store.documents()
            assert (doc.title, doc.url, doc.updated) == ("WIC basics", "https://www.fns.usda.gov/wic", "2019-04-01")
    finally:
        sqlite.close()
        mongo.close()
