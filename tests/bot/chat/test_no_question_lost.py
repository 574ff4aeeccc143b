"""No question lost, none answered twice: an event id is claimed with an owner and a lease, completed when the
reply is posted and released when the turn or the post fails. A question cut short by `kill -9` is answered when
Slack delivers it again; two deliveries at once get one answer; an answered event is never answered again."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.teams import agent
from benchmarks.attack_kill9 import run_kill9
from bot.conversations.mongo import MongoConversationStore
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import EVENT_LEASE_SECONDS
from bot.port import ReplyKind, Turn
from bot.wiring.runtime import Bot
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from tests.adapters.teams.test_teams import STUDENTS, message, running
from tests.fakes.fake_mongo import FakeDatabase

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")


# --- the attack, against a real server ------------------------------------------------------------------------------

def test_kill_9_mid_answer_then_redelivery_answers_every_question_exactly_once(demo_store: Path,
                                                                               tmp_path: Path) -> None:
    result = run_kill9(tmp_path / "kill9", store=demo_store, questions=20, generate_delay=3.0, settle=0.5)
    assert result.answered_before_kill == 0, result.line()  # all were in flight when the server died
    assert result.claimed_at_kill >= 10, result.line()  # ... with their event ids saved (today's losses)
    assert result.ok, result.line()
    assert result.eyes_left == 0, result.line()  # the retry that answered took the dead server's :eyes: off
    assert result.seconds < 25, result.line()


# --- the claim, on each store ---------------------------------------------------------------------------------------

def test_a_claim_is_dropped_while_alive_answered_after_release_and_final_when_done(tmp_path: Path) -> None:
    store = SQLiteConversationStore(tmp_path / "c.sqlite3")
    try:
        assert store.claim_event("slack", "Ev1") is True
        assert store.claim_event("slack", "Ev1") is False  # being answered here
        store.release_event("slack", "Ev1")  # the turn failed
        assert store.claim_event("slack", "Ev1") is True  # the retry is answered
        store.complete_event("slack", "Ev1")
        assert store.claim_event("slack", "Ev1") is False
        store.release_event("slack", "Ev1")  # a late release never reopens an answered event
        assert store.claim_event("slack", "Ev1") is False
    finally:
        store.close()


def test_a_claim_of_a_dead_process_is_taken_over_at_once_and_of_a_live_one_never(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    crashed, live, restarted = (SQLiteConversationStore(path) for _ in range(3))
    try:
        assert crashed.claim_event("slack", "EvDead") and live.claim_event("slack", "EvLive")
        assert not restarted.claim_event("slack", "EvDead") and not restarted.claim_event("slack", "EvLive")
        held = crashed._owners._held
        assert held is not None
        held.close()  # what the kernel does to the lock of a killed process (its file stays behind)
        assert restarted.claim_event("slack", "EvDead") is True
        assert restarted.claim_event("slack", "EvLive") is False
        assert not (crashed._owners.folder / f"{crashed._owners.owner}.lock").exists()  # tidied away
    finally:
        for store in (crashed, live, restarted):
            store.close()


def test_a_claim_whose_lease_ran_out_is_taken_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.sqlite3"
    first, second = SQLiteConversationStore(path), SQLiteConversationStore(path)
    try:
        assert first.claim_event("teams", "a1") and not second.claim_event("teams", "a1")
        later = time.time() + EVENT_LEASE_SECONDS + 1
        monkeypatch.setattr(time, "time", lambda: later)
        assert second.claim_event("teams", "a1") is True  # stuck for longer than any turn: taken over
        assert first.claim_event("teams", "a1") is False
    finally:
        first.close()
        second.close()


def test_two_deliveries_at_once_are_claimed_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    stores = [SQLiteConversationStore(path) for _ in range(4)]  # as if four processes shared the file
    results: list[bool] = []
    barrier = threading.Barrier(16)

    def claim(store: SQLiteConversationStore) -> None:
        barrier.wait()
        results.append(store.claim_event("slack", "EvRace"))

    threads = [threading.Thread(target=claim, args=(stores[n % 4],)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for store in stores:
        store.close()
    assert sorted(results) == [False] * 15 + [True]


def test_an_older_store_file_is_upgraded_and_its_event_ids_count_as_answered(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(path)) as db:  # the events table as earlier versions wrote it
        db.execute("CREATE TABLE events (platform TEXT NOT NULL, event_id TEXT NOT NULL, created TEXT NOT NULL,"
                   " PRIMARY KEY (platform, event_id))")
        db.execute("INSERT INTO events VALUES ('slack', 'EvOld', '2026-01-01T00:00:00.000+00:00')")
        db.commit()
    store = SQLiteConversationStore(path, retention_days=3650, event_ttl_hours=24 * 3650)
    try:
        assert store.claim_event("slack", "EvOld") is False
        assert store.claim_event("slack", "EvNew") is True
    finally:
        store.close()


def test_mongodb_claims_with_a_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    db = FakeDatabase()
    first, restarted = (MongoConversationStore(MongoConnection(AsyncBridge(), db)) for _ in range(2))
    try:
        assert first.claim_event("slack", "Ev1") is True
        assert restarted.claim_event("slack", "Ev1") is False  # another server's claim, under its lease
        restarted.release_event("slack", "Ev1")  # only the holder releases
        assert restarted.claim_event("slack", "Ev1") is False
        db.raw("events").update_one({"event_id": "Ev1"},
                                    {"$set": {"lease_until": datetime.now(UTC) - timedelta(seconds=1)}})
        assert restarted.claim_event("slack", "Ev1") is True  # the lease ran out: its holder is gone
        restarted.complete_event("slack", "Ev1")
        assert first.claim_event("slack", "Ev1") is False and restarted.claim_event("slack", "Ev1") is False
        db.raw("events").insert_one({"platform": "slack", "event_id": "EvOld", "created": datetime.now(UTC)})
        assert first.claim_event("slack", "EvOld") is False  # saved by an older version: answered
    finally:
        first.close()
        restarted.close()


def test_mongodb_a_claim_of_a_dead_process_on_this_host_is_taken_over_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, folder = FakeDatabase(), tmp_path / "event-owners"

    def server() -> MongoConversationStore:
        return MongoConversationStore(MongoConnection(AsyncBridge(), db), owners_folder=folder)

    crashed, live, restarted = server(), server(), server()
    monkeypatch.setattr("socket.gethostname", lambda: "another-host")
    elsewhere = server()
    try:
        assert crashed.claim_event("slack", "EvDead") and live.claim_event("slack", "EvLive")
        assert elsewhere.claim_event("slack", "EvThere")
        assert crashed._owners is not None and crashed._owners._held is not None
        crashed._owners._held.close()  # killed: the kernel drops its lock
        assert restarted.claim_event("slack", "EvDead") is True
        assert restarted.claim_event("slack", "EvLive") is False
        assert restarted.claim_event("slack", "EvThere") is False  # another host's claim: only its lease frees it
    finally:
        for store in (crashed, live, restarted, elsewhere):
            store.close()


# --- the handler and the adapters -----------------------------------------------------------------------------------

def test_a_failed_turn_releases_its_event_and_a_posted_reply_completes_it(bot: Bot,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    turn = Turn("slack", "T", "C", "1.0", "U", STUDENTS, event_id="EvFail")

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    with monkeypatch.context() as patch:
        patch.setattr(bot.engine, "answer", broken)
        assert bot.handler.handle(turn).kind is ReplyKind.ERROR
    reply = bot.handler.handle(turn)  # the retry is answered, not dropped
    assert reply.kind is ReplyKind.ANSWER
    assert bot.handler.handle(turn).kind is ReplyKind.DUPLICATE  # while it is being posted
    asyncio.run(bot.reply_posted(turn))
    assert bot.handler.handle(turn).kind is ReplyKind.DUPLICATE


def test_teams_an_answer_that_could_not_be_sent_is_answered_when_the_activity_comes_again(
        bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent, "RETRY_WAITS", (0.01, 0.01))

    async def scenario() -> tuple[int, int, int]:
        async with running(bot) as h:

            def answers() -> int:
                return len([m for m in h.connector.messages() if "[1]" in str(m.body)])

            body = message(h.connector, STUDENTS, activity_id="1700000000099")
            h.connector.fail_next = [503, 503, 503, 503]  # typing, then the answer three times: not sent
            await h.post(body)
            before = answers()
            await h.post(body)  # the connector delivers the activity again
            await h.connector.wait_for(lambda _: answers() > before)
            await h.post(body)  # and once more, after it was answered: dropped
            await asyncio.sleep(0.3)
            return before, answers(), len(h.connector.fail_next)

    before, after, unused_failures = asyncio.run(scenario())
    assert unused_failures == 0 and before == 0  # the answer was refused three times: not posted
    assert after == 1
