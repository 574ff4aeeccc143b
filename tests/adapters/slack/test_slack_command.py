"""`navibot slack` (an alias of `navibot serve --only slack`) and the Slack settings: mode choice, clear one-line
errors, and the command run end to end as a user runs it (in this process, stopped by SIGTERM): HTTP mode serving
/slack/events, Socket Mode (real slack-sdk SocketModeClient against the fake's WebSocket), /healthz and /metrics
beside both."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from adapters.slack.settings import SlackSettings, SlackSettingsError
from bot.cli.main import main
from bot.config.settings import Settings
from bot.wiring.runtime import Bot, build_bot
from tests.fakes.command_server import free_port, while_serving
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, BackgroundLoop, FakeSlack

SLACK_VARS = ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "SLACK_API_URL")


@pytest.fixture(autouse=True)
def no_slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SLACK_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def loop() -> Iterator[BackgroundLoop]:
    background = BackgroundLoop()
    yield background
    background.close()


@pytest.fixture
def fake(loop: BackgroundLoop) -> Iterator[FakeSlack]:
    server = FakeSlack()
    loop.run(server.start())
    yield server
    loop.run(server.stop())


@pytest.fixture(scope="module")
def bot(demo_store: Path) -> Iterator[Bot]:
    folder = demo_store.parent
    built = build_bot(Settings(_env_file=None, data_dir=folder), demo_store, folder / "c.sqlite3")  # type: ignore[call-arg]
    yield built
    built.close()


def environment(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    for name, value in values.items():
        monkeypatch.setenv(name, value)


# --- settings ---------------------------------------------------------------------------------------------------

def test_socket_mode_when_an_app_token_is_set_else_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
    monkeypatch.setenv("SLACK_API_URL", "https://slack-gov.com/api")
    assert SlackSettings(_env_file=None).mode() == "http"  # type: ignore[call-arg]
    assert SlackSettings(_env_file=None).slack_api_url == "https://slack-gov.com/api/"  # type: ignore[call-arg]
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    assert SlackSettings(_env_file=None).mode() == "socket"  # type: ignore[call-arg]
    assert SlackSettings(_env_file=None).mode("http") == "http"  # type: ignore[call-arg]
    monkeypatch.setenv("SLACK_APP_TOKEN", "  ")
    assert SlackSettings(_env_file=None).mode() == "http", "a blank value is unset"  # type: ignore[call-arg]


def test_check_names_every_missing_setting() -> None:
    empty = SlackSettings(_env_file=None)  # type: ignore[call-arg]
    with pytest.raises(SlackSettingsError, match="HTTP mode needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET"):
        empty.check("http")
    with pytest.raises(SlackSettingsError, match="Socket Mode needs SLACK_BOT_TOKEN and SLACK_APP_TOKEN"):
        empty.check("socket")


@pytest.mark.parametrize(("env", "message"), [
    ({}, "navibot: HTTP mode needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET"),
    ({"SLACK_APP_TOKEN": "xapp-1"}, "navibot: Socket Mode needs SLACK_BOT_TOKEN"),
    ({"SLACK_BOT_TOKEN": "xoxb-1"}, "navibot: HTTP mode needs SLACK_SIGNING_SECRET"),
    ({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s", "SLACK_API_URL": "slack.com/api"},
     "navibot: invalid setting: SLACK_API_URL: must be an http(s) URL"),
])
def test_missing_or_invalid_settings_are_one_line_and_exit_2(env: dict[str, str], message: str,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["slack"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and "\n" not in err and "Traceback" not in err


def test_a_refused_bot_token_is_one_line_and_exit_2_and_an_empty_store_is_warned_about(
        fake: FakeSlack, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    fake.fail_next("auth.test", "invalid_auth")
    for name, value in {"SLACK_BOT_TOKEN": "xoxb-wrong", "SLACK_SIGNING_SECRET": "s",
                        "SLACK_API_URL": fake.api_url}.items():
        monkeypatch.setenv(name, value)
    with caplog.at_level(logging.WARNING, logger="bot.wiring.runtime"):
        assert main(["slack", "--port", str(free_port())]) == 2
    assert capsys.readouterr().err.strip().startswith("navibot: Slack refused SLACK_BOT_TOKEN (invalid_auth)")
    assert any("is empty" in r.getMessage() and "navibot ingest" in r.getMessage() for r in caplog.records)
    assert fake.of("auth.test")[0].token == "xoxb-wrong"


def test_a_refused_app_token_is_one_line_and_exit_2(fake: FakeSlack, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    fake.fail_next("apps.connections.open", "invalid_auth")
    for name, value in {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-wrong",
                        "SLACK_API_URL": fake.api_url}.items():
        monkeypatch.setenv(name, value)
    assert main(["slack"]) == 2
    assert capsys.readouterr().err.strip().startswith("navibot: Slack refused SLACK_APP_TOKEN (invalid_auth)")
    assert fake.of("apps.connections.open")[0].token == "xapp-wrong"


def test_an_unreachable_api_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s",
                        "SLACK_API_URL": f"http://127.0.0.1:{free_port()}/api/"}.items():
        monkeypatch.setenv(name, value)
    assert main(["slack", "--port", str(free_port())]) == 2
    assert "cannot reach the Slack Web API" in capsys.readouterr().err


def test_warn_if_empty_is_quiet_on_a_store_with_knowledge(bot: Bot, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        bot.warn_if_empty("k.sqlite3")
    assert not caplog.records


# --- bad option combinations ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "env", "message"), [
    (["serve", "--only", "teams", "--mode", "socket"], {}, "--mode is Slack's connection mode"),
    (["serve", "--only", "mattermost"], {}, "--only must be slack or teams (got 'mattermost')"),
    (["slack", "--mode", "websocket"], {}, "--mode must be socket or http (got 'websocket')"),
    (["serve", "--only", "slack"], {}, "--only slack: Slack is not configured: set SLACK_BOT_TOKEN"),
    (["serve", "--mode", "socket"], {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"},
     "Socket Mode needs SLACK_APP_TOKEN"),
    (["serve", "--only", "slack", "--mode", "http"], {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"},
     "HTTP mode needs SLACK_SIGNING_SECRET"),
    (["slack", "--port", "70000"], {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"},
     "--port must be between 1 and 65535"),
])
def test_bad_option_combinations_are_one_line_and_exit_2(argv: list[str], env: dict[str, str], message: str,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    environment(monkeypatch, NAVIBOT_LOG_FORMAT="text", **env)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("navibot: ") and message in err, err
    assert "\n" not in err and "Traceback" not in err


# --- serving, end to end ----------------------------------------------------------------------------------------

def signed(body: str, secret: str = "sec") -> dict[str, str]:
    """The headers Slack signs a request with."""
    ts = str(int(time.time()))
    signature = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature, "Content-Type": "application/json"}


def event_callback(channel: str, text: str) -> str:
    ts = f"{int(time.time())}.000{len(channel):03d}"
    return json.dumps({"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                       "event_id": f"Ev{channel}", "event_time": int(time.time()),
                       "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}],
                       "event": {"type": "app_mention", "user": "U0ALICE", "channel": channel, "ts": ts,
                                 "event_ts": ts, "text": f"<@{BOT_USER_ID}> {text}"}})


def start_up_line(caplog: pytest.LogCaptureFixture) -> str:
    """The server's "listening" record (a log record: one JSON object under JSON logs)."""
    [started] = [r for r in caplog.records if getattr(r, "event", None) == "listening"]
    return started.getMessage()


async def get(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url) as response:
        return response.status, await response.text()


def test_navibot_slack_in_http_mode_answers_and_serves_health_and_metrics_until_sigterm(
        fake: FakeSlack, loop: BackgroundLoop, demo_store: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    environment(monkeypatch, SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="sec", SLACK_API_URL=fake.api_url,
                NAVIBOT_LOG_FORMAT="text")
    caplog.set_level(logging.INFO, logger="bot.server.app")
    port = free_port()

    async def scenario(url: str) -> dict[str, tuple[int, str]]:
        seen = {}
        async with aiohttp.ClientSession() as session:
            verify = json.dumps({"type": "url_verification", "challenge": "xyz"})
            async with session.post(url + "/slack/events", data=verify, headers=signed(verify)) as response:
                seen["challenge"] = response.status, await response.text()
            question = event_callback("C0HTTP", "Can college students get SNAP?")
            async with session.post(url + "/slack/events", data=question, headers=signed(question)) as response:
                seen["event"] = response.status, await response.text()
            await fake.wait_for("chat.postMessage", 1, "C0HTTP")
            seen["healthz"] = await get(session, url + "/healthz")
            seen["metrics"] = await get(session, url + "/metrics")
            seen["teams"] = await get(session, url + "/api/messages")
        return seen

    code, seen = while_serving(loop, ["slack", "--host", "127.0.0.1", "--port", str(port), "--store",
                                      str(demo_store)], port, scenario)
    assert code == 0, "SIGTERM is an orderly stop"
    assert seen["challenge"][0] == 200 and "xyz" in seen["challenge"][1]
    assert seen["event"][0] == 200
    [reply] = fake.of("chat.postMessage", "C0HTTP")
    assert "college students" in reply.args["text"].lower()
    assert seen["healthz"][0] == 200 and json.loads(seen["healthz"][1])["status"] == "ok"
    assert seen["metrics"][0] == 200 and 'navibot_questions_total{platform="slack"} 1' in seen["metrics"][1]
    assert seen["teams"][0] == 404, "Slack alone"
    assert start_up_line(caplog) == (
        f"navibot slack: navibot in Navigators, HTTP mode, Request URL http://127.0.0.1:{port}/slack/events; "
        f"http://127.0.0.1:{port}: /healthz, /metrics (SIGTERM or Ctrl-C to stop)")
    assert fake.of("auth.test"), "the token is checked at start-up"


def test_navibot_slack_in_socket_mode_end_to_end(fake: FakeSlack, loop: BackgroundLoop, demo_store: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The app connects out with the app-level token, receives an app_mention envelope over the WebSocket, acks it
    and answers in the thread; /healthz answers on the port too, and /slack/events is not mounted."""
    environment(monkeypatch, SLACK_BOT_TOKEN="xoxb-1", SLACK_APP_TOKEN="xapp-1", SLACK_SIGNING_SECRET="sec",
                SLACK_API_URL=fake.api_url, NAVIBOT_LOG_FORMAT="text")
    caplog.set_level(logging.INFO, logger="bot.server.app")
    port = free_port()
    ts = "1700000100.000100"
    # As Slack sends it: a first delivery says retry_attempt 0 (a retry would say 1 or more).
    envelope = {"envelope_id": "env-1", "type": "events_api", "accepts_response_payload": False,
                "retry_attempt": 0, "retry_reason": "", "payload": {
        "token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
        "event_id": "EvSOCKET1", "event_time": int(time.time()), "event": {
            "type": "app_mention", "user": "U0ALICE", "channel": "C0SOCKET", "ts": ts, "event_ts": ts,
            "text": f"<@{BOT_USER_ID}> Can college students get SNAP?"}}}

    async def scenario(url: str) -> dict[str, tuple[int, str]]:
        deadline = time.monotonic() + 10
        while not fake.sockets:
            assert time.monotonic() < deadline, "no Socket Mode connection"
            await asyncio.sleep(0.02)
        await fake.push(envelope)
        await fake.wait_for("chat.postMessage", 1, "C0SOCKET")
        while not any(a.get("envelope_id") == "env-1" for a in fake.socket_acks):
            assert time.monotonic() < deadline, "the envelope was not acknowledged"
            await asyncio.sleep(0.01)
        async with aiohttp.ClientSession() as session:
            return {"healthz": await get(session, url + "/healthz"),
                    "events": await get(session, url + "/slack/events")}

    # --mode: both ways are configured; the alias serves the one asked for (without it: Socket Mode, the app token)
    code, seen = while_serving(loop, ["slack", "--mode", "socket", "--host", "127.0.0.1", "--port", str(port),
                                      "--store", str(demo_store)], port, scenario)
    assert code == 0
    [reply] = fake.of("chat.postMessage", "C0SOCKET")
    assert reply.args["thread_ts"] == ts and "college students" in reply.args["text"].lower()
    assert [c.args["timestamp"] for c in fake.of("reactions.add", "C0SOCKET")] == [ts], "progress shown"
    assert [c.token for c in fake.of("apps.connections.open")][:1] == ["xapp-1"]
    assert seen["healthz"][0] == 200 and seen["events"][0] == 404
    assert start_up_line(caplog).startswith("navibot slack: navibot in Navigators, Socket Mode, connected; ")


def test_serve_only_slack_ignores_teams_and_serves_the_mode_asked_for(fake: FakeSlack, loop: BackgroundLoop,
                                                                      demo_store: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      caplog: pytest.LogCaptureFixture,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`serve --only slack --mode http`: Socket Mode is configured but not connected; a half-configured Teams is not
    even read (without --only it is refused)."""
    environment(monkeypatch, SLACK_BOT_TOKEN="xoxb-1", SLACK_APP_TOKEN="xapp-1", SLACK_SIGNING_SECRET="sec",
                SLACK_API_URL=fake.api_url, NAVIBOT_LOG_FORMAT="text",
                NAVIBOT_TEAMS_CLIENT_ID="00000000-0000-0000-0000-000000000001")
    caplog.set_level(logging.INFO, logger="bot.server.app")
    port = free_port()

    async def scenario(url: str) -> dict[str, tuple[int, str]]:
        async with aiohttp.ClientSession() as session:
            verify = json.dumps({"type": "url_verification", "challenge": "abc"})
            async with session.post(url + "/slack/events", data=verify, headers=signed(verify)) as response:
                challenge = response.status, await response.text()
            return {"challenge": challenge, "teams": await get(session, url + "/api/messages"),
                    "metrics": await get(session, url + "/metrics")}

    code, seen = while_serving(loop, ["serve", "--only", "slack", "--mode", "http", "--host", "127.0.0.1",
                                      "--port", str(port), "--store", str(demo_store)], port, scenario)
    assert code == 0
    assert seen["challenge"][0] == 200 and "abc" in seen["challenge"][1]
    assert seen["teams"][0] == 404 and seen["metrics"][0] == 200
    assert not fake.sockets and not fake.of("apps.connections.open"), "Socket Mode was not asked for"
    assert start_up_line(caplog) == (f"navibot serve: http://127.0.0.1:{port} as navibot in Navigators: Slack HTTP "
                                     "events at /slack/events; /healthz, /metrics (SIGTERM or Ctrl-C to stop)")
    assert main(["serve", "--host", "127.0.0.1", "--port", str(port)]) == 2
    assert "NAVIBOT_TEAMS_CLIENT_SECRET" in capsys.readouterr().err, "without --only, Teams is read and refused"
