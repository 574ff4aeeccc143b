"""Local fake Gemini and Cohere HTTP APIs, written from their public REST shapes, for the real SDK clients.

Each fake runs an aiohttp server on 127.0.0.1 (random port) in a background thread. Tests steer it with plain
attributes: `status` (answer every call with this HTTP error), `fail_next` (errors for the next calls, in order),
`delay` (seconds before replying; `delays` adds more per path ending, e.g. {":generateContent": 0.2}),
`reply` (a function from the request to the model's text, for Gemini).
Every request is recorded (`calls`) so tests can assert what the SDK actually sent. Like the real APIs, each
fake refuses with HTTP 400 a request that breaks the public shape (unknown fields, a response schema outside
Gemini's OpenAPI subset, a task or input type that does not exist, too many texts, a missing model...), and says
why in `refused`; a test that expects success therefore fails on a malformed request.

Gemini:  POST /v1/models/{model}:generateContent and :batchEmbedContents (google-genai 3 calls v1; v1beta too)
Cohere:  POST /v2/embed, POST /v2/rerank
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

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
        self.refused: list[str] = []  # why requests were refused as malformed (HTTP 400)
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

    def start(self) -> Self:
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

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def reset(self) -> None:
        self.calls.clear()
        self.refused.clear()
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
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
        status = self.fail_next.pop(0) if self.fail_next else self.status
        return body, (self.error(status) if status else None)

    def error(self, status: int, message: str = "fake error") -> web.Response:
        raise NotImplementedError

    def malformed(self, problem: str | None) -> web.Response | None:
        """The 400 the real API gives a request that breaks its shape, or None when the request is well formed."""
        if problem is None:
            return None
        self.refused.append(problem)
        return self.error(400, problem)

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

    def error(self, status: int, message: str = "fake error") -> web.Response:
        names = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED",
                 500: "INTERNAL", 503: "UNAVAILABLE"}
        return web.json_response({"error": {"code": status, "message": message,
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
        refused = self.malformed(gemini_generate_problem(body))
        if refused is not None:
            return refused
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
        refused = self.malformed(gemini_embed_problem(body, request.match_info["model"]))
        if refused is not None:
            return refused
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

    def error(self, status: int, message: str = "") -> web.Response:
        return web.json_response({"message": message or f"fake error {status}"}, status=status)

    def unauthorised(self, request: web.Request) -> web.Response | None:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        return None if scheme == "Bearer" and token.strip() else self.error(401, "no api key supplied")

    async def embed(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        failure = failure or self.unauthorised(request) or self.malformed(cohere_embed_problem(body))
        if failure is not None:
            return failure
        dim = int(body.get("output_dimension", 1536))
        return web.json_response({
            "id": "fake", "response_type": "embeddings_by_type", "texts": body["texts"],
            "embeddings": {"float": [hashed_vector(t, dim) for t in body["texts"]]},
            "meta": {"api_version": {"version": "2"}}})

    async def rerank(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        failure = failure or self.unauthorised(request) or self.malformed(cohere_rerank_problem(body))
        if failure is not None:
            return failure
        scored = sorted(((i, overlap(body["query"], d)) for i, d in enumerate(body["documents"])),
                        key=lambda r: -r[1])[: body.get("top_n") or len(body["documents"])]
        return web.json_response({"id": "fake", "results": [{"index": i, "relevance_score": s} for i, s in scored],
                                  "meta": {"api_version": {"version": "2"}}})


# --- what the real APIs refuse (from their public REST references) ------------------------------------------------

def _camel(key: str) -> str:
    """Google's JSON APIs accept a field in lowerCamelCase or in its proto (snake_case) spelling."""
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _unknown(obj: Any, allowed: set[str], where: str) -> str | None:
    if not isinstance(obj, dict):
        return f"{where}: expected an object"
    extra = sorted(k for k in obj if _camel(k) not in allowed)
    return f'Invalid JSON payload received. Unknown name "{extra[0]}" at \'{where}\'' if extra else None


def _get(obj: dict[str, Any], camel: str) -> Any:
    return next((v for k, v in obj.items() if _camel(k) == camel), None)


GENERATE_FIELDS = {"contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings",
                   "cachedContent", "model"}
GENERATION_CONFIG_FIELDS = {"stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema",
                            "responseModalities", "candidateCount", "maxOutputTokens", "temperature", "topP", "topK",
                            "seed", "presencePenalty", "frequencyPenalty", "responseLogprobs", "logprobs",
                            "thinkingConfig", "mediaResolution", "speechConfig", "imageConfig"}
THINKING_FIELDS = {"includeThoughts", "thinkingBudget", "thinkingLevel"}
# Gemini's Schema: a selected subset of the OpenAPI 3.0 schema object.
SCHEMA_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
                 "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example",
                 "anyOf", "propertyOrdering", "default", "items", "minimum", "maximum"}
SCHEMA_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
EMBED_TASKS = {"TASK_TYPE_UNSPECIFIED", "RETRIEVAL_QUERY", "RETRIEVAL_DOCUMENT", "SEMANTIC_SIMILARITY",
               "CLASSIFICATION", "CLUSTERING", "QUESTION_ANSWERING", "FACT_VERIFICATION", "CODE_RETRIEVAL_QUERY"}


def _content_problem(content: Any, where: str, roles: set[str | None]) -> str | None:
    problem = _unknown(content, {"role", "parts"}, where)
    if problem:
        return problem
    if content.get("role") not in roles:
        return f"{where}.role: please use a valid role: {', '.join(sorted(r for r in roles if r))}"
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        return f"{where}.parts: must not be empty"
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            return f"{where}.parts: each part needs text"
    return None


def schema_problem(schema: Any, where: str = "generation_config.response_schema") -> str | None:
    problem = _unknown(schema, SCHEMA_FIELDS, where)
    if problem:
        return problem
    kind = schema.get("type")
    if kind not in SCHEMA_TYPES:
        return f"{where}.type: invalid value {kind!r}"
    properties = schema.get("properties") or {}
    if kind == "OBJECT" and not properties:
        return f"{where}.properties: should be non-empty for OBJECT type"
    if kind == "ARRAY" and "items" not in schema:
        return f"{where}.items: missing field"
    for listed in ("required", "propertyOrdering"):
        names = _get(schema, listed) or []
        if any(name not in properties for name in names):
            return f"{where}.{listed}: names a property that is not defined"
    for name, sub in properties.items():
        if problem := schema_problem(sub, f"{where}.properties[{name}]"):
            return problem
    return schema_problem(schema["items"], f"{where}.items") if "items" in schema else None


def gemini_generate_problem(body: dict[str, Any]) -> str | None:
    problem = _unknown(body, GENERATE_FIELDS, "GenerateContentRequest")
    if problem:
        return problem
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return "contents is not specified"
    for i, content in enumerate(contents):
        if problem := _content_problem(content, f"contents[{i}]", {"user", "model"}):
            return problem
    system = _get(body, "systemInstruction")
    if system is not None and (problem := _content_problem(system, "system_instruction", {None, "user"})):
        return problem
    config = _get(body, "generationConfig") or {}
    if problem := _unknown(config, GENERATION_CONFIG_FIELDS, "generation_config"):
        return problem
    temperature = _get(config, "temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        return "generation_config.temperature: must be in [0.0, 2.0]"
    thinking = _get(config, "thinkingConfig")
    if thinking is not None and (problem := _unknown(thinking, THINKING_FIELDS, "generation_config.thinking_config")):
        return problem
    schema = _get(config, "responseSchema")
    if schema is not None:
        if _get(config, "responseMimeType") not in ("application/json", "text/x.enum"):
            return "generation_config.response_schema needs response_mime_type application/json or text/x.enum"
        return schema_problem(schema)
    return None


def gemini_embed_problem(body: dict[str, Any], model: str) -> str | None:
    problem = _unknown(body, {"requests"}, "BatchEmbedContentsRequest")
    if problem:
        return problem
    requests = body.get("requests")
    if not isinstance(requests, list) or not 1 <= len(requests) <= 100:
        return "requests: between 1 and 100 requests per batch"
    for i, item in enumerate(requests):
        where = f"requests[{i}]"
        problem = _unknown(item, {"model", "content", "taskType", "title", "outputDimensionality"}, where)
        if problem or (problem := _content_problem(item.get("content"), f"{where}.content", {None, "user"})):
            return problem
        if item.get("model") != f"models/{model}":
            return f"{where}.model: {item.get('model')!r} does not match the batch's model models/{model}"
        if _get(item, "taskType") not in (None, *EMBED_TASKS):
            return f"{where}.task_type: invalid value {_get(item, 'taskType')!r}"
        dim = _get(item, "outputDimensionality")
        if dim is not None and not (isinstance(dim, int) and 1 <= dim <= 3072):
            return f"{where}.output_dimensionality: must be between 1 and 3072"
    return None


COHERE_INPUT_TYPES = {"search_document", "search_query", "classification", "clustering", "image"}
COHERE_EMBEDDING_TYPES = {"float", "int8", "uint8", "binary", "ubinary", "base64"}


def cohere_embed_problem(body: dict[str, Any]) -> str | None:
    extra = set(body) - {"texts", "images", "inputs", "model", "input_type", "embedding_types", "output_dimension",
                         "max_tokens", "truncate"}
    if extra:
        return f"invalid request: unknown field(s) {sorted(extra)}"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "invalid request: model must be specified"
    if body.get("input_type") not in COHERE_INPUT_TYPES:
        return f"invalid request: input_type must be one of {sorted(COHERE_INPUT_TYPES)}"
    texts = body.get("texts")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return "invalid request: texts must be a non-empty list of strings"
    if len(texts) > 96:
        return f"invalid request: texts can have at most 96 elements, but got {len(texts)}"
    types = body.get("embedding_types", ["float"])
    if not isinstance(types, list) or not set(types) <= COHERE_EMBEDDING_TYPES:
        return f"invalid request: embedding_types must be among {sorted(COHERE_EMBEDDING_TYPES)}"
    if body.get("output_dimension", 1536) not in (256, 512, 1024, 1536):
        return "invalid request: output_dimension must be one of 256, 512, 1024, 1536"
    return None


def cohere_rerank_problem(body: dict[str, Any]) -> str | None:
    extra = set(body) - {"model", "query", "documents", "top_n", "max_tokens_per_doc"}
    if extra:
        return f"invalid request: unknown field(s) {sorted(extra)}"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "invalid request: model must be specified"
    if not isinstance(body.get("query"), str) or not body["query"].strip():
        return "invalid request: query must be a non-empty string"
    documents = body.get("documents")
    if not isinstance(documents, list) or not 1 <= len(documents) <= 1000 or not all(
            isinstance(d, str) for d in documents):
        return "invalid request: documents must be a list of 1 to 1000 strings"
    top_n = body.get("top_n")
    if top_n is not None and not (isinstance(top_n, int) and top_n >= 1):
        return "invalid request: top_n must be a positive integer"
    return None


class WrongEndpoint(FakeServer):
    """What a wrong base URL or a misrouted proxy answers: an HTML 404 page for every path."""

    def routes(self) -> list[web.RouteDef]:
        return []

    async def unknown(self, request: web.Request) -> web.Response:
        self.calls.append(Call(request.path, {}, dict(request.headers)))
        return web.Response(status=404, text="<html><body><h1>404 Not Found</h1></body></html>",
                            content_type="text/html")
