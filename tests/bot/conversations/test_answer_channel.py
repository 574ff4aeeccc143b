"""Where an answer was given is stored as fields (platform, channel), not parsed back from its conversation key:
a button's answer id is honoured only in that chat. Files and databases written before the channel was stored
are upgraded when the store opens, their answers' channel filled in from the key, once."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from bot.chat.handler import TurnHandler
from bot.conversations.mongo import MongoConversationStore
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import AnswerRecord, ConversationStore
from bot.port import Chat, FeedbackError, Turn
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from tests.fakes.fake_mongo import FakeDatabase

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")

TEAMS_CHANNEL = "19:abc@thread.tacv2"
# The answers of a file written before the channel was stored (and before the latency was): keys as Turn built them.
OLD_FILE = f"""
CREATE TABLE answers (
    answer_id TEXT PRIMARY KEY, conversation_key TEXT NOT NULL, platform TEXT NOT NULL, user TEXT NOT NULL,
    question TEXT NOT NULL, standalone TEXT NOT NULL, answer TEXT NOT NULL, kind TEXT NOT NULL, mood TEXT NOT NULL,
    citations TEXT NOT NULL, created TEXT NOT NULL
);
CREATE TABLE feedback (
    answer_id TEXT NOT NULL REFERENCES answers(answer_id), user TEXT NOT NULL, helpful INTEGER NOT NULL,
    reason TEXT, created TEXT NOT NULL, updated TEXT NOT NULL, PRIMARY KEY (answer_id, user)
);
INSERT INTO answers VALUES ('slack1', 'slack|T1|C0PUBLIC|1700000000.000100', 'slack', 'U1', 'q?', 'q?', 'a.',
                            'answer', 'concise', '[]', '2025-12-01T10:00:00.000+00:00');
INSERT INTO answers VALUES ('teams1', 'teams|tenant|{TEAMS_CHANNEL}|{TEAMS_CHANNEL};messageid=17', 'teams', 'U2',
                            'q?', 'q?', 'a.', 'answer', 'concise', '[]', '2025-12-01T10:00:01.000+00:00');
INSERT INTO answers VALUES ('odd1', 'no key of ours', 'cli', 'U3', 'q?', 'q?', 'a.', 'answer', 'concise', '[]',
                            '2025-12-01T10:00:02.000+00:00');
"""


def old_sqlite_file(tmp_path: Path) -> Path:
    path = tmp_path / "conversations.sqlite3"
    with sqlite3.connect(path) as old:
        old.executescript(OLD_FILE)
    old.close()
    return path


def channels(store: ConversationStore) -> dict[str, str]:
    return {record.answer_id: record.channel for record in store.answers()}


def test_an_old_sqlite_file_gets_its_answers_channel_from_their_keys_once(tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    path = old_sqlite_file(tmp_path)
    with caplog.at_level(logging.INFO, logger="bot.conversations.sqlite"):
        store = SQLiteConversationStore(path)
    try:
        assert channels(store) == {"slack1": "C0PUBLIC", "teams1": TEAMS_CHANNEL, "odd1": ""}
        assert any("answers.channel added and filled in for 3 rows" in r.getMessage() for r in caplog.records)
        store.save_answer(AnswerRecord("new1", "slack|T1|C0NEW|1", "slack", "U1", "q", "q", "a", "answer", "concise",
                                       channel="C0NEW"))
        assert store.get_answer("new1").channel == "C0NEW"  # type: ignore[union-attr]
    finally:
        store.close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="bot.conversations.sqlite"):
        reopened = SQLiteConversationStore(path)  # upgraded once: opening it again changes nothing
    try:
        assert not any("filled in" in r.getMessage() for r in caplog.records)
        assert channels(reopened)["new1"] == "C0NEW" and channels(reopened)["slack1"] == "C0PUBLIC"
    finally:
        reopened.close()


def test_a_failed_upgrade_leaves_the_old_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The column and its backfill are one transaction: an upgrade cut short is done again at the next open,
    rather than leaving a channel column of blanks that would refuse every click on an older answer."""
    path = old_sqlite_file(tmp_path)

    def broken(_key: str) -> str:
        raise RuntimeError("cut short")

    monkeypatch.setattr("bot.conversations.sqlite.channel_of_key", broken)
    with pytest.raises(RuntimeError, match="cannot open the conversation store"):
        SQLiteConversationStore(path)
    with sqlite3.connect(path) as raw:
        assert "channel" not in {row[1] for row in raw.execute("PRAGMA table_info(answers)")}
    raw.close()
    monkeypatch.undo()
    store = SQLiteConversationStore(path)
    try:
        assert channels(store)["slack1"] == "C0PUBLIC"
    finally:
        store.close()


def test_mongodb_answers_saved_without_a_channel_get_it_from_their_keys_at_open() -> None:
    db = FakeDatabase()
    for answer_id, key in (("slack1", "slack|T1|C0PUBLIC|1700000000.000100"),
                           ("teams1", f"teams|tenant|{TEAMS_CHANNEL}|{TEAMS_CHANNEL};messageid=17"),
                           ("odd1", "no key of ours")):
        db.raw("answers").insert_one({
            "_id": answer_id, "conversation_key": key, "platform": key.split("|")[0], "user": "U1", "question": "q?",
            "standalone": "q?", "answer": "a.", "kind": "answer", "mood": "concise", "citations": [],
            "created": "2025-12-01T10:00:00.000+00:00"})  # as an older version saved it: no channel, no latency
    store = MongoConversationStore(MongoConnection(AsyncBridge(), db))
    try:
        assert channels(store) == {"slack1": "C0PUBLIC", "teams1": TEAMS_CHANNEL, "odd1": ""}
        assert db.raw("answers").count_documents({"channel": {"$exists": False}}) == 0
        store.save_answer(AnswerRecord("new1", "slack|T1|C0NEW|1", "slack", "U1", "q", "q", "a", "answer", "concise",
                                       channel="C0NEW"))
        assert (db.raw("answers").find_one({"_id": "new1"}) or {}).get("channel") == "C0NEW"
    finally:
        store.close()


@pytest.mark.parametrize("open_store", ["sqlite", "mongo"])
def test_an_upgraded_answer_is_honoured_in_its_chat_only(open_store: str, tmp_path: Path) -> None:
    """The handler compares fields: an old answer's button works in its own channel and nowhere else."""
    if open_store == "sqlite":
        store: ConversationStore = SQLiteConversationStore(old_sqlite_file(tmp_path))
    else:
        db = FakeDatabase()
        db.raw("answers").insert_one({
            "_id": "slack1", "conversation_key": "slack|T1|C0PUBLIC|1700000000.000100", "platform": "slack",
            "user": "U1", "question": "q?", "standalone": "q?", "answer": "a.", "kind": "answer", "mood": "concise",
            "citations": [], "created": "2025-12-01T10:00:00.000+00:00"})
        store = MongoConversationStore(MongoConnection(AsyncBridge(), db))
    handler = TurnHandler(engine=None, conversations=store, moods=None)  # type: ignore[arg-type]
    try:
        here = Turn("slack", "T1", "C0PUBLIC", "another thread", "U9", "").chat
        stored = handler.stored_answer("slack1", here)
        assert stored is not None and (stored.answer_id, stored.answer, stored.kind) == ("slack1", "a.", "answer")
        assert handler.stored_answer("slack1", Chat("slack", "T1", "C0OTHER", "1700000000.000100")) is None
        assert handler.stored_answer("slack1", Chat("teams", "T1", "C0PUBLIC", "1")) is None  # same id, other app
        with pytest.raises(FeedbackError, match="in this chat"):
            handler.record_feedback("slack1", "U9", True, chat=Chat("slack", "T1", "C0OTHER", "1"))
        assert handler.record_feedback("slack1", "U9", True, chat=here).helpful is True
    finally:
        store.close()


def test_an_answer_whose_channel_is_unknown_is_given_in_no_chat(tmp_path: Path) -> None:
    """A key of another shape migrates to a blank channel: a click naming a blank channel must not match it."""
    store = SQLiteConversationStore(old_sqlite_file(tmp_path))
    handler = TurnHandler(engine=None, conversations=store, moods=None)  # type: ignore[arg-type]
    try:
        assert handler.stored_answer("odd1", Chat("cli", "", "", "")) is None
    finally:
        store.close()
