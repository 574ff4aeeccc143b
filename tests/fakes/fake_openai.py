"""A local fake of the OpenAI chat-completions and embeddings APIs, as OpenAI, Azure OpenAI and Ollama serve
them, for the real `openai` SDK clients (written from the public REST references).

- "openai": POST /v1/chat/completions and /v1/embeddings, `Authorization: Bearer <key>` required; a strict
  `json_schema` response format must be a valid strict schema; `dimensions` only for text-embedding-3 models.
- "azure":  POST /openai/deployments/{deployment}/chat/completions (and /embeddings) with `?api-version=`
  required, an `api-key` header or an Entra bearer token; an unknown deployment is a 404 DeploymentNotFound.
- "ollama": the /v1 paths without any key; `dimensions` is ignored (the model's own size comes back).
`ignores_schema = True` makes a server that accepts `response_format` and ignores it: the JSON comes wrapped in a
sentence and a Markdown fence, as small local models write it. As in fake_models, a request that breaks the
public shape is refused with HTTP 400 and recorded in `refused`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.fake_models import Call, FakeGemini, FakeServer, hashed_vector

CHAT_FIELDS = {"model", "messages", "temperature", "max_tokens", "max_completion_tokens", "response_format", "stream",
               "stop", "top_p", "seed", "n", "tools", "tool_choice", "user", "frequency_penalty", "presence_penalty",
               "logprobs", "top_logprobs", "stream_options", "reasoning_effort", "logit_bias", "parallel_tool_calls"}
EMBED_FIELDS = {"input", "model", "encoding_format", "dimensions", "user"}
ROLES = {"system", "developer", "user", "assistant", "tool"}
SCHEMA_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
OLLAMA_DIM = 768


def strict_schema_problem(schema: Any, where: str = "response_format.json_schema.schema") -> str | None:
    """OpenAI's structured outputs (strict): every object lists all its properties as required and forbids others."""
    if not isinstance(schema, dict) or schema.get("type") not in ("object", "array", "string", "number", "integer",
                                                                 "boolean", "null"):
        return f"Invalid schema for {where}: a JSON Schema type is required"
    if schema["type"] == "object":
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return f"Invalid schema for {where}: 'additionalProperties' is required to be supplied and to be false"
        if sorted(schema.get("required") or []) != sorted(properties):
            return f"Invalid schema for {where}: 'required' must list every key in 'properties'"
        for name, sub in properties.items():
            if problem := strict_schema_problem(sub, f"{where}.properties.{name}"):
                return problem
    if schema["type"] == "array":
        return strict_schema_problem(schema.get("items"), f"{where}.items")
    return None


def chat_problem(body: dict[str, Any], reasoning: bool = False) -> str | None:
    extra = sorted(set(body) - CHAT_FIELDS)
    if extra:
        return f"Unrecognized request argument supplied: {extra[0]}"
    if reasoning and "max_tokens" in body:  # o-series and gpt-5 models, as the API words it
        return ("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                "'max_completion_tokens' instead.")
    if reasoning and body.get("temperature", 1) != 1:
        return "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value."
    if body.get("reasoning_effort") not in (None, "minimal", "low", "medium", "high"):
        return "Invalid value for 'reasoning_effort'"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return f"Invalid value for 'messages[{i}].role'"
        if not isinstance(message.get("content"), str):
            return f"Invalid type for 'messages[{i}].content': expected a string"
    temperature = body.get("temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        return "temperature must be between 0 and 2"
    fmt = body.get("response_format")
    if fmt is None:
        return None
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if kind == "json_object":
        text = " ".join(m["content"] for m in messages).lower()
        return None if "json" in text else "'messages' must contain the word 'json' to use json_object"
    if kind == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict) or not SCHEMA_NAME.fullmatch(str(spec.get("name", ""))):
            return "response_format.json_schema.name must match ^[a-zA-Z0-9_-]{1,64}$"
        return strict_schema_problem(spec.get("schema")) if spec.get("strict") else None
    return None if kind == "text" else f"Invalid value for 'response_format.type': {kind!r}"


def embed_problem(body: dict[str, Any], flavour: str) -> str | None:
    extra = sorted(set(body) - EMBED_FIELDS)
    if extra:
        return f"Unrecognized request argument supplied: {extra[0]}"
    texts = body.get("input")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
        return "'input' must be a non-empty array of non-empty strings"
    if len(texts) > 2048:
        return "'input' must have at most 2048 items"
    if body.get("encoding_format", "float") not in ("float", "base64"):
        return "encoding_format must be float or base64"
    if flavour == "openai" and "dimensions" in body and not str(body.get("model")).startswith("text-embedding-3"):
        return "This model does not support specifying dimensions."
    return None


class FakeOpenAI(FakeServer):
    """Replies like FakeGemini's model: the first sentence of the paragraph sharing most words with the question,
    citing it; a rewrite joins the latest question and the first one."""

    def __init__(self, flavour: str = "openai", api_version: str = "2024-10-21") -> None:
        super().__init__()
        assert flavour in ("openai", "azure", "ollama")
        self.flavour = flavour
        self.api_version = api_version
        self.deployments = {"answers", "rewrites", "embeddings"}
        self.reply: Callable[[dict[str, Any]], str] | None = None
        self.rewrite_reply: Callable[[dict[str, Any]], str] | None = None
        self.ignores_schema = False
        self.embed_body: dict[str, Any] | None = None  # replaces the embeddings reply (a broken server)
        self.page: str | None = None  # a 200 HTML page instead of any reply (a proxy's sign-in portal)
        self.refused_formats: set[str] = set()  # response_format types it answers with a 400 (an older server)
        self.refused_keys: set[str] = set()
        self.reasoning_models: set[str] = set()  # models (Azure: deployments) that refuse temperature, max_tokens
        self.bearer_tokens = {"entra-token-1"}  # Azure: Entra access tokens accepted

    def reset(self) -> None:
        super().reset()
        self.reply = self.rewrite_reply = None
        self.ignores_schema = False
        self.embed_body = None
        self.page = None
        self.refused_formats = set()
        self.refused_keys = set()
        self.reasoning_models = set()

    def routes(self) -> list[web.RouteDef]:
        if self.flavour == "azure":
            return [web.post("/openai/deployments/{deployment}/chat/completions", self.chat),
                    web.post("/openai/deployments/{deployment}/embeddings", self.embed)]
        return [web.post("/v1/chat/completions", self.chat), web.post("/v1/embeddings", self.embed)]

    def error(self, status: int, message: str = "fake error", code: str | None = None) -> web.Response:
        if self.flavour == "ollama":
            return web.json_response({"error": {"message": message, "type": "api_error", "param": None,
                                                "code": None}}, status=status)
        return web.json_response({"error": {"message": message, "type": "invalid_request_error", "param": None,
                                            "code": code or str(status)}}, status=status)

    def unauthorised(self, request: web.Request) -> web.Response | None:
        if self.flavour == "ollama":
            return None
        if self.flavour == "azure":
            if request.query.get("api-version") != self.api_version:
                return self.error(404, "Resource not found")  # Azure answers an unknown API version so
            key = request.headers.get("api-key")
            scheme, _, token = request.headers.get("Authorization", "").partition(" ")
            if key is None and not (scheme == "Bearer" and token in self.bearer_tokens):
                return self.error(401, "Access denied due to invalid subscription key or wrong API endpoint.")
            if request.match_info["deployment"] not in self.deployments:
                return self.error(404, "The API deployment for this resource does not exist.", "DeploymentNotFound")
        else:
            key = request.headers.get("Authorization", "").removeprefix("Bearer ").strip() or None
            if not key:
                return self.error(401, "You didn't provide an API key.")
        if key in self.refused_keys:
            return self.error(401, "Incorrect API key provided.")
        return None

    async def unknown(self, request: web.Request) -> web.Response:
        """A path the server does not serve (a base URL without /v1): a plain-text page, as Ollama's server and
        most web servers answer, not an API error."""
        self.calls.append(Call(request.path, {}, dict(request.headers)))
        return web.Response(status=404, text="404 page not found")

    @staticmethod
    def text_of(body: dict[str, Any]) -> str:
        return "\n".join(m.get("content", "") for m in body.get("messages", []) if m.get("role") != "system")

    @staticmethod
    def system_of(body: dict[str, Any]) -> str:
        return "\n".join(m.get("content", "") for m in body.get("messages", []) if m.get("role") == "system")

    async def chat(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        model = request.match_info.get("deployment") or body.get("model")
        failure = failure or self.unauthorised(request)
        kind = (body.get("response_format") or {}).get("type")
        if failure is None and kind in self.refused_formats:  # Azure's words, before API version 2024-08-01-preview
            return self.error(400, f"response_format value as {kind} is enabled only for api versions "
                                   "2024-08-01-preview and later")
        failure = failure or self.malformed(chat_problem(body, model in self.reasoning_models))
        if failure is not None:
            return failure
        if self.page is not None:
            return web.Response(text=self.page, content_type="text/html")
        as_gemini = {"contents": [{"parts": [{"text": self.text_of(body)}]}]}
        if "standalone question" in self.system_of(body):
            text = (self.rewrite_reply or (lambda _: FakeGemini.default_rewrite(as_gemini)))(body)
        else:
            text = (self.reply or (lambda _: FakeGemini.default_answer(as_gemini)))(body)
        if self.ignores_schema:
            text = f"Sure! Here is the answer in JSON:\n```json\n{text}\n```\nLet me know if you need more."
        return web.json_response({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    async def embed(self, request: web.Request) -> web.Response:
        body, failure = await self._begin(request)
        failure = failure or self.unauthorised(request) or self.malformed(embed_problem(body, self.flavour))
        if failure is not None:
            return failure
        if self.embed_body is not None:
            return web.json_response(self.embed_body)
        dim = OLLAMA_DIM if self.flavour == "ollama" else int(body.get("dimensions", 1536))
        data = [{"object": "embedding", "index": i, "embedding": hashed_vector(t, dim)}
                for i, t in enumerate(body["input"])]
        return web.json_response({"object": "list", "data": data, "model": body.get("model"),
                                  "usage": {"prompt_tokens": 1, "total_tokens": 1}})


def answer_json(answer: str, *citations: str) -> Callable[[dict[str, Any]], str]:
    return lambda body: json.dumps({"answer": answer, "citations": list(citations)})
