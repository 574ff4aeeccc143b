"""A fake Bot Connector (the Teams side of the Activity protocol) on 127.0.0.1: records what the bot sends.

Implements the three calls the bot makes, with the public REST shapes:
  POST /v3/conversations/{conversationId}/activities                 send to a conversation
  POST /v3/conversations/{conversationId}/activities/{replyToId}     reply to an activity
  PUT  /v3/conversations/{conversationId}/activities/{activityId}    update an activity
Each answers `{"id": ...}` (a ResourceResponse), as the real service does.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(slots=True)
class Call:
    method: str
    conversation_id: str
    reply_to_id: str | None  # POST .../activities/{replyToId}
    activity_id: str | None  # PUT .../activities/{activityId}
    body: dict[str, Any]
    authorization: str | None

    @property
    def type(self) -> str:
        return str(self.body.get("type"))

    def cards(self) -> list[dict[str, Any]]:
        return [a["content"] for a in self.body.get("attachments") or []
                if a.get("contentType") == "application/vnd.microsoft.card.adaptive"]


@dataclass
class FakeConnector:
    calls: list[Call] = field(default_factory=list)
    url: str = ""
    fail_next: list[int] = field(default_factory=list)  # statuses to answer the next POSTs with (429, 503…)
    refuse_citations: bool = False  # answer 400 to a message (or update) with citation entities, as Teams may
    _runner: web.AppRunner | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def start(self) -> FakeConnector:
        app = web.Application()
        app.router.add_post("/v3/conversations/{conversation}/activities", self._post)
        app.router.add_post("/v3/conversations/{conversation}/activities/{activity}", self._post)
        app.router.add_put("/v3/conversations/{conversation}/activities/{activity}", self._put)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _post(self, request: web.Request) -> web.Response:
        if self.fail_next:
            status = self.fail_next.pop(0)
            return web.json_response({"error": {"code": "ServiceError", "message": "try again"}}, status=status,
                                     headers={"Retry-After": "0"} if status == 429 else None)
        body = await request.json()
        if self.refuse_citations and any(e.get("citation") for e in body.get("entities") or []):
            return web.json_response({"error": {"code": "BadArgument", "message": "Error parsing message entity"}},
                                     status=400)
        self.calls.append(Call("POST", request.match_info["conversation"], request.match_info.get("activity"), None,
                               body, request.headers.get("Authorization")))
        return web.json_response({"id": f"bot-{next(self._ids)}"})

    async def _put(self, request: web.Request) -> web.Response:
        body = await request.json()
        if self.refuse_citations and any(e.get("citation") for e in body.get("entities") or []):
            return web.json_response({"error": {"code": "BadArgument", "message": "Error parsing message entity"}},
                                     status=400)
        self.calls.append(Call("PUT", request.match_info["conversation"], None, request.match_info["activity"],
                               body, request.headers.get("Authorization")))
        return web.json_response({"id": request.match_info["activity"]})

    def messages(self) -> list[Call]:
        return [c for c in self.calls if c.method == "POST" and c.type == "message"]

    async def wait_for(self, predicate: Callable[[list[Call]], bool], timeout: float = 10.0) -> list[Call]:
        """Polls the recorded calls until `predicate` holds (fails after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while not predicate(self.calls):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting; calls so far: {[(c.method, c.type) for c in self.calls]}")
            await asyncio.sleep(0.02)
        return list(self.calls)

    async def wait_messages(self, count: int, timeout: float = 10.0) -> list[Call]:
        """The posted message activities, once there are at least `count` of them."""
        await self.wait_for(lambda calls: len([c for c in calls if c.method == "POST" and c.type == "message"])
                            >= count, timeout)
        return self.messages()
