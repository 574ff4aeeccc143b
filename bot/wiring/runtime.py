"""Wires the parts from settings: one place that decides which store, embedder, rewriter and answerer are used."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bot.chat.access import AccessMap
from bot.chat.chat_commands import HELP, parse_command
from bot.chat.handler import MAX_REASON_CHARS, TurnHandler, error_kind
from bot.chat.starters import starter_questions
from bot.config.settings import Settings
from bot.conversations.store import ConversationStore
from bot.observability.observers import Observers
from bot.observability.turn_log import TurnLog
from bot.port import Chat, Reply, StoredAnswer, Turn, TurnProgress, Vote
from bot.wiring.choose_models import check_store_embedder, make_answerer, make_embedder, make_reranker, make_rewriter
from bot.wiring.open_stores import open_conversation_store, open_knowledge_store
from bot.wiring.progress_bridge import ThreadedProgress
from rag.answer.moods import MoodBook
from rag.answer.progress import searching
from rag.answer.rewrite import CachedTitles
from rag.engine import Engine
from rag.ingest.chunking import Chunker
from rag.ingest.ingestor import Ingestor
from rag.redaction import redact, use_case_patterns
from rag.search.embedding import Embedder
from rag.search.glossary import Glossary
from rag.search.retrieve import Retriever
from rag.search.store import KnowledgeStore, is_public
from rag.search.word_links import load_word_links


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
    use_case_patterns(settings.redact_patterns)  # NAVIBOT_REDACT_PATTERNS: the store, the logs and outbound calls
    glossary = Glossary(settings.glossary_file)  # read first: a broken glossary file is reported before the store opens
    word_links = load_word_links(settings.word_links_file)  # likewise
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
        retriever=Retriever(store, embedder, candidates=settings.candidates, glossary=glossary,
                            word_links=word_links),
    )


def build_engine(core: Core) -> Engine:
    # Only titles every chat may see: the rewriter's topic test must not reveal that a restricted title exists.
    titles = CachedTitles(lambda: [d.title for d in core.store.documents() if is_public(d.groups)])
    settings = core.settings
    answerer = make_answerer(settings, core.embedder, core.retriever.glossary)
    return Engine(core.retriever, make_rewriter(settings, titles), answerer,
                  top_k=settings.top_k, reranker=make_reranker(settings),
                  rerank_candidates=settings.rerank_candidates, turn_deadline_seconds=settings.turn_deadline_seconds,
                  redact=redact if settings.redact_outbound else None,
                  compute_slots=settings.compute_slots if settings.store == "sqlite" else None)


log = logging.getLogger(__name__)

TURN_THREADS = 16  # answers worked out at once per process; more wait their turn (they mostly wait on models)
# ... of which NAVIBOT_COMPUTE_SLOTS at once in their CPU stages (rag/answer/compute_gate.py): the GIL stays free
# enough for the event loop to acknowledge new requests while a burst is being answered.


FIRST_SIGN_WAIT_SECONDS = 0.3  # the most a question waits for its first progress report to reach Slack/Teams


@dataclass(slots=True)
class Bot:
    """The core plus the conversation layer: what `navibot ask/chat` and the chat adapters run on. The adapters
    see it only as a `bot.port.ChatBot` (the methods from `handle` to `known_mood`)."""

    core: Core
    engine: Engine
    conversations: ConversationStore
    moods: MoodBook
    handler: TurnHandler
    observers: Observers  # metrics and the per-turn log line watch every turn (bot/observability/observers.py)
    turn_threads: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(TURN_THREADS, thread_name_prefix="navibot-turn"))

    async def handle(self, turn: Turn, mood_override: str | None = None,
                     progress: TurnProgress | None = None) -> Reply:
        """The turn handler for the chat adapters, in the bot's own threads. An answer may wait seconds on model
        calls; on asyncio's default pool (CPUs + 4 threads) a few of them would hold up the quick store calls of
        button clicks, which Slack and Teams need answered within seconds. The context is copied, as
        `asyncio.to_thread` does (a turn's time budget is a context variable). Progress reports from the turn's
        thread reach the adapter in order, all of them before the reply (bot/wiring/progress_bridge.py)."""
        loop = asyncio.get_running_loop()
        bridge = ThreadedProgress(loop, progress) if progress is not None else None
        if bridge is not None and turn.text.strip() and not self.is_chat_command(turn.text):
            # The first sign of work at once: before the turn waits for a turn thread and competes for the CPU.
            await bridge.first(searching(turn.text), FIRST_SIGN_WAIT_SECONDS)
        work = functools.partial(contextvars.copy_context().run, self.handler.handle, turn, mood_override, bridge)
        try:
            return await loop.run_in_executor(self.turn_threads, work)
        finally:
            if bridge is not None:
                await bridge.close()

    async def suggested_questions(self) -> list[str]:
        configured = self.core.settings.suggested_questions
        if configured:
            return starter_questions(configured, [])
        return starter_questions([], await asyncio.to_thread(self.core.store.documents))

    async def reply_posted(self, turn: Turn) -> None:
        """Called by a chat adapter right after the reply to `turn` is posted: its event is answered for good, so a
        redelivery is dropped; until then a redelivery after a crash is answered (bot/chat/handler.py)."""
        await asyncio.to_thread(self.handler.reply_posted, turn)

    async def reply_not_posted(self, turn: Turn) -> None:
        """Called by a chat adapter when the reply to `turn` could not be posted: a redelivery is answered."""
        await asyncio.to_thread(self.handler.reply_not_posted, turn)

    @property
    def max_reason_chars(self) -> int:
        return MAX_REASON_CHARS

    async def record_feedback(self, vote: Vote) -> None:
        """A quick store call, on asyncio's pool (not the turn threads, which may all be waiting on models)."""
        await asyncio.to_thread(self.handler.record_feedback, vote.answer_id, vote.user, vote.helpful, vote.reason,
                                chat=vote.chat, click=vote.click)

    async def stored_answer(self, answer_id: str, chat: Chat) -> StoredAnswer | None:
        return await asyncio.to_thread(self.handler.stored_answer, answer_id, chat)

    def report_error(self, kind: str | None, platform: str, exc: BaseException | None = None) -> None:
        if kind is None:
            kind = error_kind(exc) if exc is not None else "internal"
        self.observers.error(kind, platform)

    def help_text(self) -> str:
        return HELP

    def is_chat_command(self, text: str) -> bool:
        return parse_command(text) is not None

    def known_mood(self, name: str | None) -> str | None:
        mood = self.moods.get(name)
        return mood.name if mood is not None else None

    def warn_if_empty(self, where: str) -> None:
        """Said at start-up by the chat servers: with no knowledge, every question would get the no-answer."""
        if self.core.store.counts()["chunks"] == 0:
            log.warning("the knowledge store is empty (%s): every question will get 'I couldn't find this'. "
                        "Run `navibot ingest PATH` (or `navibot ingest --demo`) first.", where)

    def close(self) -> None:
        self.turn_threads.shutdown(wait=True)  # turns under way finish and save before the stores close
        self.conversations.close()
        self.core.close()


def build_bot(settings: Settings, store_path: Path | None = None, conversations_path: Path | None = None) -> Bot:
    moods = MoodBook(settings.moods_file)  # read first: a broken moods file or access map is reported before
    access = AccessMap(settings.access_groups)  # anything opens
    log.info(access.describe())  # at INFO: the servers' start-up log, not `navibot ask`
    for warning in access.check():
        log.warning(warning)
    core = build_core(settings, store_path)
    try:
        conversations = open_conversation_store(settings, conversations_path)
    except RuntimeError:
        core.close()
        raise
    engine = build_engine(core)
    observers = Observers([TurnLog(settings)])  # the per-turn log line; `navibot serve` adds Metrics
    handler = TurnHandler(engine, conversations, moods, settings.history_turns, settings.max_question_chars,
                          observers=observers, groups_for=access.groups_for)
    return Bot(core, engine, conversations, moods, handler, observers)
