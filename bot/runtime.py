"""Wires the retrieval core from settings: one place that decides which store and embedder are used."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.settings import Settings
from rag.chunking import Chunker
from rag.embedding import Embedder, WordLlamaEmbedder
from rag.ingest import Ingestor
from rag.retrieve import Retriever
from rag.sqlite_store import SQLiteKnowledgeStore
from rag.store import KnowledgeStore


@dataclass(slots=True)
class Core:
    settings: Settings
    store: KnowledgeStore
    embedder: Embedder
    ingestor: Ingestor
    retriever: Retriever

    def close(self) -> None:
        self.store.close()


def build_core(settings: Settings, store_path: Path | None = None) -> Core:
    store = SQLiteKnowledgeStore(store_path or settings.store_path)
    embedder = WordLlamaEmbedder()
    return Core(
        settings=settings,
        store=store,
        embedder=embedder,
        ingestor=Ingestor(store, embedder, Chunker(settings.chunk_max_words)),
        retriever=Retriever(store, embedder, candidates=settings.candidates),
    )
