"""`navibot db init|status` and the other commands with NAVIBOT_STORE=mongodb, on the async mongomock facade
(MongoConnection.open patched); start-up failures against the real driver with nothing listening."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from pymongo.errors import AutoReconnect, OperationFailure

from bot.cli import db_admin
from bot.cli.main import main
from bot.config.settings import Settings
from bot.conversations.mongo import HistoryOptional, MongoConversationStore
from bot.conversations.redacting import RedactingConversationStore
from bot.wiring.open_stores import open_conversation_store, open_knowledge_store
from rag.mongo.bridge import AsyncBridge
from rag.mongo.config import MongoConfig, MongoUnavailable
from rag.mongo.connection import MongoConnection
from rag.mongo.indexes import CHUNKS
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.search.sqlite_store import SQLiteKnowledgeStore
from tests.fakes.crawl_site import Resp, Site
from tests.fakes.fake_mongo import FakeDatabase, Server

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")
URI = "mongodb+srv://navi:Sup3rSecret@cluster0.example.mongodb.net/?retryWrites=true"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> FakeDatabase:
    db = FakeDatabase("navibot")
    monkeypatch.setattr(MongoConnection, "open",
                        classmethod(lambda cls, config: cls(AsyncBridge(), db, host="cluster0.example.mongodb.net")))
    monkeypatch.setattr(db_admin, "POLL_SECONDS", 0.01)
    monkeypatch.setenv("NAVIBOT_STORE", "mongodb")
    monkeypatch.setenv("NAVIBOT_MONGODB_URI", URI)
    return db


def test_db_init_is_safe_twice_and_status_shows_everything(server: FakeDatabase,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--timeout", "5"]) == 0
    out, err = capsys.readouterr()
    assert "search index navibot_vector: created" in out and "search index navibot_text: created" in out
    assert "search indexes: navibot_vector building, navibot_text building" in err  # the progress line
    assert "queryable" in out
    assert {"documents", "chunks", "history", "events", "answers", "feedback"} <= set(
        server._db.list_collection_names())
    vector = server[CHUNKS]._search_indexes["navibot_vector"]["latestDefinition"]
    assert vector["fields"][0]["numDimensions"] == 256  # the configured embedder's dimension
    assert main(["db", "init", "--no-wait"]) == 0
    assert "navibot_vector: unchanged" in capsys.readouterr().out
    assert main(["ingest", "--demo"]) == 0
    assert main(["db", "status"]) == 0
    status = capsys.readouterr().out
    assert "documents 16, chunks 29" in status and "wordllama" in status
    assert "index history.history_ttl: ready, expires after 30 days" in status
    assert "index events.events_unique: ready, unique" in status
    assert "search index navibot_vector (vectorSearch): ready, queryable" in status
    assert "Sup3rSecret" not in status


def test_a_changed_definition_is_updated(server: FakeDatabase, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["db", "init", "--no-wait"]) == 0
    indexes = server[CHUNKS]._search_indexes
    indexes["navibot_text"]["latestDefinition"] = {"mappings": {"dynamic": True}}
    assert main(["db", "init", "--timeout", "5"]) == 0
    assert "navibot_text: definition updated" in capsys.readouterr().out
    assert indexes["navibot_text"]["latestDefinition"]["mappings"]["dynamic"] is False


def test_search_and_ask_run_on_mongodb(server: FakeDatabase, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--timeout", "5"]) == 0
    assert main(["ingest", "--demo"]) == 0
    capsys.readouterr()
    assert main(["search", "can college students get SNAP?"]) == 0
    assert "SNAP for college students" in capsys.readouterr().out.splitlines()[0]
    assert main(["ask", "Can college students get SNAP?"]) == 0
    assert "student" in capsys.readouterr().out.lower()
    assert server.raw("answers").count_documents({}) == 1  # the turn was recorded in MongoDB


def test_db_init_timeout_and_missing_search_are_one_line(server: FakeDatabase,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--timeout", "0.001"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the progress lines
    assert err.startswith("navibot: the search indexes (") and "navibot db status" in err
    server.server.search = False
    assert main(["db", "init"]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs MongoDB Atlas or the mongodb/mongodb-atlas-local image" in err and "\n" not in err
    assert main(["db", "status"]) == 0
    assert "search indexes: unavailable" in capsys.readouterr().out


def test_db_needs_the_mongodb_store(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["db", "status"]) == 2
    assert "set NAVIBOT_STORE=mongodb" in capsys.readouterr().err
    monkeypatch.setenv("NAVIBOT_STORE", "mongodb")
    assert main(["search", "snap"]) == 2
    assert capsys.readouterr().err.strip() == ("navibot: NAVIBOT_STORE=mongodb needs NAVIBOT_MONGODB_URI "
                                               "(for Atlas the mongodb+srv:// string from Connect > Drivers, "
                                               "with the user's password; mongodb://localhost:27017/"
                                               "?directConnection=true for mongodb-atlas-local)")


def test_unreachable_server_names_the_host_not_the_password(capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The real driver, nothing listening: one line, the host, no password, no traceback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nothing listens there
    monkeypatch.setenv("NAVIBOT_STORE", "mongodb")
    monkeypatch.setenv("NAVIBOT_MONGODB_URI", f"mongodb://navi:Sup3rSecret@127.0.0.1:{port}/?directConnection=true")
    monkeypatch.setenv("NAVIBOT_MONGODB_CONNECT_TIMEOUT", "0.3")
    started = time.monotonic()
    assert main(["db", "status"]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == (f"navibot: cannot reach MongoDB at 127.0.0.1:{port} within 0.3 s "
                           "(NAVIBOT_MONGODB_URI, NAVIBOT_MONGODB_CONNECT_TIMEOUT)")
    assert "Sup3rSecret" not in out + err and time.monotonic() - started < 10
    with pytest.raises(MongoUnavailable, match="not a MongoDB connection string") as refused:
        MongoConnection.open(MongoConfig("http://navi:Sup3rSecret@example", connect_timeout=0.3))
    assert "Sup3rSecret" not in str(refused.value)


def test_search_failure_on_a_server_without_search_is_plain(server: FakeDatabase,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    server.server = Server(search=False)
    for collection in server._collections.values():
        collection._server = server.server
    assert main(["ingest", "--demo"]) == 0
    capsys.readouterr()
    assert main(["search", "snap students"]) == 2
    assert capsys.readouterr().err.strip() == (
        "navibot: MongoDB at cluster0.example.mongodb.net cannot search: $vectorSearch stage is only allowed on "
        "MongoDB Atlas; the backend needs MongoDB Atlas or the mongodb/mongodb-atlas-local image, prepared with "
        "`navibot db init`")


def test_search_before_db_init_says_so(server: FakeDatabase, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "--demo"]) == 0
    capsys.readouterr()
    assert main(["search", "snap students"]) == 2
    assert capsys.readouterr().err.strip() == (
        "navibot: the search indexes navibot_vector, navibot_text of MongoDB database navibot are missing or not "
        "queryable yet: run `navibot db init` (or `navibot db status` to see their state)")


def test_knowledge_and_conversations_share_one_connection(server: FakeDatabase) -> None:
    settings = Settings()
    knowledge = open_knowledge_store(settings)
    conversations = open_conversation_store(settings)
    try:
        assert isinstance(knowledge, MongoKnowledgeStore)
        assert isinstance(conversations, RedactingConversationStore)
        inner = conversations.inner
        assert isinstance(inner, HistoryOptional) and isinstance(inner.inner, MongoConversationStore)
        assert inner.inner.connection is knowledge.connection  # one client, one loop thread
        knowledge.close()
        knowledge.close()  # twice: still counted once
        conversations.set_mood("k", "concise")  # the other user keeps it open
        assert conversations.get_mood("k") == "concise"
    finally:
        conversations.close()
    with pytest.raises(RuntimeError, match="closed"):
        inner.inner.get_mood("k")
    named = open_knowledge_store(settings, Path("elsewhere.sqlite3"))  # a named file (--store, eval): SQLite
    try:
        assert isinstance(named, SQLiteKnowledgeStore)
    finally:
        named.close()


def test_crawl_names_the_mongodb_store_and_a_lost_server_is_one_line(server: FakeDatabase,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    page = Resp("<html><head><title>SNAP students</title></head><body><h1>SNAP students</h1>"
                "<p>College students may qualify for SNAP when they work 20 hours a week.</p></body></html>")
    lost = AutoReconnect("cluster0.example.mongodb.net:27017: connection closed")
    lose_on_fetch = [False]

    def serve(request: object) -> Resp:
        if lose_on_fetch[0]:  # MongoDB goes away while the crawl runs
            server.server.fail = lost
        return page

    with Site({"/robots.txt": Resp("", content_type="text/plain"), "/kb/": serve}) as site:
        assert main(["crawl", site.url("/kb/"), "--delay", "0"]) == 0
        out = capsys.readouterr().out
        assert "crawl: 1 page" in out and out.rstrip().endswith("-> MongoDB cluster0.example.mongodb.net/navibot")
        assert server.raw("documents").count_documents({}) == 1  # stored in MongoDB, not in a SQLite file
        lose_on_fetch[0] = True
        assert main(["crawl", site.url("/kb/"), "--delay", "0"]) == 2
        assert capsys.readouterr().err == ("navibot: crawl stopped: MongoDB at cluster0.example.mongodb.net failed: "
                                           "cluster0.example.mongodb.net:27017: connection closed\n")
        # Already lost at start-up: the same one line as every other command, no traceback.
        assert main(["crawl", site.url("/kb/"), "--delay", "0"]) == 2
        assert capsys.readouterr().err == ("navibot: MongoDB at cluster0.example.mongodb.net failed: "
                                           "cluster0.example.mongodb.net:27017: connection closed\n")


def test_a_server_lost_or_refusing_mid_command_is_one_line(server: FakeDatabase, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "init", "--timeout", "5"]) == 0
    assert main(["ingest", "--demo"]) == 0
    capsys.readouterr()
    fail_on(server, monkeypatch, "aggregate", AutoReconnect("cluster0.example.mongodb.net:27017: timed out"))
    assert main(["search", "snap students"]) == 2
    assert capsys.readouterr().err == ("navibot: MongoDB at cluster0.example.mongodb.net failed: "
                                       "cluster0.example.mongodb.net:27017: timed out\n")
    refused = OperationFailure("not authorized on navibot to execute command { createIndexes: ... }", code=13)
    # A read-only database user: the stores cannot create their indexes.
    fail_on(server, monkeypatch, "create_index", refused)
    assert main(["ask", "Can college students get SNAP?"]) == 2
    assert capsys.readouterr().err.startswith("navibot: MongoDB at cluster0.example.mongodb.net failed: not "
                                              "authorized on navibot")
    with pytest.raises(MongoUnavailable, match=r"^MongoDB at test failed: not authorized"):
        MongoConversationStore(MongoConnection(AsyncBridge(), server))


def fail_on(server: FakeDatabase, monkeypatch: pytest.MonkeyPatch, op: str, error: Exception) -> None:
    """From now on the fake server answers `op` with `error` (every other call works)."""
    check = server.server.check

    def checking(name: str) -> None:
        check(name)
        if name == op:
            raise error

    monkeypatch.setattr(server.server, "check", checking)


def test_db_init_and_status_refused_or_lost_are_one_line(server: FakeDatabase, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    refused = OperationFailure("not authorized on navibot to execute command { create: \"documents\" }", code=13)
    fail_on(server, monkeypatch, "create_collection", refused)
    assert main(["db", "init", "--no-wait"]) == 2
    assert capsys.readouterr().err == ("navibot: MongoDB at cluster0.example.mongodb.net failed: not authorized on "
                                       "navibot to execute command { create: \"documents\" }\n")
    lost = AutoReconnect("cluster0.example.mongodb.net:27017: connection closed")
    fail_on(server, monkeypatch, "count_documents", lost)
    assert main(["db", "status"]) == 2
    assert capsys.readouterr().err == ("navibot: MongoDB at cluster0.example.mongodb.net failed: "
                                       "cluster0.example.mongodb.net:27017: connection closed\n")
