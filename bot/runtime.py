"""Wires the parts from settings: one place that decides which store, embedder, rewriter and answerer are used."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.conversations import ConversationStore
from bot.handler import TurnHandler
from bot.providers import check_store_embedder, make_answerer, make_embedder, make_reranker, make_rewriter
from bot.settings import Settings
from bot.stores import open_conversation_store, open_knowledge_store
from rag.chunking import Chunker
from rag.embedding import Embedder
from rag.engine import Engine
from rag.ingest import Ingestor
from rag.moods import MoodBook
from rag.retrieve import Retriever
from rag.rewrite import CachedTitles
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
    store = open_knowledge_store(settings, store_path)
    try:
        embedder = make_embedder(settings)
        check_store_embedder(store, embedder)  # a store built with another model is refused before any query
    except BaseException:
        store.close()
        raise
    return Core(
        settings=settings,
        store=store,
        embedder=embedder,
        ingestor=Ingestor(store, embedder, Chunker(settings.chunk_max_words)),
        retriever=Retriever(store, embedder, candidates=settings.candidates),
    )


def build_engine(core: Core) -> Engine:
    titles = CachedTitles(lambda: [d.title for d in core.store.documents()])
    settings = core.settings
    return Engine(core.retriever, make_rewriter(settings, titles), make_answerer(settings, core.embedder),
                  top_k=settings.top_k, min_coverage=settings.min_coverage, reranker=make_reranker(settings),
                  rerank_candidates=settings.rerank_candidates, turn_deadline_seconds=settings.turn_deadline_seconds)


@dataclass(slots=True)
class Bot:
    """The core plus the conversation layer: what `navibot ask/chat` and the chat adapters run on."""

    core: Core
    engine: Engine
    conversations: ConversationStore
    moods: MoodBook
    handler: TurnHandler

    def close(self) -> None:
        self.conversations.close()
        self.core.close()


def build_bot(settings: Settings, store_path: Path | None = None, conversations_path: Path | None = None) -> Bot:
    moods = MoodBook(settings.moods_file)  # read first: a broken moods file is reported before anything opens
    core = build_core(settings, store_path)
    try:
        conversations = open_conversation_store(settings, conversations_path)
    except RuntimeError:
        core.close()
        raise
    engine = build_engine(core)
    handler = TurnHandler(engine, conversations, moods, settings.history_turns, settings.max_question_chars)
    return Bot(core, engine, conversations, moods, handler)
