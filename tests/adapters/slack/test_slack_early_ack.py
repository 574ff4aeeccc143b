"""An Events API callback is acknowledged at the door, before Bolt dispatches it: Slack needs nothing but an empty
200 for an event, and Bolt's dispatch (its middleware chain, listener matching, a Web API client per request) cost
~0.4 ms of event-loop time per request, which 200 questions at once queued in front of the last acks. Everything
whose ack carries something (URL verification's challenge, slash commands, buttons, forms) still goes through Bolt
before the response."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp.test_utils import make_mocked_request
from pydantic import SecretStr
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from adapters.slack.app import SlackApp, event_callback, events_handler
from adapters.slack.settings import SlackSettings
from bot.config.settings import Settings
from bot.wiring.runtime import build_bot
from tests.adapters.slack.test_slack import SECRET as HARNESS_SECRET
from tests.adapters.slack.test_slack import Harness
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, serve_http

SECRET = "early-ack-secret"
EVENT = json.dumps({"type": "event_callback", "team_id": "T0NAVI", "api_app_id": "A0NAVI", "event_id": "Ev0EARLY",
                    "event": {"type": "app_mention", "user": "U0NAV", "text": "<@U0BOT> hi", "ts": "1.000001",
                              "channel": "C0EARLY", "event_ts": "1.000001"}})


class Recorded(SlackApp):
    """The real SlackApp and door; Bolt's dispatch replaced by a recorder (no Web API: auth.test would be called)."""

    def __init__(self, status: int = 200, body: str = "") -> None:
        self.errors: list[tuple[Any, ...]] = []
        bot: Any = SimpleNamespace(suggested_questions=list, is_chat_command=lambda text: False,
                                   report_error=lambda *args: self.errors.append(args))
        super().__init__(bot, SlackSettings(_env_file=None, slack_bot_token=SecretStr("xoxb-test"),  # type: ignore[call-arg]
                                            slack_signing_secret=SecretStr(SECRET)))
        self.dispatched: list[AsyncBoltRequest] = []

        async def dispatch(request: AsyncBoltRequest) -> BoltResponse:
            self.dispatched.append(request)
            return BoltResponse(status=status, body=body)

        self.app.async_dispatch = dispatch  # type: ignore[method-assign,assignment]


def signed_request(body: str, content_type: str = "application/json") -> Any:
    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    request = make_mocked_request("POST", "/slack/events", headers={
        "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": content_type})
    request._read_bytes = body.encode()
    return request


def test_an_event_is_acknowledged_before_bolt_dispatches_it_then_bolt_gets_it_whole() -> None:
    async def scenario() -> tuple[int, str, int, int, Recorded]:
        slack = Recorded()
        response = await events_handler(slack)(signed_request(EVENT))
        seen_at_ack, under_way = len(slack.dispatched), len(slack.tasks)
        await slack.drain(5)
        return response.status, response.text or "", seen_at_ack, under_way, slack

    status, body, seen_at_ack, under_way, slack = asyncio.run(scenario())
    assert (status, body) == (200, "")  # the empty 200 Bolt itself sends for an event
    assert seen_at_ack == 0 and under_way == 1  # not dispatched yet, but tracked (a shutdown waits for it)
    [request] = slack.dispatched
    # Bolt gets the raw body and the signature headers: its own RequestVerification checks them again.
    assert request.raw_body == EVENT and request.body["event"]["channel"] == "C0EARLY"
    assert request.headers["x-slack-signature"][0].startswith("v0=") and request.headers["x-slack-request-timestamp"]
    assert not slack.errors


@pytest.mark.parametrize(("body", "content_type"), [
    (json.dumps({"type": "url_verification", "token": "t", "challenge": "c-123"}), "application/json"),
    (urlencode({"payload": json.dumps({"type": "block_actions", "actions": []})}), "application/x-www-form-urlencoded"),
    (urlencode({"command": "/navibot", "text": "help"}), "application/x-www-form-urlencoded"),
], ids=["url_verification", "button", "slash_command"])
def test_requests_whose_ack_carries_something_go_through_bolt_before_the_response(body: str,
                                                                                  content_type: str) -> None:
    async def scenario() -> tuple[int, str, int]:
        slack = Recorded(body="from bolt")
        response = await events_handler(slack)(signed_request(body, content_type))
        return response.status, response.text or "", len(slack.dispatched)

    assert asyncio.run(scenario()) == (200, "from bolt", 1)


def test_an_event_no_listener_takes_is_logged_and_one_bolt_refuses_is_counted(caplog: pytest.LogCaptureFixture
                                                                               ) -> None:
    async def scenario(status: int) -> Recorded:
        slack = Recorded(status=status)
        assert (await events_handler(slack)(signed_request(EVENT))).status == 200
        await slack.drain(5)
        return slack

    with caplog.at_level(logging.WARNING, logger="adapters.slack.app"):
        unhandled = asyncio.run(scenario(404))
    assert not unhandled.errors
    assert any("404" in r.getMessage() and "app_mention" in r.getMessage() for r in caplog.records), caplog.text
    refused = asyncio.run(scenario(401))
    assert refused.errors == [("bad_request", "slack")]


@pytest.mark.parametrize(("content_type", "charset", "raw"), [
    ("application/x-www-form-urlencoded", None, b"payload=%7B%7D"),
    ("application/json", "latin-1", EVENT.encode()),
    ("application/json", None, b'{"type": "event_callback", "x": "\xff"}'),
    ("application/json", None, b"not json"),
    ("application/json", None, b'["event_callback"]'),
    ("application/json", None, b'{"type": "url_verification", "challenge": "c"}'),
    ("application/json", None, ("[" * 50_000 + "]" * 50_000).encode()),
], ids=["form", "other_charset", "not_utf8", "not_json", "not_an_object", "url_verification", "too_deep"])
def test_only_a_plain_utf8_event_callback_takes_the_early_ack(content_type: str, charset: str | None,
                                                              raw: bytes) -> None:
    assert event_callback(content_type, charset, raw) is None
    assert event_callback("application/json", None, EVENT.encode()) == EVENT
    assert event_callback("application/json", "UTF-8", EVENT.encode()) == EVENT


@pytest.fixture(scope="module")
def served(demo_store: Path) -> Iterator[Harness]:
    """The real Bolt app behind aiohttp against the fake Slack Web API, as tests/adapters/slack/test_slack.py."""
    folder = demo_store.parent
    bot = build_bot(Settings(_env_file=None, data_dir=folder), demo_store,  # type: ignore[call-arg]
                    folder / "early-ack-conversations.sqlite3")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    app = asyncio.run_coroutine_threadsafe(serve_http(bot, HARNESS_SECRET), loop).result(30)
    harness = Harness(loop, app.fake, app.slack, bot, app.url, app.session)
    yield harness
    harness.run(app.stop())
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    bot.close()


def test_an_event_acknowledged_just_before_a_shutdown_is_still_answered(served: Harness) -> None:
    """The shutdown drain (bot/server/app.py drain_slack: until no Slack task is left) finds the acknowledged event
    tracked from the ack on: Bolt's dispatch, then the question it starts, then the answer posted."""
    async def drain_like_a_shutdown() -> None:
        while served.slack.tasks:
            await served.slack.drain(10)

    channel = "C0DRAIN" + uuid.uuid4().hex[:4].upper()
    ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
    status, _, _ = served.event({"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> Who can get WIC?",
                                 "ts": ts, "channel": channel, "event_ts": ts, "team": TEAM_ID})
    assert status == 200
    served.run(drain_like_a_shutdown())
    [answer] = served.fake.of("chat.postMessage", channel)  # posted by the time the drain ended, no later
    assert answer.args.get("thread_ts") == ts
