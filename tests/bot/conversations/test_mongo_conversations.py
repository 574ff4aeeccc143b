"""The MongoDB conversation store on the async mongomock facade: history, moods, event ids, answers, feedback,
TTL indexes; and the turn handler answering on when MongoDB is lost mid-conversation."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pymongo.errors import AutoReconnect, ServerSelectionTimeoutError, WriteError

from bot.chat.handler import TurnHandler
from bot.config.settings import Settings
from bot.conversations.mongo import HistoryOptional, MongoConversationStore
from bot.conversations.store import AnswerRecord, HistoryTurn, UnknownAnswer
from bot.port import FeedbackError, ReplyKind, Turn
from bot.wiring.runtime import Core, build_engine
from rag.answer.moods import MoodBook
from rag.cite.rail import Citation
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from tests.fakes.fake_mongo import FakeDatabase

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")


@pytest.fixture
def db() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def store(db: FakeDatabase) -> Iterator[MongoConversationStore]:
    opened = MongoConversationStore(MongoConnection(AsyncBridge(), db), history_ttl_days=30, event_ttl_hours=24)
    yield opened
    opened.close()


def turn(n: int) -> HistoryTurn:
    return HistoryTurn(f"q{n}", f"standalone {n}", f"a{n}", [f"doc::0.{n}"])


def test_history_is_per_conversation_oldest_first_and_capped(store: MongoConversationStore,
                                                             db: FakeDatabase) -> None:
    for n in range(5):
        store.append_turn("slack:T:C:1", turn(n), keep=3)
    store.append_turn("slack:T:C:2", turn(9), keep=3)
    assert [t.question for t in store.history("slack:T:C:1", 10)] == ["q2", "q3", "q4"]
    assert [t.question for t in store.history("slack:T:C:1", 2)] == ["q3", "q4"]
    assert store.history("slack:T:C:1", 1)[0] == turn(4)
    assert db.raw("history").count_documents({"conversation_key": "slack:T:C:1"}) == 3  # capped in the database
    assert store.clear_history("slack:T:C:1") == 3
    assert store.history("slack:T:C:1", 10) == [] and len(store.history("slack:T:C:2", 10)) == 1


def test_moods_and_event_ids(store: MongoConversationStore) -> None:
    assert store.get_mood("slack:T:C:U") is None
    store.set_mood("slack:T:C:U", "concise")
    store.set_mood("slack:T:C:U", "detailed")
    assert store.get_mood("slack:T:C:U") == "detailed"
    assert store.claim_event("slack", "Ev1") is True
    assert store.claim_event("slack", "Ev1") is False  # a redelivery: the unique index refuses it
    assert store.claim_event("teams", "Ev1") is True  # another platform's id space


def test_claim_event_once_under_concurrency(store: MongoConversationStore) -> None:
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(store.claim_event("slack", "Ev7"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]


def test_answers_and_feedback_upsert(store: MongoConversationStore) -> None:
    quote = Citation(1, "d", "d::0", "d::0.0", "SNAP", ["Students"], "https://x#p", None, "Students may qualify.")
    store.save_answer(AnswerRecord("a1", "k", "slack", "U1", "q?", "q standalone?", "Yes [1].", "answer",
                                   "concise", [quote]))
    got = store.get_answer("a1")
    assert got is not None and got.citations == [quote] and got.created and got.kind == "answer"
    assert store.get_answer("nope") is None
    first = store.record_feedback("a1", "U1", False, "wrong program")
    second = store.record_feedback("a1", "U1", True, None)  # clicking again updates the one rating
    store.record_feedback("a1", "U2", True, None)
    assert (second.helpful, second.reason, second.created) == (True, None, first.created)
    assert second.updated >= first.updated
    ratings = store.feedback("a1")
    assert [(f.user, f.helpful) for f in ratings] == [("U1", True), ("U2", True)]
    assert ratings[0].question == "q?" and ratings[0].citations[0]["quote"] == "Students may qualify."
    assert len(store.feedback()) == 2
    with pytest.raises(UnknownAnswer):
        store.record_feedback("missing", "U1", True, None)


def test_ttl_indexes_expire_history_and_events_but_keep_answers_and_feedback(db: FakeDatabase) -> None:
    store = MongoConversationStore(MongoConnection(AsyncBridge(), db), history_ttl_days=30, event_ttl_hours=24)
    store.close()
    history = db.raw("history").index_information()
    assert history["history_ttl"]["expireAfterSeconds"] == 30 * 86400
    assert history["history_ttl"]["key"] == [("created", 1)]
    events = db.raw("events").index_information()
    assert events["events_ttl"]["expireAfterSeconds"] == 24 * 3600
    assert events["events_unique"]["unique"] is True and events["events_unique"]["key"] == [("platform", 1),
                                                                                          ("event_id", 1)]
    assert db.raw("feedback").index_information()["feedback_unique"]["unique"] is True
    for kept in ("answers", "feedback"):
        assert not any("expireAfterSeconds" in spec for spec in db.raw(kept).index_information().values())
    # A changed setting updates the TTL in place instead of failing on the existing index.
    again = MongoConversationStore(MongoConnection(AsyncBridge(), db), history_ttl_days=7, event_ttl_hours=24)
    again.close()
    assert db.raw("history").index_information()["history_ttl"]["expireAfterSeconds"] == 7 * 86400
    assert db.server.commands == [{"collMod": "history", "index": {"name": "history_ttl",
                                                                   "expireAfterSeconds": 7 * 86400}}]


def slack_turn(text: str, event_id: str) -> Turn:
    return Turn("slack", "T1", "C1", "1700000000.000100", "U1", text, event_id)


def test_a_lost_mongodb_still_gets_the_navigator_an_answer(demo: Core, db: FakeDatabase,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    clock = [0.0]
    conversations = HistoryOptional(MongoConversationStore(MongoConnection(AsyncBridge(), db)), "MongoDB db.test",
                                    pause=30.0, clock=lambda: clock[0])
    handler = TurnHandler(build_engine(demo), conversations, MoodBook())
    try:
        first = handler.handle(slack_turn("Can college students get SNAP?", "E1"))
        assert first.kind is ReplyKind.ANSWER and len(conversations.history(slack_turn("", "").conversation_key, 6))
        db.server.fail = ServerSelectionTimeoutError("db.test:27017: timed out")
        with caplog.at_level(logging.WARNING):
            lost = handler.handle(slack_turn("How do I apply for LIHEAP?", "E2"))
        assert lost.kind is ReplyKind.ANSWER and lost.citations and "LIHEAP" in lost.text
        assert lost.answer_id  # not saved, but the reply is whole
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("history unavailable" in w and "db.test" in w for w in warnings)
        assert not any(r.exc_info for r in caplog.records)  # no traceback: nothing failed for the navigator
        with pytest.raises(FeedbackError, match="try again"):
            handler.record_feedback(first.answer_id or "", "U1", True)
        reset = handler.handle(slack_turn("reset", "E3"))  # a promise it cannot keep: an error, not "Done"
        assert reset.kind is ReplyKind.ERROR and "trace id" in reset.text
        db.server.fail = None
        clock[0] = 31.0  # the pause after a failure is over: MongoDB is asked again
        assert handler.handle(slack_turn("How do I apply for LIHEAP?", "E2")).kind is ReplyKind.ANSWER  # fail open
        assert handler.handle(slack_turn("How do I apply for LIHEAP?", "E2")).kind is ReplyKind.DUPLICATE
    finally:
        conversations.close()


def test_only_network_failures_are_skipped_and_a_lost_server_is_not_asked_again_at_once(db: FakeDatabase) -> None:
    clock = [100.0]
    conversations = HistoryOptional(MongoConversationStore(MongoConnection(AsyncBridge(), db)), pause=30.0,
                                     clock=lambda: clock[0])
    try:
        db.server.fail = AutoReconnect("connection reset")
        assert conversations.history("k", 5) == []
        asked = len(db.server.calls)
        assert conversations.get_mood("k") is None and conversations.claim_event("slack", "E1") is True
        conversations.append_turn("k", turn(1), keep=3)
        assert len(db.server.calls) == asked  # within the pause: one timeout per turn, not one per call
        clock[0] += 31
        db.server.fail = WriteError("document too large", code=10334)  # a refused write is a real failure
        with pytest.raises(WriteError):
            conversations.append_turn("k", turn(1), keep=3)
    finally:
        db.server.fail = None
        conversations.close()


def test_settings_choose_mongodb_conversations(monkeypatch: pytest.MonkeyPatch, db: FakeDatabase,
                                               tmp_path: Path) -> None:
    from bot.conversations.redacting import RedactingConversationStore
    from bot.wiring import open_stores as stores
    monkeypatch.setattr(MongoConnection, "open", classmethod(lambda cls, config: cls(AsyncBridge(), db)))
    monkeypatch.setenv("NAVIBOT_STORE", "mongodb")
    monkeypatch.setenv("NAVIBOT_MONGODB_URI", "mongodb://navi:s3cret@db.example:27017/")
    opened = stores.open_conversation_store(Settings())
    try:
        assert isinstance(opened, RedactingConversationStore) and isinstance(opened.inner, HistoryOptional)
        opened.append_turn("k", HistoryTurn("my ssn 123-45-6789", "s", "a", []), keep=3)
        assert db.stored("history")["question"] == "my ssn [ssn]"
    finally:
        opened.close()
    assert not (tmp_path / "navibot-data" / "conversations.sqlite3").exists()


def test_closing_the_bridge_ends_calls_in_flight_at_once() -> None:
    """A turn still waiting for MongoDB when the bot shuts down gets an error now, not after its whole timeout."""
    bridge = AsyncBridge(name="navibot-mongo-closing")  # its own name: another test's bridge may still be running
    failures: list[BaseException] = []
    running = threading.Event()

    async def slow_call() -> None:
        running.set()
        await asyncio.sleep(60)

    def call() -> None:
        try:
            bridge.run(slow_call(), timeout=30)
        except BaseException as exc:  # noqa: BLE001 - the test looks at what the caller got
            failures.append(exc)

    waiting = threading.Thread(target=call)
    waiting.start()
    assert running.wait(5)  # the call is in flight (a fixed sleep raced a busy CI machine)
    started = time.monotonic()
    bridge.close()
    waiting.join(timeout=5)
    assert not waiting.is_alive() and time.monotonic() - started < 5
    assert len(failures) == 1 and "closed before MongoDB answered" in str(failures[0])
    assert "navibot-mongo-closing" not in [t.name for t in threading.enumerate()]
    with pytest.raises(RuntimeError, match="closed"):
        bridge.run(asyncio.sleep(0))


def test_the_bridge_refuses_a_nested_call_and_serves_other_event_loops() -> None:
    """A store method called from the bridge's own loop would wait on itself forever: it is refused at once.
    Called from another thread's event loop (an adapter that forgot asyncio.to_thread), it still answers."""
    bridge = AsyncBridge()
    try:
        async def nested() -> int:
            return bridge.run(asyncio.sleep(0, 1))

        with pytest.raises(RuntimeError, match="own loop"):
            bridge.run(nested(), timeout=5)

        async def from_another_loop() -> int:
            return bridge.run(asyncio.sleep(0, 2), timeout=5)

        assert asyncio.run(from_another_loop()) == 2
    finally:
        bridge.close()
