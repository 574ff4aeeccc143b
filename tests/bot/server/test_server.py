"""`navibot serve`: one aiohttp server for Slack and Teams with /healthz and /metrics, on the demo knowledge base.
Slack's Web API and the Teams Bot Connector are local fakes (tests/fakes/fake_slack.py,
tests/fakes/fake_connector.py). `--only` and the aliases run end to end in tests/adapters/slack/test_slack_command.py
and tests/adapters/teams/test_teams.py."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from pydantic import SecretStr
from pymongo.errors import ServerSelectionTimeoutError

from adapters.slack.blocks import ACTION_FEEDBACK
from adapters.slack.settings import SlackSettings
from adapters.teams.cards import VERB_HELPFUL
from adapters.teams.settings import TeamsSettings
from benchmarks.serve_harness import answer_id_of
from bot.cli.main import main
from bot.config.settings import Settings
from bot.errors import UserError
from bot.observability.observers import TurnEvent
from bot.port import Turn
from bot.server.app import (
    NO_PLATFORM,
    STATE,
    Server,
    build_server_app,
    choose_platforms,
    drain_slack,
    run,
)
from bot.server.health import STORE_FAILURE_SECONDS, Health, HealthReport, one_line
from bot.wiring.runtime import Bot, build_bot
from tests.fakes.fake_connector import FakeConnector
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, BackgroundLoop, FakeSlack

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
STUDENTS = "Can college students get SNAP?"
BOT_ID = "28:00000000-0000-0000-0000-0000000000b0"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
GUID = "00000000-0000-0000-0000-0000000000a1"


def server_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, **overrides)  # type: ignore[call-arg]


@pytest.fixture
def bot(demo_store: Path, tmp_path: Path) -> Iterator[Bot]:
    built = build_bot(server_settings(tmp_path, shutdown_grace_seconds=10), demo_store,
                      tmp_path / "conversations.sqlite3")
    yield built
    built.close()


def slack(api_url: str = "http://127.0.0.1:9/api/", *, http: bool = True, socket_mode: bool = False,
          token: bool = True) -> SlackSettings:
    return SlackSettings(_env_file=None, slack_api_url=api_url,  # type: ignore[call-arg]
                         slack_bot_token=SecretStr("xoxb-test") if token else None,
                         slack_signing_secret=SecretStr(SECRET) if http else None,
                         slack_app_token=SecretStr("xapp-test") if socket_mode else None)


def no_slack() -> SlackSettings:
    return SlackSettings(_env_file=None)  # type: ignore[call-arg]


def teams(**fields: Any) -> TeamsSettings:
    return TeamsSettings(_env_file=None, **fields)  # type: ignore[call-arg]


def routes(app: Any) -> set[tuple[str, str]]:
    return {(r.method, r.resource.canonical) for r in app.router.routes() if r.method != "HEAD"}


# --- which routes, from which settings -----------------------------------------------------------------------------

def test_routes_follow_the_settings(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    base = {("GET", "/healthz"), ("GET", "/metrics")}
    settings = bot.core.settings
    assert routes(build_server_app(bot, settings, slack(), teams())) == base | {("POST", "/slack/events")}
    socket_only = build_server_app(bot, settings, slack(http=False, socket_mode=True), teams())
    assert routes(socket_only) == base, "Socket Mode needs no public route"
    both = build_server_app(bot, settings, slack(socket_mode=True),
                            teams(client_id=GUID, client_secret=SecretStr("s"), tenant_id=TENANT))
    assert routes(both) == base | {("POST", "/slack/events"), ("POST", "/api/messages")}
    with caplog.at_level(logging.WARNING):
        anonymous = build_server_app(bot, settings, no_slack(), teams(allow_anonymous=True))
    assert routes(anonymous) == base | {("POST", "/api/messages")}
    assert "UNAUTHENTICATED" in caplog.text and "serviceUrl" in caplog.text


@pytest.mark.parametrize(("slack_settings", "teams_settings", "expected"), [
    (no_slack(), teams(), NO_PLATFORM),  # anonymous Teams is not served unless asked for
    (slack(http=False), teams(), "SLACK_SIGNING_SECRET"),
    (slack(token=False), teams(), "SLACK_BOT_TOKEN"),
    (no_slack(), teams(client_id=GUID), "NAVIBOT_TEAMS_CLIENT_SECRET"),
])
def test_a_missing_or_partial_platform_is_one_clear_error(bot: Bot, slack_settings: SlackSettings,
                                                          teams_settings: TeamsSettings, expected: str) -> None:
    with pytest.raises(UserError, match=re.escape(expected)):
        build_server_app(bot, bot.core.settings, slack_settings, teams_settings)


def test_only_and_mode_choose_what_is_served_from_the_settings() -> None:
    both_ways = slack(socket_mode=True)
    credentials = teams(client_id=GUID, client_secret=SecretStr("s"), tenant_id=TENANT)
    everything = choose_platforms(both_ways, credentials)
    assert (everything.slack_http, everything.slack_socket, everything.teams) == (True, True, True)
    only_slack = choose_platforms(both_ways, teams(client_id=GUID), only="slack")  # Teams' partial set: not read
    assert (only_slack.slack_http, only_slack.slack_socket, only_slack.teams) == (True, True, False)
    socket_only = choose_platforms(both_ways, credentials, slack_mode="socket")
    assert (socket_only.slack_http, socket_only.slack_socket, socket_only.teams) == (False, True, True)
    only_teams = choose_platforms(slack(token=False), credentials, only="teams")  # Slack's half set: not read
    assert (only_teams.slack, only_teams.teams, only_teams.teams_anonymous) == (False, True, False)
    anonymous = choose_platforms(None, teams(), only="teams", allow_anonymous=True)  # `navibot teams`
    assert anonymous.teams and anonymous.teams_anonymous


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"slack": slack(), "teams": teams(), "only": "teams", "slack_mode": "http"}, "--mode is Slack's connection mode"),
    ({"slack": slack(), "teams": teams(), "only": "teams"}, "Teams has no credentials"),
    ({"slack": no_slack(), "teams": teams(allow_anonymous=True), "only": "slack"}, "Slack is not configured"),
    ({"slack": slack(), "teams": None, "slack_mode": "socket"}, "Socket Mode needs SLACK_APP_TOKEN"),
    ({"slack": None, "teams": None}, NO_PLATFORM),
])
def test_options_that_contradict_the_settings_are_one_clear_error(kwargs: dict[str, Any], expected: str) -> None:
    with pytest.raises(UserError, match=re.escape(expected)):
        choose_platforms(kwargs.pop("slack"), kwargs.pop("teams"), **kwargs)


def test_serve_without_a_platform_exits_2_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    for name in [n for n in os.environ if n.startswith(("SLACK_", "NAVIBOT_TEAMS_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "text")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "SLACK_BOT_TOKEN" in err and "NAVIBOT_TEAMS_CLIENT_ID" in err


def test_a_failed_start_is_one_json_log_line_under_json_logs(tmp_path: Path) -> None:
    """serve logs JSON by default: its one-line refusal is a JSON record too, not a plain line among them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "NAVIBOT_"))}
    env["NAVIBOT_DATA_DIR"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "bot.cli.main", "serve"], check=False, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    record = json.loads(line)
    assert record["level"] == "ERROR" and record["event"] == "failed" and "SLACK_BOT_TOKEN" in record["message"]


def test_a_port_in_use_exits_2_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_TEAMS_ALLOW_ANONYMOUS", "true")
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "text")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--host", "127.0.0.1", "--port", str(port)]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("navibot:")]
    assert lines == [f"navibot: cannot listen on 127.0.0.1:{port}: address already in use"] or \
        (len(lines) == 1 and "cannot listen on" in lines[0])


def test_a_refused_slack_token_exits_2_at_start_up(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    loop = BackgroundLoop()
    fake = FakeSlack()
    loop.run(fake.start())
    try:
        fake.fail_next("auth.test", "invalid_auth")
        monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "text")
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-revoked")
        monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
        monkeypatch.setenv("SLACK_API_URL", fake.api_url)
        assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == 2
    finally:
        loop.run(fake.stop())
        loop.close()
    err = capsys.readouterr().err
    assert "Slack refused SLACK_BOT_TOKEN (invalid_auth)" in err and "xoxb-revoked" not in err


# --- the running server ---------------------------------------------------------------------------------------------

@dataclass
class Running:
    url: str
    session: aiohttp.ClientSession
    server: Server

    async def get(self, path: str) -> tuple[int, str]:
        async with self.session.get(self.url + path) as response:
            return response.status, await response.text()

    async def slack_click(self, payload: dict[str, Any]) -> int:
        """A button click as Slack posts it: form-encoded, signed."""
        return await self.slack_post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")

    async def slack_event(self, event: dict[str, Any], event_id: str | None = None) -> int:
        body = json.dumps({"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                           "event": event, "event_id": event_id or f"Ev{uuid.uuid4().hex[:10]}",
                           "event_time": int(time.time()),
                           "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]})
        return await self.slack_post(body, "application/json")

    async def slack_post(self, body: str, content_type: str) -> int:
        """POST /slack/events signed with the signing secret, as Slack does."""
        ts = str(int(time.time()))
        digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": content_type}
        async with self.session.post(self.url + "/slack/events", data=body.encode(), headers=headers) as response:
            await response.read()
            return response.status

    async def teams_activity(self, body: dict[str, Any]) -> int:
        async with self.session.post(self.url + "/api/messages", json=body) as response:
            await response.read()
            return response.status


@asynccontextmanager
async def serving(bot: Bot, slack_settings: SlackSettings, teams_settings: TeamsSettings) -> AsyncIterator[Running]:
    server = Server(build_server_app(bot, bot.core.settings, slack_settings, teams_settings))
    port = await server.start("127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as session:
            yield Running(f"http://127.0.0.1:{port}", session, server)
    finally:
        await server.stop()


def mention(channel: str, text: str) -> dict[str, Any]:
    ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
    return {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
            "channel": channel, "event_ts": ts, "team": TEAM_ID}


def activity(connector: FakeConnector, text: str) -> dict[str, Any]:
    """A personal-chat Teams message as the Bot Connector posts it."""
    return {"type": "message", "id": f"1700{uuid.uuid4().int % 10**9}", "timestamp": "2026-11-22T02:00:00.000Z",
            "serviceUrl": connector.url, "channelId": "msteams",
            "from": {"id": "29:1user", "name": "Nina Navigator", "aadObjectId": "6a2c5b8e-1111-2222-3333-444455556666"},
            "conversation": {"id": "a:1personal", "conversationType": "personal", "tenantId": TENANT},
            "recipient": {"id": BOT_ID, "name": "Navibot"}, "text": text, "textFormat": "plain", "locale": "en-US",
            "channelData": {"tenant": {"id": TENANT}}}


def test_slack_socket_mode_and_teams_answer_through_one_server_and_metrics_count_them(bot: Bot) -> None:
    async def scenario() -> str:
        fake, connector = FakeSlack(), FakeConnector()
        await fake.start()
        await connector.start()
        try:
            async with serving(bot, slack(fake.api_url, socket_mode=True), teams(allow_anonymous=True)) as running:
                assert await running.slack_event(mention("C0HTTP", STUDENTS)) == 200
                ts = "1700000100.000100"
                await fake.push({"envelope_id": "env-1", "type": "events_api", "accepts_response_payload": False,
                                 "retry_attempt": 0, "retry_reason": "", "payload": {
                                     "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                                     "event_id": "EvSOCKET1", "event_time": int(time.time()), "event": {
                                         "type": "app_mention", "user": "U0BOB", "channel": "C0SOCKET", "ts": ts,
                                         "event_ts": ts, "text": f"<@{BOT_USER_ID}> {STUDENTS}"}}})
                assert await running.teams_activity(activity(connector, STUDENTS)) == 202
                await fake.wait_for("chat.postMessage", 1, "C0HTTP")
                await fake.wait_for("chat.postMessage", 1, "C0SOCKET")
                await connector.wait_messages(1)
                status, text = await running.get("/metrics")
                assert status == 200
                return text
        finally:
            await fake.stop()
            await connector.stop()

    metrics = asyncio.run(scenario())
    assert 'navibot_questions_total{platform="slack"} 2' in metrics
    assert 'navibot_questions_total{platform="teams"} 1' in metrics
    assert 'navibot_answers_total{platform="slack"} 2' in metrics
    assert 'navibot_stage_seconds_count{stage="total"} 3' in metrics


def test_the_start_up_line_is_a_log_record(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    """A record, not a print: under JSON logs (serve's default) it is one JSON object like every other line."""
    async def scenario() -> str:
        async with serving(bot, no_slack(), teams(allow_anonymous=True)) as running:
            return running.url

    with caplog.at_level(logging.INFO, logger="bot.server.app"):
        url = asyncio.run(scenario())
    [started] = [r for r in caplog.records if getattr(r, "event", None) == "listening"]
    assert started.levelno == logging.INFO and started.getMessage().startswith(
        f"navibot serve: {url}: Teams at /api/messages (LOCAL ANONYMOUS MODE); /healthz, /metrics")


# --- /healthz --------------------------------------------------------------------------------------------------------

def health_of(bot: Bot, store: Any = None) -> tuple[int, dict[str, Any]]:
    """GET /healthz of a running server; `store` replaces the knowledge store once the server runs."""
    async def scenario() -> tuple[int, dict[str, Any]]:
        async with serving(bot, no_slack(), teams(allow_anonymous=True)) as running:
            real = bot.core.store
            bot.core.store = store or real
            try:
                status, text = await running.get("/healthz")
            finally:
                bot.core.store = real
            return status, json.loads(text)
    return asyncio.run(scenario())


def test_healthz_is_ok_when_the_stores_answer(bot: Bot) -> None:
    status, body = health_of(bot)
    assert status == 200 and body["status"] == "ok" and "reasons" not in body and "warnings" not in body
    assert body["knowledge"]["documents"] >= 12


def test_healthz_on_an_empty_store_is_ok_but_says_so(tmp_path: Path) -> None:
    empty = build_bot(server_settings(tmp_path))
    try:
        status, body = health_of(empty)
    finally:
        empty.close()
    assert status == 200 and body["knowledge"]["chunks"] == 0
    assert "empty" in body["warnings"][0] and "navibot ingest" in body["warnings"][0]


def test_healthz_is_503_with_the_reason_when_the_conversation_store_is_closed(bot: Bot) -> None:
    bot.conversations.close()
    status, body = health_of(bot)
    assert status == 503 and body["status"] == "unavailable"
    [reason] = body["reasons"]
    assert reason.startswith("conversation store: ") and "closed" in reason and "Traceback" not in reason


def test_healthz_is_503_while_questions_fail_on_a_store_that_still_reads(bot: Bot) -> None:
    """SQLite locked by another process (or MongoDB refusing writes) still answers the read probe: the questions
    that failed on the store make /healthz say so, until one is saved again or a minute passes."""
    now = [1000.0]
    health = Health(bot, cache_seconds=0, clock=lambda: now[0])

    def report() -> HealthReport:
        return asyncio.run(health.report())

    assert report().ok
    health.turn(TurnEvent("abc123def456", "slack", "error", "q", error="store"))
    [reason] = report().reasons
    assert reason.startswith("conversation store: a question failed on it 0 s ago (trace id abc123def456)")
    health.turn(TurnEvent("0123456789ab", "slack", "error", "q", error="internal"))  # not the store's fault
    health.turn(TurnEvent("0123456789ac", "slack", "command", "help"))  # saves nothing: proves nothing
    assert not report().ok
    health.turn(TurnEvent("0123456789ad", "slack", "answer", "q"))  # saved again
    assert report().ok
    health.turn(TurnEvent("0123456789ae", "teams", "error", "q", error="store"))
    now[0] += STORE_FAILURE_SECONDS + 1
    assert report().ok  # nobody asked for a minute: the read probe decides again


class UnreachableMongo:
    """A knowledge store whose server cannot be reached; pymongo names the URI it tried in the message."""

    def counts(self) -> dict[str, int]:
        raise ServerSelectionTimeoutError("mongodb://navibot:hunter2@db.example.org:27017/?authSource=admin "
                                          "timed out after 2000 ms, Topology Description: <...>")

    def close(self) -> None:
        pass


def test_healthz_is_503_without_the_secret_when_the_store_is_unreachable(bot: Bot) -> None:
    status, body = health_of(bot, UnreachableMongo())
    assert status == 503
    [reason] = body["reasons"]
    assert reason.startswith("knowledge store: ServerSelectionTimeoutError: ") and "timed out" in reason
    assert "hunter2" not in json.dumps(body) and "navibot:" not in reason and "db.example.org" in reason


def test_one_line_blanks_credentials_of_any_kind() -> None:
    line = one_line(RuntimeError("connect mongodb+srv://u:p%40ss@c.example.net/x failed\n  api_key=sk-123 token: abc"))
    assert "p%40ss" not in line and "sk-123" not in line and "abc" not in line and "\n" not in line
    assert line.startswith("RuntimeError: connect mongodb+srv://***@c.example.net/x")
    tokens = one_line(OSError("auth with xoxb-1234-5678-abcdef and AIzaSyA1234567890abcdefghijk (Bearer eyJhbGciOi)"))
    assert "5678" not in tokens and "1234567890" not in tokens and "eyJhbGciOi" not in tokens


class CountingStore:
    def __init__(self, delay: float = 0.0) -> None:
        self.calls = 0
        self.delay = delay

    def counts(self) -> dict[str, int]:
        self.calls += 1
        time.sleep(self.delay)
        return {"documents": 1, "chunks": 3, "subchunks": 3}


def test_the_probe_is_cached_shared_and_bounded_by_a_timeout(bot: Bot) -> None:
    store = CountingStore()
    now = [100.0]
    real = bot.core.store
    bot.core.store = store  # type: ignore[assignment]
    try:
        health = Health(bot, timeout=0.2, cache_seconds=2.0, clock=lambda: now[0])

        async def polls() -> None:
            reports = await asyncio.gather(*(health.report() for _ in range(20)))
            assert all(r.ok for r in reports) and store.calls == 1, "concurrent polls share one probe"
            now[0] += 1.0
            await health.report()
            assert store.calls == 1, "a poll within 2 s reads the cached result"
            now[0] += 1.5
            await health.report()
            assert store.calls == 2
            store.delay = 0.5
            now[0] += 3
            slow = await health.report()
            assert not slow.ok and slow.reasons == ["knowledge store: no answer within 0.2 s"]
            health.shutting_down = True
            assert (await health.report()).reasons[0].startswith("shutting down")

        asyncio.run(polls())
    finally:
        bot.core.store = real


# --- graceful shutdown -----------------------------------------------------------------------------------------------

class SlowHandler:
    """The real turn handler, after a pause: an answer still under way when SIGTERM arrives."""

    def __init__(self, inner: Any, pause: float) -> None:
        self.inner = inner
        self.pause = pause
        self.started = threading.Event()

    def handle(self, turn: Turn, *args: Any, **kwargs: Any) -> Any:
        self.started.set()
        time.sleep(self.pause)
        return self.inner.handle(turn, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_sigterm_mid_turn_finishes_the_answer_then_stops(bot: Bot) -> None:
    slow = SlowHandler(bot.handler, pause=1.0)
    bot.handler = slow  # type: ignore[assignment]
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        fake = FakeSlack()
        await fake.start()
        # Picked once the fake Slack holds its own port: picked before, the system could hand the port just probed
        # to the fake, and the server then failed to bind ("address already in use", a flaky run in session 17).
        port = free_port()
        app = build_server_app(bot, bot.core.settings, slack(fake.api_url), teams())
        serving_task = asyncio.create_task(run(app, "127.0.0.1", port))  # the real signal handling
        url = f"http://127.0.0.1:{port}"
        try:
            async with aiohttp.ClientSession() as session:
                deadline = time.monotonic() + 10
                while True:
                    assert not serving_task.done() and time.monotonic() < deadline, "the server did not start"
                    try:
                        async with session.get(url + "/healthz") as response:
                            if response.status == 200:
                                break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.02)
                running = Running(url, session, Server(app))
                event = mention("C0SLOW", STUDENTS)
                assert await running.slack_event(event) == 200
                assert await asyncio.to_thread(slow.started.wait, 5)
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.sleep(0.1)
                seen["health"] = await running.get("/healthz")
                seen["late_event"] = await running.slack_event(mention("C0LATE", STUDENTS))
                await asyncio.wait_for(serving_task, 10)
                seen["thread"] = event["ts"]
        finally:
            if not serving_task.done():
                serving_task.cancel()
            await fake.stop()
        seen["posted"] = fake.of("chat.postMessage", "C0SLOW")
        seen["late_posted"] = fake.of("chat.postMessage", "C0LATE")

    asyncio.run(scenario())
    status, text = seen["health"]
    assert status == 503 and json.loads(text)["reasons"][0].startswith("shutting down")
    assert seen["late_event"] == 503, "new work is refused while the answers under way finish"
    [posted] = seen["posted"]
    assert "college students" in posted.args["text"].lower(), "the answer under way was posted"
    assert not seen["late_posted"]
    key = Turn("slack", TEAM_ID, "C0SLOW", seen["thread"], "U0ALICE", STUDENTS).conversation_key
    assert len(bot.conversations.history(key, 5)) == 1, "and saved"


def test_a_sigterm_during_start_up_stops_the_server_in_order_once_it_started(
        bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal handlers are in place before the model loads: a `docker stop` then is an orderly stop (exit 0),
    not a kill, and never a server left running."""
    def no_handler(*_: object) -> None:
        raise AssertionError("SIGTERM arrived while the server had no handler for it")

    previous = signal.signal(signal.SIGTERM, no_handler)
    try:
        app = build_server_app(bot, bot.core.settings, no_slack(), teams(allow_anonymous=True))
        monkeypatch.setattr(bot.core.embedder, "warm_up", lambda: os.kill(os.getpid(), signal.SIGTERM), raising=False)
        asyncio.run(asyncio.wait_for(run(app, "127.0.0.1", 0), 10))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert app[STATE].health.shutting_down, "stopped through Server.stop"


def test_while_draining_questions_are_refused_but_clicks_are_served(bot: Bot) -> None:
    """Slack redelivers an event and the Bot Connector a message, so they get 503 once SIGTERM arrived; a feedback
    click (Slack) or a card button (a Teams invoke) is never sent again, so it is served and the rating saved."""
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        fake, connector = FakeSlack(), FakeConnector()
        await fake.start()
        await connector.start()
        try:
            async with serving(bot, slack(fake.api_url), teams(allow_anonymous=True)) as running:
                assert await running.slack_event(mention("C0DRAIN", STUDENTS)) == 200
                [answer] = await fake.wait_for("chat.postMessage", 1, "C0DRAIN")
                seen["answer_id"] = answer_id = answer_id_of(answer)
                running.server.state.health.shutting_down = True  # what stop() sets first
                seen["question"] = await running.slack_event(mention("C0DRAIN", "Is there an asset test?"))
                seen["teams_question"] = await running.teams_activity(activity(connector, STUDENTS))
                seen["click"] = await running.slack_click({
                    "type": "block_actions", "team": {"id": TEAM_ID, "domain": "navi"}, "api_app_id": "A0NAVI",
                    "token": "legacy", "trigger_id": "1.1.abc", "user": {"id": "U0CLICK", "team_id": TEAM_ID},
                    "channel": {"id": "C0DRAIN", "name": "benefits"},
                    "container": {"type": "message", "message_ts": answer.result["ts"], "channel_id": "C0DRAIN"},
                    "message": {"type": "message", "ts": answer.result["ts"], "thread_ts": answer.args["thread_ts"]},
                    "actions": [{"action_id": ACTION_FEEDBACK, "block_id": "b1", "type": "feedback_buttons",
                                 "value": f"helpful:{answer_id}", "action_ts": str(time.time())}]})
                invoke = {**activity(connector, ""), "type": "invoke", "name": "adaptiveCard/action", "text": None,
                          "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL,
                                               "data": {"answer_id": "nope"}}, "trigger": "manual"}}
                async with running.session.post(running.url + "/api/messages", json=invoke) as response:
                    seen["invoke"] = response.status, await response.text()
        finally:
            await fake.stop()
            await connector.stop()
        seen["posted"] = len(fake.of("chat.postMessage", "C0DRAIN"))

    asyncio.run(scenario())
    assert seen["question"] == 503 and seen["teams_question"] == 503 and seen["posted"] == 1
    assert seen["click"] == 200
    [rating] = bot.conversations.feedback(seen["answer_id"])
    assert rating.helpful and rating.user == "U0CLICK", "the click during the drain is saved"
    status, text = seen["invoke"]
    assert status == 200 and "can't find that answer" in text, "the card button is answered, not refused"


def test_the_drain_waits_for_work_started_during_it() -> None:
    """A click served during the drain starts its work after the drain began: it is waited for too, within the
    grace period."""
    async def scenario() -> tuple[float, bool, float]:
        holder = SimpleNamespace(tasks=set())  # what drain_slack reads of a SlackApp

        def spawn(seconds: float) -> asyncio.Task[None]:
            task = asyncio.create_task(asyncio.sleep(seconds))
            holder.tasks.add(task)
            task.add_done_callback(holder.tasks.discard)
            return task

        spawn(0.1)
        asyncio.get_running_loop().call_later(0.05, spawn, 0.3)  # the click, mid-drain
        started = time.monotonic()
        await drain_slack(holder, grace=5)  # type: ignore[arg-type]
        waited, all_done = time.monotonic() - started, not holder.tasks
        late = spawn(10)
        started = time.monotonic()
        await drain_slack(holder, grace=0.2)  # type: ignore[arg-type]
        bounded = time.monotonic() - started
        late.cancel()
        return waited, all_done, bounded

    waited, all_done, bounded = asyncio.run(scenario())
    assert all_done and waited >= 0.3, "the work started mid-drain was waited for"
    assert bounded < 1.0, "never longer than the grace period"


def test_teams_with_credentials_refuses_an_unauthenticated_request(bot: Bot) -> None:
    async def scenario() -> tuple[int, int]:
        connector = FakeConnector()
        await connector.start()
        try:
            credentials = teams(client_id=GUID, client_secret=SecretStr("s"), tenant_id=TENANT)
            async with serving(bot, no_slack(), credentials) as running:
                status = await running.teams_activity(activity(connector, STUDENTS))
                await asyncio.sleep(0.2)
                return status, len(connector.calls)
        finally:
            await connector.stop()

    status, sent = asyncio.run(scenario())
    assert status == 401 and sent == 0
