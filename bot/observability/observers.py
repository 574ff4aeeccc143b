"""What happens in each turn, told to whoever watches: the metrics, the per-turn log line.

The turn handler reports one `TurnEvent` per message it handles and one call per feedback click; the adapters
report the errors they meet on the platform side (a refused post, a failed send). Watchers are added to a Bot's
`Observers`; a watcher that fails is logged and ignored, so observing can never break a turn.

`current_trace` holds the trace id of the turn being handled, so every log line written during the turn (a model
fallback, a dropped citation) can carry it.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

log = logging.getLogger(__name__)

current_trace: ContextVar[str | None] = ContextVar("navibot_trace", default=None)


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """One handled message. `kind` is the ReplyKind value (answer, no_answer, command, error, duplicate);
    `question` is the text as received: a watcher that logs it must redact it and show it only when allowed."""

    trace_id: str
    platform: str
    kind: str
    question: str
    timings_ms: dict[str, float] = field(default_factory=dict)  # rewrite, retrieve, rerank, generate, total
    fallbacks: list[str] = field(default_factory=list)  # "stage: cause" for each model stage that fell back
    citations: int = 0
    answer_id: str | None = None
    mood: str | None = None
    groups: list[str] = field(default_factory=list)  # the access groups retrieval was limited to
    error: str | None = None  # for kind "error": its kind, e.g. "store", "internal", "too_long"

    @property
    def is_question(self) -> bool:
        """A question the engine worked on (answered, not answered, or failed on), not a command or redelivery."""
        return self.kind in ("answer", "no_answer") or (self.kind == "error" and self.error != "too_long")


class Observer(Protocol):
    def turn(self, event: TurnEvent) -> None: ...

    def feedback(self, platform: str, helpful: bool) -> None: ...

    def error(self, kind: str, platform: str) -> None:
        """A failure outside the turn handler, e.g. kind "slack_api" when a reply could not be posted."""
        ...


class Observers:
    """The watchers of one Bot. Calls are synchronous and quick (counters, one log line)."""

    def __init__(self, watchers: list[Observer] | None = None) -> None:
        self.watchers: list[Observer] = list(watchers or [])

    def add(self, watcher: Observer) -> None:
        self.watchers.append(watcher)

    def turn(self, event: TurnEvent) -> None:
        for watcher in self.watchers:
            try:
                watcher.turn(event)
            except Exception:  # a broken watcher must not break the turn
                log.exception("observer %s failed on a turn", type(watcher).__name__)

    def feedback(self, platform: str, helpful: bool) -> None:
        for watcher in self.watchers:
            try:
                watcher.feedback(platform, helpful)
            except Exception:
                log.exception("observer %s failed on feedback", type(watcher).__name__)

    def error(self, kind: str, platform: str) -> None:
        for watcher in self.watchers:
            try:
                watcher.error(kind, platform)
            except Exception:
                log.exception("observer %s failed on an error report", type(watcher).__name__)
