"""`navibot check`: every configured part tried once against local fakes (OpenAI-compatible and Azure servers, an
on-prem reranker, Slack's Web API, MongoDB on mongomock, the Teams token), a table with latencies, exit 1 and one
line per problem when something is wrong, and never a secret in the output."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from bot.cli.check_parts import SLACK_SCOPES
from bot.cli.main import main
from rag.ingest.reindex import reindex
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from rag.mongo.indexes import CHUNKS, create_or_update, search_index_models
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.search.embedding import WordLlamaEmbedder
from rag.search.sqlite_store import SQLiteKnowledgeStore
from tests.fakes.fake_models import FakeServer
from tests.fakes.fake_mongo import FakeDatabase
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.fake_rerankers import FakeVllmRerank

KEY = "sk-check-do-not-print"
SLACK_TOKEN = "xoxb-check-do-not-print"
TEAMS_SECRET = "teams-secret-do-not-print"
MANIFEST = Path(__file__).resolve().parents[3] / "manifests" / "slack" / "manifest.yaml"


class FakeSlackAuth(FakeServer):
    """auth.test as Slack answers it, with the granted scopes in the x-oauth-scopes header."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes = ",".join(SLACK_SCOPES)
        self.tokens = {SLACK_TOKEN}

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/api/auth.test", self.auth_test)]

    async def auth_test(self, request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if token not in self.tokens:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        return web.json_response({"ok": True, "url": "https://navi.example.slack.com/", "team": "Navigators",
                                  "user": "navibot", "team_id": "T0NAVI", "user_id": "U0NAVIBOT"},
                                 headers={"x-oauth-scopes": self.scopes})


@pytest.fixture
def store(demo_store_file: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(demo_store_file, tmp_path / "knowledge.sqlite3"))


@pytest.fixture
def servers() -> Iterator[dict[str, Any]]:
    fakes: dict[str, Any] = {"openai": FakeOpenAI("openai"), "ollama": FakeOpenAI("ollama"),
                             "rerank": FakeVllmRerank(), "slack": FakeSlackAuth()}
    for fake in fakes.values():
        fake.start()
    yield fakes
    for fake in fakes.values():
        fake.stop()


def configure(monkeypatch: pytest.MonkeyPatch, store: Path, servers: dict[str, Any]) -> None:
    env = {"NAVIBOT_STORE_FILE": str(store), "NAVIBOT_LLM": "openai", "NAVIBOT_OPENAI_API_KEYS": KEY,
           "NAVIBOT_OPENAI_BASE_URLS": f"{servers['ollama'].url}/v1,{servers['openai'].url}/v1",
           "NAVIBOT_RERANK": "cohere", "NAVIBOT_COHERE_BASE_URLS": servers["rerank"].url,
           "SLACK_BOT_TOKEN": SLACK_TOKEN, "SLACK_API_URL": f"{servers['slack'].url}/api/"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def teams(monkeypatch: pytest.MonkeyPatch, token: str | Exception) -> list[tuple[str, list[str]]]:
    """Teams credentials, and the Agents SDK's MSAL token call answered here (no Entra on this machine)."""
    from microsoft_agents.authentication.msal import MsalAuth

    monkeypatch.setenv("NAVIBOT_TEAMS_CLIENT_ID", "00000000-0000-0000-0000-000000000001")
    monkeypatch.setenv("NAVIBOT_TEAMS_TENANT_ID", "00000000-0000-0000-0000-000000000002")
    monkeypatch.setenv("NAVIBOT_TEAMS_CLIENT_SECRET", TEAMS_SECRET)
    asked: list[tuple[str, list[str]]] = []

    async def get_access_token(self: Any, resource_url: str, scopes: list[str], force_refresh: bool = False) -> str:
        asked.append((resource_url, scopes))
        if isinstance(token, Exception):
            raise token
        return token

    monkeypatch.setattr(MsalAuth, "get_access_token", get_access_token)
    return asked


def rows(out: str) -> dict[str, tuple[str, str]]:
    """part -> (status, ms) from the table."""
    found = {}
    for line in out.splitlines()[1:]:
        match = re.match(r"(.+?)\s{2,}(ok|FAIL|SKIP)\s+(\d*)\s", line)
        if match:
            found[match.group(1).strip()] = (match.group(2), match.group(3))
    return found


def test_everything_configured_works(store: Path, servers: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    configure(monkeypatch, store, servers)
    asked = teams(monkeypatch, "a-bot-framework-token")
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    table = rows(out)
    ollama, hosted = (servers[n].url.removeprefix("http://") for n in ("ollama", "openai"))
    for part in ("knowledge store", "embedder bundled", "embedder vs store", f"answer model openai@{ollama}#key1",
                 f"answer model openai@{hosted}#key1", f"rewrite model openai@{hosted}#key1",
                 f"reranker cohere@{servers['rerank'].url.removeprefix('http://')}#key1", "slack auth.test",
                 "slack scopes", "teams token"):
        assert table[part][0] == "ok", (part, out)
    assert table[f"answer model openai@{hosted}#key1"][1].isdigit()  # a latency in ms
    assert out.rstrip().endswith("everything configured works")
    assert asked == [("https://api.botframework.com", ["https://api.botframework.com/.default"])]
    # one tiny call to each endpoint: both chat servers were asked, each once per model
    assert servers["ollama"].paths() == ["/v1/chat/completions"] * 2
    assert servers["openai"].paths() == ["/v1/chat/completions"] * 2
    for secret in (KEY, SLACK_TOKEN, TEAMS_SECRET):
        assert secret not in out


def test_problems_exit_1_with_one_line_each_and_no_secret(store: Path, servers: dict[str, Any],
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    configure(monkeypatch, store, servers)
    teams(monkeypatch, RuntimeError("AADSTS7000215: Invalid client secret provided."))
    servers["openai"].refused_keys = {KEY}
    servers["ollama"].reply = lambda body: "Sure, students can get SNAP."  # no JSON
    servers["rerank"].status = 503
    servers["slack"].scopes = "chat:write,commands"
    monkeypatch.setenv("NAVIBOT_EMBEDDER", "openai")  # the store was built with the bundled model
    monkeypatch.setenv("NAVIBOT_OPENAI_EMBED_MODEL", "text-embedding-3-small")
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    table = rows(out)
    hosted = servers["openai"].url.removeprefix("http://")
    assert table[f"answer model openai@{hosted}#key1"][0] == "FAIL"
    assert table["embedder vs store"][0] == "FAIL" and table["slack scopes"][0] == "FAIL"
    assert table["teams token"][0] == "FAIL" and table["knowledge store"][0] == "ok"
    problems = out.split("problem(s):\n", 1)[1].splitlines()
    failed = [part for part, (status, _) in table.items() if status == "FAIL"]
    assert len(problems) == len(failed) and all(p.startswith("- ") for p in problems)
    advice = "\n".join(problems)
    assert f"answer model openai@{hosted}#key1: check the key" in advice
    assert "embedder vs store: run `navibot reindex --to NEW_STORE`" in advice
    assert "NAVIBOT_OPENAI_STRUCTURED_OUTPUT=json_object" in advice  # the local model that wrote no JSON
    assert "slack scopes: add them" in advice and "teams token: check NAVIBOT_TEAMS_CLIENT_ID" in advice
    assert "missing app_mentions:read, assistant:write, im:history, reactions:write" in out
    for secret in (KEY, SLACK_TOKEN, TEAMS_SECRET):
        assert secret not in out


def test_a_missing_store_an_unreachable_endpoint_and_a_wrong_slack_token(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with FakeSlackAuth() as slack:
        monkeypatch.setenv("NAVIBOT_STORE_FILE", str(tmp_path / "none.sqlite3"))
        monkeypatch.setenv("NAVIBOT_LLM", "openai")
        monkeypatch.setenv("NAVIBOT_OPENAI_BASE_URLS", "http://127.0.0.1:9/v1")  # nothing listens there
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-revoked")
        monkeypatch.setenv("SLACK_API_URL", f"{slack.url}/api/")
        assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert not (tmp_path / "none.sqlite3").exists()  # checking does not create a store
    assert "- knowledge store: run `navibot ingest FOLDER`" in out
    assert "- answer model openai@127.0.0.1:9#key1: nothing answers at this URL" in out
    assert "Slack said invalid_auth" in out and "xoxb-revoked" not in out
    assert rows(out)["teams"][0] == "SKIP"


def test_mongodb_reachable_with_its_search_indexes_ready(demo_store_file: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    db = FakeDatabase()
    monkeypatch.setattr(MongoConnection, "open", classmethod(lambda cls, config: cls(AsyncBridge(), db, host="atlas")))
    monkeypatch.setenv("NAVIBOT_STORE", "mongodb")
    monkeypatch.setenv("NAVIBOT_MONGODB_URI", "mongodb+srv://navi:mongo-pass-do-not-print@cluster0.example.net/")
    source = SQLiteKnowledgeStore(demo_store_file)
    target = MongoKnowledgeStore(MongoConnection(AsyncBridge(), db))
    try:
        reindex(source, target, WordLlamaEmbedder())
        assert main(["check"]) == 1  # no search indexes yet
        out = capsys.readouterr().out
        assert "- mongodb search indexes: run `navibot db init`" in out and rows(out)["mongodb"][0] == "ok"
        target.connection.run(create_or_update(db[CHUNKS], search_index_models(256, target.options)))  # type: ignore[arg-type]
        db[CHUNKS].build_search_indexes()
        assert main(["check"]) == 0, capsys.readouterr().out
        out = capsys.readouterr().out
        assert all(status == "ok" for part, (status, _) in rows(out).items() if part.startswith("mongodb"))
        assert "mongo-pass-do-not-print" not in out
    finally:
        source.close()
        target.close()


def test_the_slack_scopes_checked_are_the_manifests() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(SLACK_SCOPES)


def test_settings_problems_still_stop_before_any_check(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_LLM", "openai")
    assert main(["check"]) == 2
    assert capsys.readouterr().err.startswith("navibot: invalid setting: NAVIBOT_OPENAI_BASE_URLS")
