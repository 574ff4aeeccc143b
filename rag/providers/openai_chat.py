"""Answers and standalone rewrites written by a chat-completions model (Azure OpenAI or an OpenAI-compatible
server), with the same prompts, escaping, citation markers and fallbacks as the Gemini path.

Structured output, as the server allows (`NAVIBOT_OPENAI_STRUCTURED_OUTPUT`): a strict JSON schema (OpenAI,
Azure, vLLM, Ollama, llama.cpp's server), JSON mode, or neither ("prompt": the system prompt asks for JSON); an
endpoint that refuses the configured one with a 400 about the response format gets the next simpler one. The
reply is always read tolerantly (a Markdown fence or a sentence around the object is skipped), because small local
models break JSON even when asked for it; a reply that still holds no usable object is a `BadReply`: the next
endpoint, then the offline fallback, never a crash or a garbled answer."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any, Literal

import openai
from openai.types.chat import ChatCompletion

from rag.answer.answerer import AnswerRequest, AnswerUnavailable
from rag.answer.budget import note_fallback
from rag.answer.rewrite import Exchange, Rewrite, Rewriter
from rag.cite.rail import Draft
from rag.providers.failover import BadReply, Failover, ProviderError
from rag.providers.openai_client import Target
from rag.providers.prompts import (
    ANSWER_SCHEMA,
    ANSWER_SYSTEM,
    MAX_ANSWER_TOKENS,
    MAX_REWRITE_TOKENS,
    REWRITE_SCHEMA,
    REWRITE_SHARE,
    REWRITE_SYSTEM,
    documents_block,
    escape_text,
    history_turns,
    mood_instruction,
    numbered_markers,
    rewrite_prompt,
    shown_id,
    unescape_text,
)

log = logging.getLogger(__name__)

StructuredOutput = Literal["json_schema", "json_object", "prompt"]
REASONING_TOKENS = 4096  # a reasoning model's thinking counts against max_completion_tokens
Message = dict[str, str]

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The Gemini-style schema of prompts.py as a strict JSON Schema (lower-case types, every property required,
    no others), which OpenAI's structured outputs demand."""
    out: dict[str, Any] = {"type": str(schema["type"]).lower()}
    if "description" in schema:
        out["description"] = schema["description"]
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {name: json_schema(sub) for name, sub in properties.items()}
        out["required"] = list(properties)
        out["additionalProperties"] = False
    if isinstance(schema.get("items"), dict):
        out["items"] = json_schema(schema["items"])
    return out


def response_format(mode: StructuredOutput, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": json_schema(schema)}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def tolerant_json(text: str | None) -> dict[str, Any]:
    """The reply's JSON object: as is, inside a Markdown fence, or between the first "{" and the last "}"."""
    if not text or not text.strip():
        raise BadReply("empty reply")
    body = _FENCE.sub("", text.strip())
    candidates = [body]
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        candidates.append(body[start:end + 1])
    error = "no JSON object"
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as exc:
            error = f"malformed JSON: {exc.msg} at char {exc.pos}"
            continue
        if isinstance(data, dict):
            return data
        error = "the JSON reply is not an object"
    raise BadReply(error)


def chat_json(target: Target, model: str, messages: list[Message], mode: StructuredOutput, schema_name: str,
              schema: dict[str, Any], max_tokens: int, timeout: float, reasoning_effort: str = "") -> dict[str, Any]:
    """One chat completion, no tools; the reply read by `tolerant_json`. A chat model runs at temperature 0 with
    `max_tokens`. A reasoning model (o-series, gpt-5: `reasoning_effort` set) refuses both: it gets
    `max_completion_tokens`, with room for its reasoning, and the effort asked for."""
    extra: dict[str, Any] = {}
    fmt = response_format(mode, schema_name, schema)
    if fmt is not None:
        extra["response_format"] = fmt
    if reasoning_effort:
        extra.update(max_completion_tokens=max_tokens + REASONING_TOKENS, reasoning_effort=reasoning_effort)
    else:
        extra.update(temperature=0, max_tokens=max_tokens)
    response = target.client.chat.completions.create(
        model=model, messages=messages, timeout=timeout, **extra)  # type: ignore[arg-type]
    if not isinstance(response, ChatCompletion):  # a 200 page from a proxy or a sign-in portal, not the API
        raise BadReply("the reply is not a chat completion (a proxy's page?)")
    if not response.choices:
        raise BadReply("no choices in the reply")
    choice = response.choices[0]
    if getattr(choice.message, "refusal", None):
        raise BadReply("the model refused")
    try:
        return tolerant_json(choice.message.content)
    except BadReply as exc:
        cut = " (cut off at the token limit)" if choice.finish_reason == "length" else ""
        raise BadReply(f"{exc}{cut}") from exc


SIMPLER: dict[str, StructuredOutput] = {"json_schema": "json_object", "json_object": "prompt"}


def refuses_format(exc: openai.BadRequestError) -> bool:
    """A 400 about the response format (e.g. Azure before API version 2024-08-01-preview: "response_format value
    as json_schema is enabled only for api versions 2024-08-01-preview and later")."""
    message = str(exc.body.get("message", "")) if isinstance(exc.body, dict) else ""
    return any(word in message.lower() for word in ("response_format", "json_schema", "json_object"))


class OutputFormats:
    """The structured-output mode per endpoint: the configured one, until a server refuses it with a 400 about the
    response format; then the next simpler one (JSON mode, then the prompt alone) for that endpoint from then on,
    tried at once in the same call. One WARNING line per switch."""

    def __init__(self, mode: StructuredOutput) -> None:
        self.mode = mode
        self._by_client: dict[int, StructuredOutput] = {}

    def chat(self, target: Target, model: str, messages: list[Message], schema_name: str, schema: dict[str, Any],
             max_tokens: int, timeout: float, reasoning_effort: str = "") -> dict[str, Any]:
        mode = self._by_client.get(id(target.client), self.mode)
        while True:
            try:
                return chat_json(target, model, messages, mode, schema_name, schema, max_tokens, timeout,
                                 reasoning_effort)
            except openai.BadRequestError as exc:
                simpler = SIMPLER.get(mode)
                if simpler is None or not refuses_format(exc):
                    raise
                log.warning("an OpenAI-compatible endpoint (%s) refused response_format %s: using %s there from "
                            "now on (set NAVIBOT_OPENAI_STRUCTURED_OUTPUT=%s to start with it)",
                            target.client.base_url.host, mode, simpler, simpler)
                self._by_client[id(target.client)] = mode = simpler


def answer_messages(request: AnswerRequest) -> list[Message]:
    """The Gemini path's turns as chat messages: the rules, the documents, the conversation, then the mood's
    instruction and the question; every document and user text escaped the same way."""
    messages: list[Message] = [
        {"role": "system", "content": ANSWER_SYSTEM},
        {"role": "user", "content": documents_block(request.hits)},
        {"role": "assistant", "content": "I will answer only from these documents and cite their paragraph ids."},
    ]
    for role, text in history_turns(request.history):
        chat_role = "assistant" if role == "model" else "user"
        if messages[-1]["role"] == chat_role:
            messages[-1]["content"] += "\n\n" + text
        else:
            messages.append({"role": chat_role, "content": text})
    last = [mood_instruction(request.mood), f"Question: {escape_text(request.question.strip())}"]
    if request.standalone.strip() and request.standalone.strip() != request.question.strip():
        last.append(f"(Understood as: {escape_text(request.standalone.strip())})")
    if messages[-1]["role"] == "user":
        messages[-1]["content"] += "\n\n" + "\n\n".join(last)
    else:
        messages.append({"role": "user", "content": "\n\n".join(last)})
    return messages


class OpenAIAnswerer:
    """The answer written by a chat model from the retrieved sections. Raises AnswerUnavailable when no endpoint
    gives a usable reply (the caller falls back to the extractive answer)."""

    def __init__(self, failover: Failover[Target], mode: StructuredOutput = "json_schema",
                 reasoning_effort: str = "") -> None:
        self.failover = failover
        self.formats = OutputFormats(mode)
        self.reasoning_effort = reasoning_effort

    def answer(self, request: AnswerRequest) -> Draft:
        messages = answer_messages(request)
        real = {shown_id(sub.sub_id): sub.sub_id for hit in request.hits for sub in hit.chunk.subchunks}
        known = set(real)

        def call(target: Target, timeout: float) -> Draft:
            data = self.formats.chat(target, target.models.answer, messages, "navibot_answer", ANSWER_SCHEMA,
                                     MAX_ANSWER_TOKENS, timeout, self.reasoning_effort)
            text, cited = data.get("answer"), data.get("citations", [])
            if not isinstance(text, str) or not isinstance(cited, list):
                raise BadReply("the reply lacks 'answer' text or a 'citations' list")
            text, ids = numbered_markers(unescape_text(text.strip()),
                                         [str(c).strip() for c in cited if str(c).strip()], known)
            return Draft(text, [real.get(i, i) for i in ids])

        try:
            return self.failover.call("generate", call)
        except ProviderError as exc:
            raise AnswerUnavailable(str(exc)) from exc


class OpenAIRewriter:
    """A follow-up made standalone by a chat model; the offline heuristic when every endpoint fails (no call when
    there is no history)."""

    def __init__(self, failover: Failover[Target], fallback: Rewriter,
                 mode: StructuredOutput = "json_schema", reasoning_effort: str = "") -> None:
        self.failover = failover
        self.fallback = fallback
        self.formats = OutputFormats(mode)
        self.reasoning_effort = reasoning_effort

    def rewrite(self, question: str, history: Sequence[Exchange]) -> Rewrite:
        question = question.strip()
        earlier = [e for e in history if e.question.strip()]
        if not earlier:
            return Rewrite(question)
        messages: list[Message] = [{"role": "system", "content": REWRITE_SYSTEM},
                                   {"role": "user", "content": rewrite_prompt(question, earlier)}]

        def call(target: Target, timeout: float) -> str:
            standalone = self.formats.chat(target, target.models.rewrite, messages, "navibot_rewrite", REWRITE_SCHEMA,
                                           MAX_REWRITE_TOKENS, timeout, self.reasoning_effort).get("question")
            if not isinstance(standalone, str) or not standalone.strip():
                raise BadReply("no question in the reply")
            return " ".join(standalone.split())

        try:
            return Rewrite(self.failover.call("rewrite", call, share=REWRITE_SHARE))
        except ProviderError as exc:
            note_fallback("rewrite", f"{exc}; using the offline rewriter")
            return self.fallback.rewrite(question, history)
