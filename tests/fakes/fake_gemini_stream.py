"""A fake Gemini that also streams (POST /v1/models/{model}:streamGenerateContent?alt=sse), for the real
google-genai client's generate_content_stream.

The "model" writes its text as tokens (about four characters each) at a steerable pace: `first_token_delay`
seconds before the first, then `tokens_per_second`. `stream_reply(body)` gives the text (default: the first sentence
of the paragraph sharing most words with the question, its id in brackets); `break_after` drops the connection
after that many tokens. The time each token was sent is recorded in `sent` (monotonic), so a test or benchmark
can tell when the model finished a sentence."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.fake_models import PARAGRAPH, FakeGemini, gemini_generate_problem, overlap

TOKEN = re.compile(r"\S{1,4}\s*|\s+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


class FakeStreamingGemini(FakeGemini):
    def __init__(self) -> None:
        super().__init__()
        self.stream_reply: Callable[[dict[str, Any]], str] | None = None
        self.first_token_delay = 0.0
        self.tokens_per_second = 0.0  # 0: as fast as possible
        self.break_after: int | None = None
        self.sent: list[tuple[float, str]] = []

    def reset(self) -> None:
        super().reset()
        self.stream_reply, self.first_token_delay, self.tokens_per_second, self.break_after = None, 0.0, 0.0, None
        self.sent = []

    def routes(self) -> list[web.RouteDef]:
        return [web.post(r"/{version:v1|v1beta}/models/{model:[^/:]+}:streamGenerateContent", self.stream),
                *super().routes()]

    @classmethod
    def default_stream_answer(cls, body: dict[str, Any]) -> str:
        text = cls.text_of(body)
        question = text.rsplit("Question:", 1)[-1]
        paragraphs = PARAGRAPH.findall(text)
        if not paragraphs:
            return "I could not find this in the knowledge base."
        sub_id, paragraph = max(paragraphs, key=lambda p: overlap(question, p[1]))
        sentence = re.split(r"(?<=[.!?])\s+", paragraph.strip())[0].rstrip(".!?")
        return f"{sentence} [{sub_id}]."

    async def stream(self, request: web.Request) -> web.StreamResponse:
        body, failure = await self._begin(request)
        if failure is not None:
            return failure
        if request.query.get("alt") != "sse":
            return self.error(400, "streamGenerateContent needs alt=sse here")
        if not request.headers.get("x-goog-api-key"):
            return self.error(401)
        refused = self.malformed(gemini_generate_problem(body))
        if refused is not None:
            return refused
        text = (self.stream_reply or self.default_stream_answer)(body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        pieces = tokens(text)
        for i, piece in enumerate(pieces):
            if self.break_after is not None and i >= self.break_after:
                assert request.transport is not None
                request.transport.close()  # the connection drops mid-answer
                return response
            await asyncio.sleep(self.first_token_delay if i == 0 else
                                (1 / self.tokens_per_second if self.tokens_per_second else 0))
            chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]},
                                                     "index": 0}], "modelVersion": request.match_info["model"]}
            if i == len(pieces) - 1:
                chunk["candidates"][0]["finishReason"] = "STOP"
                chunk["usageMetadata"] = {"promptTokenCount": 10, "candidatesTokenCount": len(pieces),
                                          "totalTokenCount": 10 + len(pieces)}
            await response.write(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
            self.sent.append((time.monotonic(), piece))
        await response.write_eof()
        return response
