"""A store that fails is named for what it is: damage in the knowledge store is reported as the knowledge store
(the reply, the metrics, /healthz), and a write refused because the disk is full says so instead of SQLite's
'cannot rollback - no transaction is active' (a question, and `navibot ingest`)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from bot.chat.handler import is_disk_full
from bot.cli.main import demo_kb_path
from bot.config.settings import Settings
from bot.conversations.redacting import RedactingConversationStore
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import HistoryTurn
from bot.observability.metrics import Metrics
from bot.port import ReplyKind, Turn
from bot.server.health import Health
from bot.wiring.runtime import Bot, build_bot, build_core

QUESTION = "Can college students get SNAP?"


def question(event_id: str | None = None, text: str = QUESTION) -> Turn:
    return Turn("slack", "T1", "C1", "100.1", "U1", text, event_id=event_id)


def make_bot(tmp_path: Path, store: Path) -> tuple[Bot, Health, Metrics]:
    bot = build_bot(Settings(_env_file=None, data_dir=tmp_path / "data"), store_path=store)  # type: ignore[call-arg]
    health, metrics = Health(bot, cache_seconds=0), Metrics()
    bot.observers.add(health)
    bot.observers.add(metrics)
    return bot, health, metrics


def sqlite_conversations(bot: Bot) -> SQLiteConversationStore:
    store = bot.conversations
    inner = store.inner if isinstance(store, RedactingConversationStore) else store
    assert isinstance(inner, SQLiteConversationStore)
    return inner


def fill_the_disk(store: SQLiteConversationStore) -> None:
    """The file may not grow by a page (as when the disk is full) and its free pages are used up: a write that
    needs a page gets SQLITE_FULL."""
    store._db.execute("CREATE TABLE IF NOT EXISTS filler (blob BLOB)")
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.OperationalError, match="full"):  # noqa: PT012 - insert until the page cap trips
        for _ in range(10_000):
            store._db.execute("INSERT INTO filler VALUES (zeroblob(4000))")


@pytest.fixture
def damaged_store(demo_store_file: Path, tmp_path: Path) -> Path:
    """The demo knowledge store with the pages of its sentence blocks overwritten: it opens and counts its
    documents, but a search fails with 'database disk image is malformed'."""
    path = Path(shutil.copy(demo_store_file, tmp_path / "knowledge.sqlite3"))
    with closing(sqlite3.connect(path)) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name = 'sentence_blocks'")]
    assert pages, "the table read at search time is named in this fixture: rename it with the store's layout"
    with path.open("r+b") as file:
        for page in pages:
            file.seek((page - 1) * size)
            file.write(b"\xa5" * size)
    return path


@pytest.fixture
def bot_on_damaged_store(tmp_path: Path, damaged_store: Path) -> Iterator[tuple[Bot, Health, Metrics]]:
    made = make_bot(tmp_path, damaged_store)
    yield made
    made[0].close()


def test_damage_in_the_knowledge_store_is_reported_as_the_knowledge_store(
        bot_on_damaged_store: tuple[Bot, Health, Metrics], caplog: pytest.LogCaptureFixture) -> None:
    bot, health, metrics = bot_on_damaged_store
    reply = bot.handler.handle(question("Ev1"))
    assert reply.kind is ReplyKind.ERROR and reply.trace_id is not None
    assert "knowledge store" in reply.text and "conversation store" not in reply.text and reply.trace_id in reply.text
    assert 'navibot_errors_total{kind="knowledge_store",platform="slack"} 1' in metrics.render()
    assert 'navibot_errors_total{kind="store",platform="slack"} 0' in metrics.render()
    report = asyncio.run(health.report())
    assert [r.split(":")[0] for r in report.reasons] == ["knowledge store"], report.reasons
    assert reply.trace_id in report.reasons[0]
    assert "database disk image is malformed" in caplog.text  # the cause, in the log line of the trace id
    # The failed turn released its event id: Slack's retry is worked on again, not dropped as answered.
    assert bot.handler.handle(question("Ev1")).kind is ReplyKind.ERROR


def test_a_full_disk_under_the_conversation_store_says_so(tmp_path: Path, demo_store: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    bot, health, metrics = make_bot(tmp_path, demo_store)
    try:
        assert bot.handler.handle(question()).kind is ReplyKind.ANSWER
        fill_the_disk(sqlite_conversations(bot))
        reply = bot.handler.handle(question(text=f"{QUESTION} " + "My client is a student. " * 150))  # > 1 page
        assert reply.kind is ReplyKind.ERROR and "disk" in reply.text and "full" in reply.text, reply.text
        assert 'navibot_errors_total{kind="disk_full",platform="slack"} 1' in metrics.render()
        report = asyncio.run(health.report())
        assert len(report.reasons) == 1 and report.reasons[0].startswith("conversation store: its disk is full")
        assert "database or disk is full" in caplog.text and "cannot rollback" not in caplog.text
    finally:
        bot.close()


def test_a_full_disk_is_not_hidden_by_a_failed_rollback(tmp_path: Path) -> None:
    store = SQLiteConversationStore(tmp_path / "conversations.sqlite3")
    try:
        fill_the_disk(store)
        with pytest.raises(sqlite3.OperationalError, match="database or disk is full") as caught:
            store.append_turn("k", HistoryTurn("q" * 50_000, "q", "a", []), keep=6)  # in a transaction
        assert is_disk_full(caught.value)
        store._db.execute("PRAGMA max_page_count = 1000000")  # space again: the store works on
        store.append_turn("k", HistoryTurn("q", "q", "a", []), keep=6)
        assert [h.question for h in store.history("k", 6)] == ["q"]
    finally:
        store.close()


def test_ingesting_into_a_full_disk_says_the_disk_is_full(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    core = build_core(settings, tmp_path / "knowledge.sqlite3")
    try:
        pages = core.store._db.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[attr-defined]
        core.store._db.execute(f"PRAGMA max_page_count = {pages}")  # type: ignore[attr-defined]
        summary = core.ingestor.ingest_paths([demo_kb_path()])
        assert summary.failed >= 12 and summary.problems
        assert all("database or disk is full" in p for p in summary.problems), summary.problems[:2]
    finally:
        core.close()
