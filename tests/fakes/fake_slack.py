"""A fake Slack Web API on 127.0.0.1 for end-to-end tests: it answers the methods the app calls with the shapes
Slack documents (https://docs.slack.dev/reference/methods), records every call, and can be told to answer the next
call of a method with a 429 (Retry-After) or an error. It also receives `response_url` posts (slash commands)."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
from aiohttp import web

if TYPE_CHECKING:
    from adapters.slack.app import SlackApp
    from bot.port import ChatBot

# Slack refuses a message whose blocks hold more than about 12,000 characters of text in all, with
# msg_blocks_too_long: a limit the reference pages do not list (slackapi/bolt-js#2509 measured it near 12-13k).
BLOCKS_TEXT_LIMIT = 12_000
TEAM_ID = "T0NAVI"
BOT_USER_ID = "U0NAVIBOT"
BOT_ID = "B0NAVIBOT"
T = TypeVar("T")


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    token: str | None
    at: float = field(default_factory=time.monotonic)
    result: dict[str, Any] = field(default_factory=dict)  # what the fake answered


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.responses: list[dict[str, Any]] = []  # bodies posted to response_url
        self.failures: dict[str, list[tuple[int, dict[str, Any], dict[str, str]]]] = {}
        self._ts = itertools.count(1)
        self.app = web.Application()
        self.app.router.add_post("/api/{method}", self._api)
        self.app.router.add_post("/response/{id}", self._response_url)
        self.app.router.add_get("/socket", self._socket)
        self.sockets: list[web.WebSocketResponse] = []
        self.socket_acks: list[dict[str, Any]] = []  # what the app sent back over Socket Mode
        self.runner: web.AppRunner | None = None
        self.url = ""
        self.streams: dict[str, list[dict[str, Any]]] = {}  # chat stream ts -> the chunks it received, in order

    async def start(self) -> None:
        self.runner = web.AppRunner(self.app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/"

    def response_url(self, name: str) -> str:
        return f"{self.url}/response/{name}"

    # --- scripting ----------------------------------------------------------------------------------------------

    def rate_limit_next(self, method: str, retry_after: int = 1) -> None:
        self.failures.setdefault(method, []).append(
            (429, {"ok": False, "error": "ratelimited"}, {"Retry-After": str(retry_after)}))

    def fail_next(self, method: str, error: str) -> None:
        self.failures.setdefault(method, []).append((200, {"ok": False, "error": error}, {}))

    def streamed(self, ts: str) -> str:
        """The markdown text a chat stream has shown so far."""
        return "".join(str(c.get("text", "")) for c in self.streams.get(ts, []) if c.get("type") == "markdown_text")

    def of(self, method: str, channel: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method and (channel is None or c.args.get("channel") == channel)]

    # --- handlers -----------------------------------------------------------------------------------------------

    async def _args(self, request: web.Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            args.update(await request.json())
        else:
            args.update(dict(await request.post()))
        for key in ("blocks", "view"):  # form-encoded calls send these as JSON strings
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        return args

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await self._args(request)
        auth = request.headers.get("Authorization", "")
        call = Call(method, args, auth.removeprefix("Bearer ") or None)
        self.calls.append(call)
        scripted = self.failures.get(method)
        if scripted:
            status, call.result, headers = scripted.pop(0)
            return web.json_response(call.result, status=status, headers=headers)
        call.result = self._answer(method, args)
        return web.json_response(call.result)

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        ts = f"{int(time.time())}.{next(self._ts):06d}"
        if method in {"chat.postMessage", "chat.update"} and blocks_text_length(args.get("blocks")) > BLOCKS_TEXT_LIMIT:
            return {"ok": False, "error": "msg_blocks_too_long"}
        if method == "auth.test":
            return {"ok": True, "url": "https://navi.example.slack.com/", "team": "Navigators", "user": "navibot",
                    "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": BOT_ID, "is_enterprise_install": False}
        if method == "chat.postMessage":
            message = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": ts,
                       "text": args.get("text"), "blocks": args.get("blocks")}
            if args.get("thread_ts"):
                message["thread_ts"] = args["thread_ts"]
            return {"ok": True, "channel": args.get("channel"), "ts": ts, "message": message}
        if method == "chat.update":
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts"), "text": args.get("text")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": ts}
        if method in {"reactions.add", "reactions.remove"}:
            return {"ok": True}
        if method in {"assistant.threads.setStatus", "assistant.threads.setSuggestedPrompts",
                      "assistant.threads.setTitle"}:
            return {"ok": True} if args.get("channel_id") and args.get("thread_ts") else {
                "ok": False, "error": "invalid_arguments"}
        if method == "chat.startStream":  # outside a DM Slack must know whose request is streamed
            if not args.get("thread_ts") or (not str(args.get("channel", "")).startswith("D") and not (
                    args.get("recipient_user_id") and args.get("recipient_team_id"))):
                return {"ok": False, "error": "invalid_arguments"}
            self.streams[ts] = [*(args.get("chunks") or [])]
            return {"ok": True, "channel": args.get("channel"), "ts": ts}
        if method in {"chat.appendStream", "chat.stopStream"}:
            if args.get("ts") not in self.streams:
                return {"ok": False, "error": "message_not_found"}
            self.streams[args["ts"]].extend(args.get("chunks") or [])
            if method == "chat.appendStream":
                return {"ok": True, "channel": args.get("channel"), "ts": args["ts"]}
            return {"ok": True, "channel": args.get("channel"), "ts": args["ts"],
                    "message": {"type": "message", "bot_id": BOT_ID, "ts": args["ts"],
                                "text": self.streamed(args["ts"]), "blocks": args.get("blocks")}}
        if method == "views.open":
            return {"ok": True, "view": {"id": "V0REASON", **(args.get("view") or {})}}
        if method == "apps.connections.open":
            return {"ok": True, "url": f"{self.url.replace('http', 'ws')}/socket"}
        return {"ok": False, "error": "unknown_method"}

    async def _response_url(self, request: web.Request) -> web.Response:
        self.responses.append({"id": request.match_info["id"], **(await request.json())})
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        """Socket Mode: the app connects here (the URL apps.connections.open gave it) and acks envelopes."""
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0NAVI"},
                            "debug_info": {"host": "fake", "approximate_connection_time": 3600}})
        async for message in ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                self.socket_acks.append(json.loads(message.data))
        return ws

    async def push(self, envelope: dict[str, Any]) -> None:
        """Sends a Socket Mode envelope to the connected app."""
        for ws in self.sockets:
            if not ws.closed:
                await ws.send_json(envelope)

    async def wait_for(self, method: str, count: int = 1, channel: str | None = None,
                       timeout: float = 10.0) -> list[Call]:
        """Polls the recorded calls until `count` calls of `method` arrived (the app answers in the background)."""
        deadline = time.monotonic() + timeout
        while len(self.of(method, channel)) < count:
            if time.monotonic() > deadline:
                seen = [c.method for c in self.calls]
                raise AssertionError(f"timed out waiting for {count} x {method} (channel {channel}); saw {seen}")
            await asyncio.sleep(0.01)
        return self.of(method, channel)

    async def wait_for_response(self, id_: str, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            found = [r for r in self.responses if r["id"] == id_]
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for a response_url post {id_}")
            await asyncio.sleep(0.01)


def blocks_text_length(node: Any) -> int:
    """Characters of every `text` string in a block tree (what Slack's cumulative limit counts)."""
    if isinstance(node, dict):
        return sum(len(v) if k == "text" and isinstance(v, str) else blocks_text_length(v) for k, v in node.items())
    if isinstance(node, list):
        return sum(blocks_text_length(v) for v in node)
    return 0


class BackgroundLoop:
    """An event loop in a daemon thread, so synchronous tests (and `navibot` itself, which runs its own loop) can
    talk to servers that live on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@dataclass
class ServedApp:
    """The Slack app of a bot served in HTTP mode on 127.0.0.1, talking to its own fake Web API."""

    fake: FakeSlack
    slack: SlackApp
    url: str  # the Request URL Slack would POST events to
    session: aiohttp.ClientSession
    runner: web.AppRunner

    async def stop(self) -> None:
        await self.session.close()
        await self.runner.cleanup()  # finishes the answers in progress
        await self.fake.stop()


async def serve_http(bot: ChatBot, signing_secret: str, bot_token: str = "xoxb-test") -> ServedApp:
    """`navibot slack` in HTTP mode for a test: the real Bolt app behind aiohttp, on the running loop."""
    from pydantic import SecretStr

    from adapters.slack.app import add_slack_routes, build_slack_app
    from adapters.slack.settings import SlackSettings

    fake = FakeSlack()
    await fake.start()
    settings = SlackSettings(_env_file=None, slack_bot_token=SecretStr(bot_token),  # type: ignore[call-arg]
                             slack_signing_secret=SecretStr(signing_secret), slack_api_url=fake.api_url)
    slack = build_slack_app(bot, settings)
    web_app = web.Application()
    add_slack_routes(web_app, slack)
    runner = web.AppRunner(web_app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return ServedApp(fake, slack, f"http://127.0.0.1:{port}/slack/events", aiohttp.ClientSession(), runner)
