"""Retention of the conversation store, the same on SQLite and MongoDB (NAVIBOT_RETENTION_DAYS): history turns
and event ids older than it are deleted, and older answers no one rated lose their question text; applied when
the store opens and at most once an hour on a write. `reset` also blanks the question text of the conversation's
unrated answers."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.config.settings import Settings
from bot.conversations.mongo import HistoryOptional, MongoConversationStore
from bot.conversations.redacting import RedactingConversationStore
from bot.conversations.sqlite import SQLiteConversationStore, stamp
from bot.conversations.store import AnswerRecord, ConversationStore, HistoryTurn
from bot.wiring.open_stores import open_conversation_store
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from tests.fakes.fake_mongo import FakeDatabase

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Backend:
    kind: str
    path: Path
    db: FakeDatabase
    clock: Clock

    def open(self) -> SQLiteConversationStore | MongoConversationStore:
        if self.kind == "sqlite":
            return SQLiteConversationStore(self.path, retention_days=30, event_ttl_hours=24, clock=self.clock)
        return MongoConversationStore(MongoConnection(AsyncBridge(), self.db), history_ttl_days=30,
                                      event_ttl_hours=24, clock=self.clock)

    def backdate(self, table: str, key: str, value: str, days: float) -> None:
        """Makes the rows of `table` whose `key` is `value` `days` old."""
        moment = datetime.now(UTC) - timedelta(days=days)
        if self.kind == "sqlite":
            with closing(sqlite3.connect(self.path)) as db:
                db.execute(f"UPDATE {table} SET created = ? WHERE {key} = ?", (stamp(moment), value))
                db.commit()
            return
        created: Any = moment if table in ("history", "events") else moment.isoformat(timespec="milliseconds")
        self.db.raw(table).update_many({"_id" if key == "answer_id" else key: value}, {"$set": {"created": created}})


@pytest.fixture(params=["sqlite", "mongodb"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    return Backend(request.param, tmp_path / "conversations.sqlite3", FakeDatabase(), Clock())


@pytest.fixture
def store(backend: Backend) -> Iterator[SQLiteConversationStore | MongoConversationStore]:
    opened = backend.open()
    yield opened
    opened.close()


def answer(answer_id: str, key: str = "slack|T|C|1", question: str = "my client's SSN is [ssn], can she get SNAP?"
           ) -> AnswerRecord:
    return AnswerRecord(answer_id, key, "slack", "U1", question, "can she get SNAP?", "Yes [1].", "answer",
                        "concise", [])


def fill(store: ConversationStore) -> None:
    store.append_turn("old", HistoryTurn("old q", "old q", "old a", []), keep=6)
    store.append_turn("new", HistoryTurn("new q", "new q", "new a", []), keep=6)
    for answer_id in ("old-unrated", "old-rated", "new-unrated"):
        store.save_answer(answer(answer_id))
    store.record_feedback("old-rated", "U2", False, "wrong program")
    for event_id in ("Ev-old", "Ev-new"):
        assert store.claim_event("slack", event_id)
        store.complete_event("slack", event_id)


def age_old_rows(backend: Backend, days: float = 31) -> None:
    backend.backdate("history", "conversation_key", "old", days)
    backend.backdate("answers", "answer_id", "old-unrated", days)
    backend.backdate("answers", "answer_id", "old-rated", days)
    backend.backdate("events", "event_id", "Ev-old", days)


def assert_purged(store: ConversationStore) -> None:
    assert store.history("old", 6) == [] and [h.question for h in store.history("new", 6)] == ["new q"]
    old = store.get_answer("old-unrated")
    assert old is not None and (old.question, old.standalone) == ("", "") and old.answer == "Yes [1]."
    rated, new = store.get_answer("old-rated"), store.get_answer("new-unrated")
    assert rated is not None and rated.question.startswith("my client's")  # a rating keeps its question
    assert new is not None and new.question.startswith("my client's")
    assert [f.reason for f in store.feedback("old-rated")] == ["wrong program"]
    assert store.claim_event("slack", "Ev-old")  # forgotten: a new delivery would be new
    assert not store.claim_event("slack", "Ev-new")


def assert_untouched(store: ConversationStore, backend: Backend) -> None:
    old = store.get_answer("old-unrated")
    assert old is not None and old.question.startswith("my client's")
    if backend.kind == "sqlite":  # MongoDB's TTL indexes expire history and event ids on their own (mongomock too)
        assert [h.question for h in store.history("old", 6)] == ["old q"]
        assert not store.claim_event("slack", "Ev-old")


def test_retention_deletes_old_history_and_event_ids_and_blanks_old_unrated_questions(
        backend: Backend, store: SQLiteConversationStore | MongoConversationStore) -> None:
    fill(store)
    age_old_rows(backend, days=29)
    removed = store.purge()
    assert removed["questions"] == 0 and store.history("old", 6)  # 29 days: kept
    assert store.claim_event("slack", "Ev-old") is True  # an event id is kept a day (MONGODB_EVENT_TTL_HOURS)
    store.complete_event("slack", "Ev-old")
    age_old_rows(backend, days=31)
    removed = store.purge()
    assert removed["questions"] == 1
    if backend.kind == "sqlite":
        assert removed == {"history": 1, "events": 1, "questions": 1}
    assert_purged(store)


def test_retention_is_applied_when_the_store_opens(backend: Backend) -> None:
    store = backend.open()
    fill(store)
    age_old_rows(backend)
    store.close()
    again = backend.open()
    try:
        assert_purged(again)
    finally:
        again.close()


def test_retention_runs_at_most_once_an_hour_on_a_write(
        backend: Backend, store: SQLiteConversationStore | MongoConversationStore) -> None:
    fill(store)
    age_old_rows(backend)
    backend.clock.now += 3599
    store.append_turn("other", HistoryTurn("q", "q", "a", []), keep=6)
    assert_untouched(store, backend)
    backend.clock.now += 1
    store.save_answer(answer("another"))  # any write, an hour after the last purge
    assert_purged(store)


def test_reset_blanks_the_questions_of_the_conversations_unrated_answers(
        store: SQLiteConversationStore | MongoConversationStore) -> None:
    wrapped = RedactingConversationStore(store)  # as the bot opens it
    wrapped.append_turn("slack|T|C|1", HistoryTurn("q", "q", "a", []), keep=6)
    for answer_id, key in (("mine", "slack|T|C|1"), ("rated", "slack|T|C|1"), ("elsewhere", "slack|T|C|2")):
        wrapped.save_answer(answer(answer_id, key))
    wrapped.record_feedback("rated", "U1", True, None)
    assert wrapped.clear_history("slack|T|C|1") == 1
    mine, rated, elsewhere = (wrapped.get_answer(a) for a in ("mine", "rated", "elsewhere"))
    assert mine is not None and (mine.question, mine.standalone, mine.answer) == ("", "", "Yes [1].")
    assert rated is not None and rated.question and elsewhere is not None and elsewhere.question


def test_a_failed_purge_is_a_warning_not_a_failed_write(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    backend = Backend("sqlite", tmp_path / "c.sqlite3", FakeDatabase(), clock)
    store = backend.open()
    try:
        store.append_turn("old", HistoryTurn("q", "q", "a", []), keep=6)
        backend.backdate("history", "conversation_key", "old", 31)
        assert isinstance(store, SQLiteConversationStore)
        store._db.execute("CREATE TRIGGER no_deletes BEFORE DELETE ON history BEGIN SELECT RAISE(ABORT, 'refused');"
                          " END")
        clock.now += 3600
        store.append_turn("k", HistoryTurn("q", "q", "a", []), keep=6)  # purges first: refused, and the turn is kept
        assert [h.question for h in store.history("k", 6)] == ["q"]
        assert "applying the retention failed: refused" in caplog.text
    finally:
        store.close()


def test_one_retention_setting_for_both_backends(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NAVIBOT_MONGODB_HISTORY_TTL_DAYS", "9")  # the older, MongoDB-only name still works
    assert Settings(_env_file=None).retention_days == 9  # type: ignore[call-arg]
    monkeypatch.setenv("NAVIBOT_RETENTION_DAYS", "7")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.retention_days == settings.mongodb_history_ttl_days == 7  # the MongoDB TTL index follows it
    store = open_conversation_store(settings)
    try:
        inner = store.inner if isinstance(store, RedactingConversationStore) else store
        assert isinstance(inner, SQLiteConversationStore) and inner.retention == timedelta(days=7)
    finally:
        store.close()


def test_the_mongodb_wrapper_passes_the_event_calls_on(backend: Backend,
                                                       store: SQLiteConversationStore | MongoConversationStore) -> None:
    optional = HistoryOptional(store)
    assert optional.claim_event("teams", "a1") is True and optional.claim_event("teams", "a1") is False
    optional.release_event("teams", "a1")
    assert optional.claim_event("teams", "a1") is True
    optional.complete_event("teams", "a1")
    assert optional.claim_event("teams", "a1") is False
