"""The MongoDB backend against a real deployment: MongoDB Atlas or the mongodb/mongodb-atlas-local image.

Skipped unless NAVIBOT_MONGODB_URI is set, e.g.

    docker run -d -p 27017:27017 mongodb/mongodb-atlas-local:8.2
    NAVIBOT_MONGODB_URI='mongodb://localhost:27017/?directConnection=true' python -m pytest -q tests/live

Everything happens in a throwaway database (navibot_live_<random>) that is dropped at the end. What this covers
and the unit tests cannot: the real $vectorSearch, $search and $rankFusion stages, search index creation and
its polling, TTL and unique indexes on a real server, and the driver's error classes.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import pytest

from bot.cli.main import main
from bot.config.settings import Settings
from bot.conversations.mongo import MongoConversationStore
from bot.conversations.store import AnswerRecord, HistoryTurn, UnknownAnswer
from bot.port import ReplyKind, Turn
from bot.wiring.open_stores import mongo_config
from bot.wiring.runtime import build_bot, build_core
from rag.mongo.connection import MongoConnection
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.mongo.pipelines import SearchOptions
from rag.search.retrieve import Retriever

URI = os.environ.get("NAVIBOT_MONGODB_URI", "")
pytestmark = pytest.mark.skipif(not URI, reason="set NAVIBOT_MONGODB_URI to run the live MongoDB suite")
QUESTION = "Can college students get SNAP?"


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    name = f"navibot_live_{uuid.uuid4().hex[:8]}"
    yield name
    settings = Settings(_env_file=None, store="mongodb", mongodb_database=name)  # type: ignore[call-arg]
    connection = MongoConnection.open(mongo_config(settings))
    try:
        connection.run(connection.client.drop_database(name))
    finally:
        connection.close()


@pytest.fixture
def live_env(database: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("NAVIBOT_STORE", "mongodb")
    monkeypatch.setenv("NAVIBOT_MONGODB_URI", URI)
    monkeypatch.setenv("NAVIBOT_MONGODB_DATABASE", database)
    return Settings()


def test_1_db_init_twice_then_ingest(live_env: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--timeout", "600"]) == 0
    assert "queryable" in capsys.readouterr().out
    assert main(["db", "init", "--timeout", "600"]) == 0  # safe to run twice
    assert "unchanged" in capsys.readouterr().out
    assert main(["ingest", "--demo"]) == 0
    assert main(["ingest", "--demo"]) == 0  # unchanged documents skipped
    assert "16 unchanged" in capsys.readouterr().out
    assert main(["db", "status"]) == 0
    status = capsys.readouterr().out
    assert "documents 16, chunks 29" in status and "queryable" in status


def _search_until_found(retriever: Retriever, **kwargs: object) -> list[str]:
    """Atlas indexes new documents a moment after they are written: poll for up to a minute."""
    deadline = time.monotonic() + 60
    while True:
        hits = retriever.search(QUESTION, k=3, **kwargs)  # type: ignore[arg-type]
        if hits or time.monotonic() > deadline:
            return [h.chunk.title for h in hits]
        time.sleep(2)


def test_2_search_with_and_without_rank_fusion(live_env: Settings) -> None:
    core = build_core(live_env)
    try:
        assert isinstance(core.store, MongoKnowledgeStore)
        titles = _search_until_found(core.retriever)
        assert titles and "student" in titles[0].lower()
        assert _search_until_found(core.retriever, tags=["snap"])
        fused = core.store.aio.rank_fusion
        print(f"server {core.store.connection.server_version}: $rankFusion used: {fused}")
        separate = MongoKnowledgeStore.open(mongo_config(live_env), SearchOptions(rank_fusion=False))
        try:
            other = Retriever(separate, core.embedder, candidates=live_env.candidates)
            assert _search_until_found(other)[0] == titles[0]
        finally:
            separate.close()
        exact = MongoKnowledgeStore.open(mongo_config(live_env), SearchOptions(exact=True))
        try:
            assert Retriever(exact, core.embedder).search(QUESTION, k=1)
        finally:
            exact.close()
    finally:
        core.close()


def test_3_turns_history_and_feedback(live_env: Settings) -> None:
    bot = build_bot(live_env)
    try:
        turn = Turn("slack", "T1", "C1", "1700000000.000100", "U1", QUESTION, f"Ev{uuid.uuid4().hex}")
        reply = bot.handler.handle(turn)
        assert reply.kind is ReplyKind.ANSWER and reply.answer_id
        assert bot.handler.handle(turn).kind is ReplyKind.DUPLICATE  # the unique index on the event id
        assert bot.conversations.history(turn.conversation_key, 6)[0].question == QUESTION
        first = bot.handler.record_feedback(reply.answer_id, "U1", False, "call me at 555-123-4567")
        second = bot.handler.record_feedback(reply.answer_id, "U1", True)
        assert first.reason == "call me at [phone]" and second.helpful and second.created == first.created
        assert len(bot.conversations.feedback(reply.answer_id)) == 1
    finally:
        bot.close()


def test_4_conversation_store_on_the_server(live_env: Settings) -> None:
    store = MongoConversationStore.open(mongo_config(live_env), history_ttl_days=30, event_ttl_hours=24)
    try:
        for n in range(4):
            store.append_turn("k", HistoryTurn(f"q{n}", f"s{n}", f"a{n}", []), keep=2)
        assert [t.question for t in store.history("k", 5)] == ["q2", "q3"]
        store.set_mood("p", "detailed")
        assert store.get_mood("p") == "detailed"
        store.save_answer(AnswerRecord("live-a1", "k", "teams", "U", "q", "q", "a", "answer", "concise"))
        with pytest.raises(UnknownAnswer):
            store.record_feedback("nope", "U", True, None)
        info = store.connection.run(store.connection.db["history"].index_information())
        assert info["history_ttl"]["expireAfterSeconds"] == 30 * 86400
    finally:
        store.close()
    again = MongoConversationStore.open(mongo_config(live_env), history_ttl_days=7, event_ttl_hours=24)
    try:  # a changed TTL is applied with collMod, not refused
        info = again.connection.run(again.connection.db["history"].index_information())
        assert info["history_ttl"]["expireAfterSeconds"] == 7 * 86400
    finally:
        again.close()
