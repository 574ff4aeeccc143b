"""`navibot slack` and the Slack settings: mode choice, clear one-line errors, HTTP mode serving /slack/events,
and Socket Mode end to end (real slack-sdk SocketModeClient against the fake's WebSocket)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr

from adapters.slack.app import build_slack_app
from adapters.slack.serve import run_http, run_socket
from adapters.slack.settings import SlackSettings, SlackSettingsError
from bot.cli.main import main
from bot.config.settings import Settings
from bot.wiring.runtime import Bot, build_bot
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


def settings(fake: FakeSlack, **values: str) -> SlackSettings:
    return SlackSettings(_env_file=None, slack_api_url=fake.api_url,  # type: ignore[call-arg]
                         **{k: SecretStr(v) for k, v in values.items()})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    with caplog.at_level(logging.WARNING, logger="adapters.slack.serve"):
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


# --- serving ----------------------------------------------------------------------------------------------------

def test_http_mode_serves_slack_events_until_stopped(fake: FakeSlack, loop: BackgroundLoop, bot: Bot) -> None:
    slack = build_slack_app(bot, settings(fake, slack_bot_token="xoxb-1", slack_signing_secret="sec"))
    port = free_port()

    async def scenario() -> tuple[int, str]:
        server = asyncio.create_task(run_http(slack, "127.0.0.1", port))
        body = json.dumps({"type": "url_verification", "challenge": "xyz"})
        ts = str(int(time.time()))
        signature = "v0=" + hmac.new(b"sec", f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        try:
            async with aiohttp.ClientSession() as session:
                for _ in range(200):
                    try:
                        async with session.post(f"http://127.0.0.1:{port}/slack/events", data=body, headers={
                                "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature,
                                "Content-Type": "application/json"}) as response:
                            return response.status, await response.text()
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.02)
            raise AssertionError("the server did not start")
        finally:
            server.cancel()
            with pytest.raises(asyncio.CancelledError):
                await server

    status, text = loop.run(scenario())
    assert status == 200 and "xyz" in text
    assert fake.of("auth.test"), "the token is checked at start-up"


def test_socket_mode_end_to_end(fake: FakeSlack, loop: BackgroundLoop, bot: Bot) -> None:
    """The app connects out with the app-level token, receives an app_mention envelope over the WebSocket, acks it
    and answers in the thread."""
    slack = build_slack_app(bot, settings(fake, slack_bot_token="xoxb-1", slack_app_token="xapp-1"), mode="socket")
    ts = "1700000100.000100"
    # As Slack sends it: a first delivery says retry_attempt 0 (a retry would say 1 or more).
    envelope = {"envelope_id": "env-1", "type": "events_api", "accepts_response_payload": False,
                "retry_attempt": 0, "retry_reason": "", "payload": {
        "token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
        "event_id": "EvSOCKET1", "event_time": int(time.time()), "event": {
            "type": "app_mention", "user": "U0ALICE", "channel": "C0SOCKET", "ts": ts, "event_ts": ts,
            "text": f"<@{BOT_USER_ID}> Can college students get SNAP?"}}}

    async def scenario() -> None:
        runner = asyncio.create_task(run_socket(slack))
        try:
            deadline = time.monotonic() + 10
            while not fake.sockets:
                assert time.monotonic() < deadline and not runner.done(), "no Socket Mode connection"
                await asyncio.sleep(0.02)
            await fake.push(envelope)
            await fake.wait_for("chat.postMessage", 1, "C0SOCKET")
            while not any(a.get("envelope_id") == "env-1" for a in fake.socket_acks):
                assert time.monotonic() < deadline, "the envelope was not acknowledged"
                await asyncio.sleep(0.01)
        finally:
            runner.cancel()
            with pytest.raises(asyncio.CancelledError):
                await runner

    loop.run(scenario())
    [reply] = fake.of("chat.postMessage", "C0SOCKET")
    assert reply.args["thread_ts"] == ts and "college students" in reply.args["text"].lower()
    assert [c.args["timestamp"] for c in fake.of("reactions.add", "C0SOCKET")] == [ts], "progress shown"
    assert [c.token for c in fake.of("apps.connections.open")][:1] == ["xapp-1"]
