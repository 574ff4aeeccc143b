"""`navibot serve` makes its Slack Web API calls through one kept-open aiohttp session (connections reused), not a
new session and connection per call as slack_sdk does without one; the session is closed when the server stops."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from pydantic import SecretStr

from adapters.slack.settings import SlackSettings
from bot.config.settings import Settings
from bot.server.app import Server, build_server_app
from bot.wiring.runtime import Bot, build_bot
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, FakeSlack

SECRET = "session-test-secret"


class PeerCountingSlack(FakeSlack):
    """The fake Slack Web API, noting the client port each call came from (one port = one TCP connection)."""

    def __init__(self) -> None:
        super().__init__()
        self.peers: list[int] = []

    async def _api(self, request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.peers.append(int(peer[1]) if peer else -1)
        return await super()._api(request)


@pytest.fixture
def bot(demo_store: Path, tmp_path: Path) -> Iterator[Bot]:
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    built = build_bot(settings, demo_store, tmp_path / "conversations.sqlite3")
    yield built
    built.close()


def signed_mention(channel: str) -> tuple[bytes, dict[str, str]]:
    ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
    event = {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> Can college students get SNAP?",
             "ts": ts, "channel": channel, "event_ts": ts, "team": TEAM_ID}
    body = json.dumps({"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                       "event": event, "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
                       "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]})
    stamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return body.encode(), {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
                           "Content-Type": "application/json"}


def test_web_api_calls_reuse_one_session_and_it_closes_at_stop(bot: Bot) -> None:
    async def scenario() -> tuple[int, int, Any, bool]:
        fake = PeerCountingSlack()
        await fake.start()
        slack = SlackSettings(_env_file=None, slack_api_url=fake.api_url,  # type: ignore[call-arg]
                              slack_bot_token=SecretStr("xoxb-test"), slack_signing_secret=SecretStr(SECRET))
        server = Server(build_server_app(bot, bot.core.settings, slack, None))
        try:
            port = await server.start("127.0.0.1", 0)
            app = server.state.slack
            assert app is not None
            session = app.client.session
            assert session is not None and not session.closed
            before = len(fake.peers)
            async with aiohttp.ClientSession() as client:
                for n in range(4):  # one after the other: a pooled connection is free again for the next calls
                    body, headers = signed_mention(f"C0SESSION{n}")
                    async with client.post(f"http://127.0.0.1:{port}/slack/events", data=body,
                                           headers=headers) as response:
                        assert response.status == 200
                    await fake.wait_for("chat.postMessage", 1, f"C0SESSION{n}")
                    await asyncio.sleep(0.2)  # its :eyes: removed
        finally:
            await server.stop()
            await fake.stop()
        calls = fake.peers[before:]
        return len(calls), len(set(calls)), session, session.closed

    calls, connections, _, closed = asyncio.run(scenario())
    assert calls >= 12  # per question: reactions.add, chat.postMessage, reactions.remove at least
    assert connections <= 3  # without the kept session: one connection per call
    assert closed
