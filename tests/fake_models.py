"""Local fake Gemini and Cohere HTTP APIs, written from their public REST shapes, for the real SDK clients.

Each fake runs an aiohttp server on 127.0.0.1 (random port) in a background thread. Tests steer it with plain
attributes: `status` (answer every call with this HTTP error), `fail_next` (errors for the next calls, in order),
`delay` (seconds before replying; `delays` adds more per path ending, e.g. {":generateContent": 0.2}),
`reply` (a function from the request to the model's text, for Gemini).
Every request is recorded (`calls`) so tests can assert what the SDK actually sent.

Gemini:  POST /v1/models/{model}:generateContent and :batchEmbedContents (google-genai 3 calls v1; v1beta too)
Cohere:  POST /v2/embed, POST /v2/rerank
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

WORD = re.compile(r"[a-z0-9]+")
PARAGRAPH = re.compile(r'<paragraph id="([^"]+)"[^>]*>\n(.*?)\n</paragraph>', re.DOTALL)


def hashed_vector(text: str, dim: int) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words are similar, as with a real embedding."""
    vector = [0.0] * dim
    for word in WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dim] += 1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


def overlap(a: str, b: str) -> float:
    words_a, words_b = set(WORD.findall(a.lower())), set(WORD.findall(b.lower()))
    return len(words_a & words_b) / max(len(words_a), 1)


@dataclass
class Call:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


class FakeServer:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.status: int | None = None
        self.fail_next: list[int] = []
        self.delay = 0.0
        self.delays: dict[str, float] = {}
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._stopping: asyncio.Event | None = None
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def routes(self) -> list[web.RouteDef]:
        raise NotImplementedError

    def start(self) -> FakeServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        self._stopping = asyncio.Event()
        app = web.Application()
        app.add_routes([*self.routes(), web.route("*", "/{tail:.*}", self.unknown)])
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        async def _stop() -> None:
            assert self._stopping is not None and self._runner is not None
            self._stopping.set()  # wakes handlers that are still "thinking"
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(_stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def reset(self) -> None:
        self.calls.clear()
        self.status, self.fail_next, self.delay, self.delays = None, [], 0.0, {}

    def paths(self) -> list[str]:
        return [c.path for c in self.calls]

    async def _begin(self, request: web.Request) -> tuple[dict[str, Any], web.Response | None]:
        """Record the call; wait `delay`; the scripted error response, if any."""
        body = await request.json()
        self.calls.append(Call(request.path, body, dict(request.headers)))
        delay = self.delay + sum(s for end, s in self.delays.items() if request.path.endswith(end))
        if delay:
            assert self._stopping is not None
            try:
                await asyncio.wait_for(self._stopping.wait(), delay)
            except TimeoutError:
                pass
        status = self.fail_next.pop(0) if self.fail_next else self.status
        return body, (self.error(status) if status else None)

    def error(self, status: int) -> web.Response:
        raise NotImplementedError

    async def unknown(self, request: web.Request) -> web.Response:
        self.calls.append(Call(request.path, {}, dict(request.headers)))
        return web.json_response({"error": {"code": 404, "message": f"no route {request.method} {request.path}",
                                            "status": "NOT_FOUND"}}, status=404)


class FakeGemini(FakeServer):
    """The Gemini Developer API. The default "model" answers with the first sentence of the paragraph that
    shares most words with the question, citing that paragraph; rewrites join the first and latest questions."""

    def __init__(self) -> None:
        super().__init__()
        self.reply: Callable[[dict[str, Any]], str] | None = None
        self.rewrite_reply: Callable[[dict[str, Any]], str] | None = None
        self.refused_keys: set[str] = set()  # answered with 403 PERMISSION_DENIED (a revoked key)

    def reset(self) -> None:
        super().reset()
        self.reply = self.rewrite_reply = None
        self.refused_keys = set()

    def routes(self) -> list[web.RouteDef]:
        return [web.post(r"/{version:v1|v1beta}/models/{model:[^/:]+}:generateContent", self.generate),
                web.post(r"/{version:v1|v1beta}/models/{model:[^/:]+}:batchEmbedContents", self.embed)]

    def error(self, status: int) -> web.Response:
        names = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        return web.json_response({"error": {"code": status, "message": "fake error",
                                             "status": names.get(status, "UNKNOWN")}}, status=status)

    @staticmethod
    def text_of(body: dict[str, Any]) -> str:
        return "\n".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))

    @staticmethod
    def system_of(body: dict[str, Any]) -> str:
        return "\n".join(p.get("text", "") for p in body.get("systemInstruction", {}).get("parts", []))

    async def generate(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        if failure is not None:
            return failure
        key = request.headers.get("x-goog-api-key")
        if not key:
            return self.error(401)
        if key in self.refused_keys:
            return self.error(403)
        if "standalone question" in self.system_of(body):
            text = (self.rewrite_reply or self.default_rewrite)(body)
        else:
            text = (self.reply or self.default_answer)(body)
        return web.json_response({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": request.match_info["model"]})

    @classmethod
    def default_answer(cls, body: dict[str, Any]) -> str:
        text = cls.text_of(body)
        question = text.rsplit("Question:", 1)[-1]
        paragraphs = PARAGRAPH.findall(text)
        if not paragraphs:
            return json.dumps({"answer": "I could not find this in the knowledge base.", "citations": []})
        sub_id, paragraph = max(paragraphs, key=lambda p: overlap(question, p[1]))
        sentence = re.split(r"(?<=[.!?])\s+", paragraph.strip())[0]
        return json.dumps({"answer": f"{sentence} [1]", "citations": [sub_id]})

    @classmethod
    def default_rewrite(cls, body: dict[str, Any]) -> str:
        text = cls.text_of(body)
        first = re.search(r"Navigator: (.*)", text)
        latest = text.rsplit("Latest question:", 1)[-1].strip()
        return json.dumps({"question": f"{latest} (about: {first.group(1) if first else ''})"})

    async def embed(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        if failure is not None:
            return failure
        embeddings = []
        for item in body["requests"]:
            text = " ".join(p.get("text", "") for p in item["content"]["parts"])
            embeddings.append({"values": hashed_vector(text, int(item.get("outputDimensionality", 3072)))})
        return web.json_response({"embeddings": embeddings})


class FakeCohere(FakeServer):
    """Cohere API v2. Rerank scores a document by the share of the query's words it contains, so a test can
    tell the reranked order from the fused one."""

    def routes(self) -> list[web.RouteDef]:
        return [web.post("/v2/embed", self.embed), web.post("/v2/rerank", self.rerank)]

    def error(self, status: int) -> web.Response:
        return web.json_response({"message": f"fake error {status}"}, status=status)

    async def embed(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        if failure is not None:
            return failure
        if len(body["texts"]) > 96:
            return self.error(400)
        dim = int(body.get("output_dimension", 1536))
        return web.json_response({
            "id": "fake", "response_type": "embeddings_by_type", "texts": body["texts"],
            "embeddings": {"float": [hashed_vector(t, dim) for t in body["texts"]]},
            "meta": {"api_version": {"version": "2"}}})

    async def rerank(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        if failure is not None:
            return failure
        scored = sorted(((i, overlap(body["query"], d)) for i, d in enumerate(body["documents"])),
                        key=lambda r: -r[1])[: body.get("top_n") or len(body["documents"])]
        return web.json_response({"id": "fake", "results": [{"index": i, "relevance_score": s} for i, s in scored],
                                  "meta": {"api_version": {"version": "2"}}})
