"""The time budget of one turn and the fallbacks taken during it.

A turn's model calls (rewrite, query embedding, rerank, generate) share one deadline. The engine opens a
`turn_budget`; providers read it with `current_budget()`. A context variable rather than a parameter because the
query embedding is called by the Retriever through the `Embedder` protocol, which ingestion uses too (no turn,
no deadline there). Each turn runs in one thread, and `asyncio.to_thread` copies the context, so turns never see
each other's budget.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


class Deadline:
    """A point in time after which no new provider call starts; `None` seconds means no deadline."""

    def __init__(self, seconds: float | None = None) -> None:
        self._end = time.monotonic() + seconds if seconds is not None else math.inf

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0.0

    def timeout(self, per_call: float) -> float:
        """How long the next call may take: its own limit, or less if the turn's time is nearly spent."""
        return min(per_call, self.remaining())


@dataclass(slots=True)
class TurnBudget:
    deadline: Deadline = field(default_factory=Deadline)
    fallbacks: list[str] = field(default_factory=list)  # "stage: cause", in the order they happened


_current: ContextVar[TurnBudget | None] = ContextVar("navibot_turn_budget", default=None)


def current_budget() -> TurnBudget:
    """The budget of the turn being answered, or an unlimited one outside a turn (ingestion, evaluation)."""
    return _current.get() or TurnBudget()


@contextmanager
def turn_budget(seconds: float | None) -> Iterator[TurnBudget]:
    budget = TurnBudget(Deadline(seconds))
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


def note_fallback(stage: str, cause: str, *, logged: bool = True) -> None:
    """Record that a stage fell back to its offline or simpler path; one WARNING line (never a key in `cause`).
    `logged=False` when the caller that actually falls back logs it itself (the Retriever's lexical search)."""
    budget = _current.get()
    if budget is not None:
        budget.fallbacks.append(f"{stage}: {cause}")
    if logged:
        log.warning("fallback in %s: %s", stage, cause)
