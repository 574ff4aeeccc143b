"""`GET /healthz` of `navibot serve`: is this process able to answer a question right now?

Healthy means: the knowledge store and the conversation store answer a cheap read within a few seconds, no
question failed on either store in the last minute without one answered since (a store may pass a cheap read and
still fail a search or a write: a damaged page, a full disk; the failure names the store), and the
models are loaded (the embedder is built; every hosted provider in use has a key). The probe runs in a thread
(the stores are synchronous and a lost MongoDB blocks until its own timeout) and its result is kept for a couple
of seconds, so a load balancer polling every instant costs the stores one read per interval, not one per poll.

A failure is reported as one line per part, never a traceback and never a secret: a connection string's
`user:password@` is blanked out of any message before it is shown.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.observability.logs import mask_secrets
from bot.observability.observers import TurnEvent
from bot.wiring.runtime import Bot

PROBE_TIMEOUT_SECONDS = 3.0
CACHE_SECONDS = 2.0
# A store that still answers reads but refuses writes (SQLite locked by another process, a MongoDB user without
# write rights, a full disk) passes the read probe: the questions that failed to save say it instead.
STORE_FAILURE_SECONDS = 60.0
PROBE_ANSWER_ID = "navibot-healthz-probe"  # looked up, never found: a read that touches the conversation store
_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)  # user and password
MAX_REASON_CHARS = 200
# The error kinds of a failed turn (bot/chat/handler.py error_kind) that name a store, and the store they name.
FAILED_PART = {"store": "conversation store", "disk_full": "conversation store", "knowledge_store": "knowledge store"}


def one_line(exc: BaseException) -> str:
    """An exception as one short line a person can read, with credentials blanked out."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = mask_secrets(_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}***@", text))  # the log's masks too
    if len(text) > MAX_REASON_CHARS:
        text = text[:MAX_REASON_CHARS - 1] + "…"
    return f"{type(exc).__name__}: {text}"


@dataclass(frozen=True, slots=True)
class HealthReport:
    reasons: list[str] = field(default_factory=list)  # why the process cannot answer (empty: healthy)
    warnings: list[str] = field(default_factory=list)  # healthy, but worth knowing (an empty knowledge store)
    knowledge: dict[str, int] = field(default_factory=dict)  # documents, chunks
    checked_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.reasons

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": "ok" if self.ok else "unavailable"}
        if self.reasons:
            body["reasons"] = self.reasons
        if self.warnings:
            body["warnings"] = self.warnings
        if self.knowledge:
            body["knowledge"] = self.knowledge
        body["checked_ms"] = round(self.checked_ms, 1)
        return body


def model_problems(bot: Bot) -> list[str]:
    """The models are loaded: the embedder was built, and the hosted providers chosen have keys. (Settings refuse
    a chosen provider without a key at start-up; this says so again should that ever be bypassed.)"""
    problems = []
    embedder: object = bot.core.embedder  # typed never None; checked anyway, should a wiring change allow it
    if embedder is None:
        problems.append("models: the embedding model is not loaded")
    settings = bot.core.settings
    users = {"gemini": [s for s in ("llm", "embedder") if getattr(settings, s) == "gemini"],
             "cohere": [s for s in ("embedder", "rerank") if getattr(settings, s) == "cohere"]}
    keys = {"gemini": settings.gemini_api_keys, "cohere": settings.cohere_api_keys}
    for provider, stages in users.items():
        if stages and not [k for k in keys[provider] if k.get_secret_value().strip()]:
            problems.append(f"models: {provider} is chosen for {', '.join(stages)} but has no API key")
    return problems


class Health:
    """The health of one server. `shutting_down` is set when SIGTERM arrives: from then on the answer is 503, so a
    load balancer stops sending work while the answers under way finish."""

    def __init__(self, bot: Bot, timeout: float = PROBE_TIMEOUT_SECONDS, cache_seconds: float = CACHE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bot = bot
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self.shutting_down = False
        self._clock = clock
        self._cached: tuple[float, HealthReport] | None = None
        self._probing: asyncio.Future[HealthReport] | None = None
        # Per store, (when, trace id, error kind) of the last question that failed on it.
        self._failed: dict[str, tuple[float, str, str]] = {}

    # An Observer (bot/observability/observers.py): the turns tell whether the stores take reads and writes.
    def turn(self, event: TurnEvent) -> None:
        part = FAILED_PART.get(event.error or "")
        if part is not None:
            self._failed[part] = (self._clock(), event.trace_id, event.error or "")
            self._cached = None
        elif event.kind in ("answer", "no_answer"):  # searched and saved: both stores work again
            self._failed.clear()

    def feedback(self, platform: str, helpful: bool) -> None:
        pass

    def error(self, kind: str, platform: str) -> None:
        pass

    def _store_failure(self, part: str) -> str | None:
        failed = self._failed.get(part)
        if failed is None or self._clock() - failed[0] > STORE_FAILURE_SECONDS:
            return None
        when, trace, kind = failed
        what = "its disk is full: a question could not be saved" if kind == "disk_full" else "a question failed on it"
        return (f"{part}: {what} {self._clock() - when:.0f} s ago (trace id {trace}); healthy again once a question "
                f"is answered, or after {STORE_FAILURE_SECONDS:g} s without failures")

    async def report(self) -> HealthReport:
        if self.shutting_down:
            return HealthReport(reasons=["shutting down: finishing the answers under way"])
        if self._cached is not None and self._clock() - self._cached[0] < self.cache_seconds:
            return self._cached[1]
        if self._probing is None or self._probing.done():  # concurrent polls share one probe
            self._probing = asyncio.ensure_future(self._probe())
        return await asyncio.shield(self._probing)

    async def _probe(self) -> HealthReport:
        started = time.perf_counter()
        reasons = model_problems(self.bot)
        warnings: list[str] = []
        knowledge: dict[str, int] = {}
        counts, problem = await self._read("knowledge store", self.bot.core.store.counts)
        problem = problem or self._store_failure("knowledge store")
        if problem:
            reasons.append(problem)
        elif isinstance(counts, dict):
            knowledge = {k: int(counts.get(k, 0)) for k in ("documents", "chunks")}
            if knowledge["chunks"] == 0:
                warnings.append("knowledge store is empty: every question gets 'I couldn't find this'; run "
                                "`navibot ingest PATH` (or `navibot ingest --demo`)")
        _, problem = await self._read("conversation store",
                                      lambda: self.bot.conversations.get_answer(PROBE_ANSWER_ID))
        problem = problem or self._store_failure("conversation store")
        if problem:
            reasons.append(problem)
        report = HealthReport(reasons, warnings, knowledge, (time.perf_counter() - started) * 1000)
        self._cached = (self._clock(), report)
        return report

    async def _read(self, part: str, read: Callable[[], Any]) -> tuple[Any, str | None]:
        """One read in a thread, with a timeout: (its result, None) or (None, "<part>: <one line>")."""
        try:
            return await asyncio.wait_for(asyncio.to_thread(read), self.timeout), None
        except TimeoutError:
            return None, f"{part}: no answer within {self.timeout:g} s"
        except Exception as exc:  # noqa: BLE001 - whatever it is, the health check says so in one line
            return None, f"{part}: {one_line(exc)}"
