"""The checks of `navibot check`, one per configured part: each returns rows (part, verdict, latency, detail, and
one line saying what to do when it failed). Secrets never reach a row: endpoints are named by their failover label
(host and key number), and causes are the providers' own error messages, which never echo a key."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bot.config.settings import Settings
from rag.answer.answerer import AnswerRequest
from rag.answer.budget import turn_budget
from rag.answer.moods import MoodBook
from rag.answer.rewrite import Exchange
from rag.documents import Chunk, SearchHit, SubChunk
from rag.providers.failover import Failover, ProviderError
from rag.search.embedding import Embedder, EmbeddingUnavailable
from rag.search.store import EmbeddingMismatch, KnowledgeStore

# As manifests/slack/manifest.yaml asks for them (tests/bot/cli/test_check_cli.py keeps the two in step).
SLACK_SCOPES = ("app_mentions:read", "assistant:write", "chat:write", "commands", "im:history", "reactions:write")
BOT_FRAMEWORK = "https://api.botframework.com"


@dataclass(frozen=True, slots=True)
class Row:
    part: str
    ok: bool | None  # None: not configured, skipped
    ms: float | None
    detail: str
    fix: str = ""


def timed[T](fn: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - started) * 1000


def fix_for(cause: str) -> str:
    """One line of advice from a provider's failure cause (see rag/providers/failover.py for their wording)."""
    if "HTTP 401" in cause or "HTTP 403" in cause or "EntraTokenError" in cause:
        return "check the key (or the Entra app and its role on the resource) for this endpoint"
    if "timed out" in cause:
        return ("the endpoint is slow or unreachable: check the URL and the network, or raise "
                "NAVIBOT_PROVIDER_TIMEOUT_SECONDS")
    if "connection failed" in cause:
        return "nothing answers at this URL: check the base URL, the port and that the server is running"
    if "not a" in cause and "API error" in cause:
        return "a page that is not the API: the base URL is wrong (an OpenAI-compatible server's ends with /v1)"
    if "HTTP 404" in cause:
        return "the model or deployment name is not served there: check the model / deployment settings"
    if "HTTP 429" in cause:
        return "rate-limited: add another key or endpoint, or raise the quota"
    if "max_completion_tokens" in cause or "temperature" in cause:
        return "a reasoning model (o-series, gpt-5): set NAVIBOT_OPENAI_REASONING_EFFORT=low"
    if "unusable reply" in cause:
        return ("the model's reply was not the JSON asked for: try NAVIBOT_OPENAI_STRUCTURED_OUTPUT=json_object or "
                "prompt, or a larger model")
    if "HTTP 400" in cause:
        return ("the server refused the request's shape: for an OpenAI-compatible server try "
                "NAVIBOT_OPENAI_STRUCTURED_OUTPUT=json_object or prompt")
    return "see the detail; `navibot -v check` logs more"


def each_endpoint(obj: Any) -> Iterator[tuple[str, Any]]:
    """A copy of a provider-backed object (answerer, rewriter, embedder, reranker) per endpoint of its failover,
    so that every endpoint is tried on its own, not only the first that answers."""
    failover: Failover[Any] = obj.failover
    for endpoint in failover.endpoints:
        single = copy.copy(obj)
        single.failover = Failover(failover.provider, [endpoint], failover.per_call_timeout, failover.classify)
        yield endpoint.label, single


def _hit() -> SearchHit:
    sub = SubChunk("check::0.0", "check::0", 0, "paragraph", "Navibot check: this paragraph is a test.", [])
    chunk = Chunk("check::0", "check", 0, "Navibot check", [], [sub], text=sub.text)
    return SearchHit(chunk, 1.0)


def check_store(settings: Settings, path: Path | None, open_store: Callable[[Settings, Path | None], KnowledgeStore],
                ) -> tuple[list[Row], KnowledgeStore | None]:
    file = path or settings.store_path
    if (settings.store == "sqlite" or path is not None) and not file.exists():
        return [Row("knowledge store", False, None, f"no store at {file}",
                    "run `navibot ingest FOLDER` (or set NAVIBOT_STORE_FILE to the store's file)")], None
    try:
        store, ms = timed(lambda: open_store(settings, path))
        counts = store.counts()
    except Exception as exc:  # noqa: BLE001 - an unreachable database, a file that is not a store: one row says so
        return [Row("knowledge store", False, None, f"{type(exc).__name__}: {str(exc)[:200]}",
                    "check NAVIBOT_STORE / NAVIBOT_MONGODB_URI (`navibot db status` for MongoDB)")], None
    size = f", {file.stat().st_size / 1e6:.1f} MB" if settings.store == "sqlite" or path is not None else ""
    detail = f"{counts.get('documents', 0)} documents, {counts.get('chunks', 0)} chunks{size}"
    if not counts.get("documents"):
        return [Row("knowledge store", False, ms, detail, "the store is empty: run `navibot ingest FOLDER`")], store
    return [Row("knowledge store", True, ms, detail)], store


def check_embedder(embedder: Embedder, store: KnowledgeStore | None) -> list[Row]:
    rows = []
    targets = list(each_endpoint(embedder)) if hasattr(embedder, "failover") else [("bundled", embedder)]
    for label, single in targets:
        try:
            vectors, ms = timed(partial(single.embed_documents, ["navibot check"]))
            rows.append(Row(f"embedder {label}", True, ms, f"{embedder.name}, {vectors.shape[1]} dims"))
        except EmbeddingUnavailable as exc:
            rows.append(Row(f"embedder {label}", False, None, str(exc)[:240], fix_for(str(exc))))
    if store is not None and store.counts().get("documents"):
        try:
            store.check_embedder(embedder.name, embedder.dim)
            rows.append(Row("embedder vs store", True, None, f"the store was built with {embedder.name}"))
        except EmbeddingMismatch as exc:
            rows.append(Row("embedder vs store", False, None, str(exc)[:240],
                            "run `navibot reindex --to NEW_STORE` with this embedder, or set NAVIBOT_EMBEDDER back"))
    return rows


def check_answerer(primary: Any) -> list[Row]:
    request = AnswerRequest("What does the test paragraph say?", "What does the test paragraph say?", [], [_hit()],
                            MoodBook().resolve(None))
    rows = []
    for label, single in each_endpoint(primary):
        try:
            draft, ms = timed(partial(single.answer, request))
            rows.append(Row(f"answer model {label}", True, ms, f"replied ({len(draft.text)} characters)"))
        except Exception as exc:  # noqa: BLE001 - AnswerUnavailable, or anything the provider raised
            rows.append(Row(f"answer model {label}", False, None, str(exc)[:240], fix_for(str(exc))))
    return rows


def check_rewriter(rewriter: Any) -> list[Row]:
    history = [Exchange("Can college students get SNAP?", "Some can.")]
    rows = []
    for label, single in each_endpoint(rewriter):
        with turn_budget(None) as budget:  # the rewriter falls back quietly: its budget says whether it did
            _, ms = timed(partial(single.rewrite, "and if they work?", history))
        if budget.fallbacks:
            cause = budget.fallbacks[0]
            rows.append(Row(f"rewrite model {label}", False, None, cause[:240], fix_for(cause)))
        else:
            rows.append(Row(f"rewrite model {label}", True, ms, "made the follow-up standalone"))
    return rows


def check_reranker(reranker: Any) -> list[Row]:
    rows = []
    for label, single in each_endpoint(reranker):
        try:
            _, ms = timed(partial(single.rerank, "test", [_hit(), _hit()], 2))
            rows.append(Row(f"reranker {label}", True, ms, "ranked two test passages"))
        except ProviderError as exc:
            rows.append(Row(f"reranker {label}", False, None, str(exc)[:240], fix_for(str(exc))))
    return rows


def check_slack(token: str, api_url: str) -> list[Row]:
    """auth.test with the bot token (slack_sdk's WebClient.auth_test); the granted scopes come back in the
    x-oauth-scopes header and are compared with the manifest's."""
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError

    client = WebClient(token=token, base_url=api_url, timeout=10)
    try:
        response, ms = timed(client.auth_test)
    except SlackApiError as exc:
        error = exc.response.get("error", "?")
        return [Row("slack auth.test", False, None, f"Slack said {error}",
                    "SLACK_BOT_TOKEN is wrong or revoked: copy the Bot User OAuth Token (xoxb-) again")]
    except Exception as exc:  # noqa: BLE001 - a network failure: no reply at all
        return [Row("slack auth.test", False, None, f"{type(exc).__name__}: {str(exc)[:160]}",
                    "Slack is unreachable from here: check the network or SLACK_API_URL")]
    granted = {s.strip() for s in str(response.headers.get("x-oauth-scopes", "")).split(",") if s.strip()}
    rows = [Row("slack auth.test", True, ms, f"team {response.get('team')}, bot {response.get('user')}")]
    missing = [s for s in SLACK_SCOPES if s not in granted]
    if missing:
        rows.append(Row("slack scopes", False, None, f"missing {', '.join(missing)}",
                        "add them under OAuth & Permissions (or from manifests/slack/manifest.yaml) and reinstall"))
    else:
        rows.append(Row("slack scopes", True, None, ", ".join(SLACK_SCOPES)))
    return rows


def check_teams(sdk_configuration: dict[str, Any]) -> list[Row]:
    """The bot's own token for the Bot Framework, fetched by the Agents SDK's MSAL connection (as replies are)."""
    import asyncio

    from microsoft_agents.authentication.msal import MsalConnectionManager

    connection = MsalConnectionManager(**sdk_configuration).get_default_connection()
    try:
        token, ms = timed(lambda: asyncio.run(connection.get_access_token(BOT_FRAMEWORK,
                                                                          [f"{BOT_FRAMEWORK}/.default"])))
    except Exception as exc:  # noqa: BLE001 - MSAL's errors name the problem (bad secret, unknown tenant), never the secret
        return [Row("teams token", False, None, f"{type(exc).__name__}: {str(exc)[:200]}",
                    "check NAVIBOT_TEAMS_CLIENT_ID, NAVIBOT_TEAMS_TENANT_ID and the client secret (not expired?)")]
    return [Row("teams token", bool(token), ms, "token for the Bot Framework fetched" if token else "no token",
                "" if token else "check the Teams app registration")]
