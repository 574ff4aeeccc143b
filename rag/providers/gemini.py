"""Gemini (google-genai): standalone rewriting, generated answers with structured output, embeddings.

Every call goes through `Failover`, so each is tried over the configured endpoints and keys, with the SDK's own
retries off and a timeout bounded by the turn's deadline."""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Iterator, Sequence
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from rag.answer.answerer import AnswerRequest, AnswerUnavailable, DraftStream, StreamingUnsupported
from rag.answer.budget import note_fallback
from rag.answer.rewrite import Exchange, Rewrite, Rewriter
from rag.cite.rail import Draft
from rag.providers.failover import (
    BadReply,
    Endpoint,
    Failover,
    ProviderError,
    RequestRejected,
    Verdict,
    api_message,
    classify_status,
    endpoint_labels,
    not_an_http_error,
    not_the_api,
)
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
from rag.providers.remote_embedder import RemoteEmbedder
from rag.providers.stream_prompts import STREAM_ANSWER_SYSTEM, stream_mood_instruction

log = logging.getLogger(__name__)



def classify(exc: Exception) -> tuple[Verdict, str]:
    if isinstance(exc, genai_errors.APIError):
        if not (isinstance(exc.details, dict) and isinstance(exc.details.get("error"), dict)):
            return not_the_api("Gemini", exc.code)  # the API's errors are {"error": {"code", "status", ...}}
        return classify_status(exc.code), f"HTTP {exc.code} {exc.status or ''}".strip() + api_message(exc.message)
    return not_an_http_error(exc)


def gemini_failover(api_keys: Sequence[str], base_urls: Sequence[str], per_call_timeout: float,
                    rng: random.Random | None = None) -> Failover[genai.Client]:
    """One client per (endpoint, key). The SDK's retries are off: `Failover` decides what is tried next."""
    endpoints = []
    for url, key, label in endpoint_labels("gemini", base_urls, len(api_keys)):
        options = types.HttpOptions(base_url=url, timeout=int(per_call_timeout * 1000),
                                    retry_options=types.HttpRetryOptions(attempts=1))
        # vertexai=False: a GOOGLE_GENAI_USE_VERTEXAI left in the environment must not reroute the calls.
        client = genai.Client(vertexai=False, api_key=api_keys[key], http_options=options)
        endpoints.append(Endpoint(label, client))
    return Failover("gemini", endpoints, per_call_timeout, classify, rng)


def _call_options(timeout: float) -> types.HttpOptions:
    return types.HttpOptions(timeout=max(1, int(timeout * 1000)), retry_options=types.HttpRetryOptions(attempts=1))


NO_TOOLS = types.AutomaticFunctionCallingConfig(disable=True)  # no tools are given; also silences a log line


def _thinking(budget: int | None) -> types.ThinkingConfig | None:
    """None leaves the model's default; 0 switches thinking off (a navigator is waiting on the phone)."""
    return None if budget is None or budget < 0 else types.ThinkingConfig(thinking_budget=budget)


def _json_reply(response: types.GenerateContentResponse) -> dict[str, Any]:
    """The structured reply as a dict; anything else (blocked, empty, not JSON) is a BadReply."""
    try:
        text = response.text
    except ValueError as exc:  # the SDK raises on some non-text replies
        raise BadReply(f"no text in the reply ({exc})") from exc
    if not text:
        reasons = [str(c.finish_reason) for c in response.candidates or [] if c.finish_reason]
        raise BadReply("empty reply" + (f" (finish reason {', '.join(reasons)})" if reasons else ""))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadReply(f"malformed JSON: {exc.msg} at char {exc.pos}") from exc
    if not isinstance(data, dict):
        raise BadReply("the JSON reply is not an object")
    return data


def _generate_json(client: genai.Client, model: str, contents: types.ContentListUnion, system: str,
                   schema: dict[str, Any], max_tokens: int, thinking: types.ThinkingConfig | None,
                   timeout: float) -> dict[str, Any]:
    """One structured-output call at temperature 0, no tools; the reply checked by `_json_reply`."""
    response = client.models.generate_content(
        model=model, contents=contents,
        config=types.GenerateContentConfig(
            system_instruction=system, temperature=0.0, response_mime_type="application/json",
            response_schema=schema, automatic_function_calling=NO_TOOLS, max_output_tokens=max_tokens,
            thinking_config=thinking, http_options=_call_options(timeout)))
    return _json_reply(response)


class GeminiRewriter:
    """A follow-up made standalone by Gemini; the offline heuristic when Gemini fails (or there is no history,
    where there is nothing to rewrite and no call is made)."""

    def __init__(self, failover: Failover[genai.Client], model: str, fallback: Rewriter,
                 thinking_budget: int | None = 0) -> None:
        self.failover = failover
        self.model = model
        self.fallback = fallback
        self.thinking = _thinking(thinking_budget)

    def rewrite(self, question: str, history: Sequence[Exchange]) -> Rewrite:
        question = question.strip()
        earlier = [e for e in history if e.question.strip()]
        if not earlier:
            return Rewrite(question)
        prompt = rewrite_prompt(question, earlier)

        def call(client: genai.Client, timeout: float) -> str:
            standalone = _generate_json(client, self.model, prompt, REWRITE_SYSTEM, REWRITE_SCHEMA,
                                        MAX_REWRITE_TOKENS, self.thinking, timeout).get("question")
            if not isinstance(standalone, str) or not standalone.strip():
                raise BadReply("no question in the reply")
            return " ".join(standalone.split())

        try:
            return Rewrite(self.failover.call("rewrite", call, share=REWRITE_SHARE))
        except ProviderError as exc:
            note_fallback("rewrite", f"{exc}; using the offline rewriter")
            return self.fallback.rewrite(question, history)


class GeminiAnswerer:
    """The answer written by Gemini from the retrieved sections, at temperature 0 with a JSON schema. Raises
    AnswerUnavailable when no endpoint gives a usable reply (the caller falls back to the extractive answer)."""

    def __init__(self, failover: Failover[genai.Client], model: str, thinking_budget: int | None = 0) -> None:
        self.failover = failover
        self.model = model
        self.thinking = _thinking(thinking_budget)
        self.streaming_refused = False  # set when an endpoint refused a streamed request as such (e.g. HTTP 404)

    @staticmethod
    def contents(request: AnswerRequest, streamed: bool = False) -> list[types.Content]:
        """Documents first, then the conversation, then the mood's instruction and the question."""
        turns: list[tuple[str, list[str]]] = [
            ("user", [documents_block(request.hits)]),
            ("model", ["I will answer only from these documents and cite their paragraph ids."]),
        ]
        for role, text in history_turns(request.history):
            if turns[-1][0] == role:  # the API wants turns to alternate
                turns[-1][1].append(text)
            else:
                turns.append((role, [text]))
        instruction = stream_mood_instruction(request.mood) if streamed else mood_instruction(request.mood)
        last = [instruction, f"Question: {escape_text(request.question.strip())}"]
        if request.standalone.strip() and request.standalone.strip() != request.question.strip():
            last.append(f"(Understood as: {escape_text(request.standalone.strip())})")
        if turns[-1][0] == "user":
            turns[-1][1].extend(last)
        else:
            turns.append(("user", last))
        return [types.Content(role=role, parts=[types.Part(text=t) for t in texts]) for role, texts in turns]

    def answer(self, request: AnswerRequest) -> Draft:
        contents = self.contents(request)
        # The id as the prompt showed it -> the stored id (an id with a quote or an angle bracket is shown escaped).
        real = {shown_id(sub.sub_id): sub.sub_id for hit in request.hits for sub in hit.chunk.subchunks}
        known = set(real)

        def call(client: genai.Client, timeout: float) -> Draft:
            data = _generate_json(client, self.model, contents, ANSWER_SYSTEM, ANSWER_SCHEMA, MAX_ANSWER_TOKENS,
                                  self.thinking, timeout)
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


    def stream(self, request: AnswerRequest) -> DraftStream:
        """The answer as Gemini writes it (generate_content_stream, plain text with bracketed paragraph ids). The
        endpoints are tried in turn until one sends its first piece; a stream that breaks off later ends there
        (the rail shows only what was checked) and says why in `errors`."""
        contents = self.contents(request, streamed=True)
        real = {shown_id(sub.sub_id): sub.sub_id for hit in request.hits for sub in hit.chunk.subchunks}

        def call(client: genai.Client, timeout: float) -> tuple[str, Iterator[types.GenerateContentResponse]]:
            responses = client.models.generate_content_stream(
                model=self.model, contents=contents,
                config=types.GenerateContentConfig(
                    system_instruction=STREAM_ANSWER_SYSTEM, temperature=0.0, automatic_function_calling=NO_TOOLS,
                    max_output_tokens=MAX_ANSWER_TOKENS, thinking_config=self.thinking,
                    http_options=_call_options(timeout)))
            try:
                first = next(responses)
            except StopIteration as exc:
                raise BadReply("empty reply") from exc
            return _chunk_text(first), responses

        if self.streaming_refused:
            raise StreamingUnsupported("streaming was refused by the endpoint")
        try:
            first, rest = self.failover.call("generate", call)
        except RequestRejected as exc:  # the request itself refused (e.g. a 404 from a proxy without streaming)
            self.streaming_refused = True
            log.warning("generate: streaming refused (%s); answers are written whole from now on", exc)
            raise StreamingUnsupported(str(exc)) from exc
        except ProviderError as exc:
            raise AnswerUnavailable(str(exc)) from exc
        stream = DraftStream(ids=real, clean=unescape_text)

        def pieces() -> Iterator[str]:
            yield first
            try:
                for response in rest:
                    yield _chunk_text(response)
            except Exception as exc:  # noqa: BLE001 - a broken stream ends the answer where it broke
                _, why = classify(exc)
                stream.errors.append(f"the stream broke off: {why}")
                log.warning("generate: the stream broke off (%s); the answer ends at its last checked sentence", why)

        stream.pieces = pieces()
        return stream


def _chunk_text(response: types.GenerateContentResponse) -> str:
    """The text of one streamed chunk (thought summaries, if a model sends them, are not the answer)."""
    return "".join(part.text or "" for candidate in response.candidates or []
                   for part in (candidate.content.parts if candidate.content else None) or [] if not part.thought)


class GeminiEmbedder(RemoteEmbedder[genai.Client]):
    """`gemini-embedding-001` with task types (documents vs questions) and a chosen output dimensionality;
    vectors are normalised by the base class (the API normalises only the full 3072-dim output)."""

    provider, batch_size = "gemini", 100  # batchEmbedContents takes at most 100 requests
    document_task, query_task = "RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"

    def __init__(self, failover: Failover[genai.Client], model: str = "gemini-embedding-001",
                 dim: int = 768) -> None:
        super().__init__(failover, model, dim)

    def _request(self, client: genai.Client, batch: list[str], task: str, timeout: float) -> list[list[float]]:
        response = client.models.embed_content(
            model=self.model, contents=batch,
            config=types.EmbedContentConfig(task_type=task, output_dimensionality=self._dim,
                                            http_options=_call_options(timeout)))
        return [e.values or [] for e in response.embeddings or []]
