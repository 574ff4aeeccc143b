"""What the bot remembers between turns: history, mood preferences, answers and feedback.

`ConversationStore` is the protocol; the embedded default is `bot.conversations.sqlite`, the other
`bot.conversations.mongo`.
Every write is durable when the method returns, so a reply is never sent for a turn that is not saved.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from rag.cite.rail import Citation

# How long a claim on an event protects it from a second delivery when its holder cannot be asked whether it is
# alive: longer than a turn (its deadline is 12 s) plus posting the reply with the clients' retries.
EVENT_LEASE_SECONDS = 60.0
# The retention (NAVIBOT_RETENTION_DAYS) is applied when a store opens and then at most this often, on a write.
PURGE_EVERY_SECONDS = 3600.0

log = logging.getLogger(__name__)


class RetentionSchedule:
    """When a store applies its retention: when it opens, then at most every PURGE_EVERY_SECONDS, on a write.
    Retention must never cost a turn (or an admin command) its answer: a failure is one warning line, and the next
    try comes an interval later, not at once."""

    def __init__(self, purge: Callable[[], dict[str, int]], failures: tuple[type[Exception], ...],
                 clock: Callable[[], float]) -> None:
        self._purge = purge
        self._failures = failures
        self._clock = clock
        self.applied_at = clock()

    def apply(self) -> None:
        self.applied_at = self._clock()
        try:
            removed = self._purge()
        except self._failures as exc:
            log.warning("conversation store: applying the retention failed: %s", exc)
            return
        if any(removed.values()):
            log.info("conversation store: retention applied: %s", removed)

    def apply_when_due(self) -> None:
        if self._clock() - self.applied_at >= PURGE_EVERY_SECONDS:
            self.apply()


def channel_of_key(conversation_key: str) -> str:
    """The channel in a conversation key (bot.port.Chat.key: platform|workspace|channel|thread), or "" for a key
    of another shape. Only the stores' migration of answers saved before `AnswerRecord.channel` existed reads a key
    back; nothing else parses one."""
    parts = conversation_key.split("|")
    return parts[2] if len(parts) >= 4 else ""  # a thread id with a "|" in it still has its channel third


class UnknownAnswer(LookupError):
    """Feedback for an answer id the store does not know (expired, mistyped, or from another installation)."""


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    question: str
    standalone: str
    answer: str
    cited_ids: list[str]


@dataclass(slots=True)
class AnswerRecord:
    answer_id: str
    conversation_key: str
    platform: str
    user: str
    question: str
    standalone: str
    answer: str
    kind: str  # "answer" or "no_answer"
    mood: str
    citations: list[Citation] = field(default_factory=list)
    created: str = ""
    latency_ms: float | None = None  # the engine's time for the turn (`navibot stats` reports its median)
    # The chat's channel (with `platform`: where the answer was given; a button's answer id is honoured only
    # there). Rows saved before it was a field of its own get it from their key when the store opens.
    channel: str = ""


@dataclass(frozen=True, slots=True)
class FeedbackRecord:
    answer_id: str
    user: str
    helpful: bool
    reason: str | None
    question: str
    standalone: str
    answer: str
    citations: list[dict[str, Any]]
    platform: str
    created: str
    updated: str


class ConversationStore(Protocol):
    def history(self, conversation_key: str, limit: int) -> list[HistoryTurn]:
        """The last `limit` turns, oldest first."""
        ...

    def append_turn(self, conversation_key: str, turn: HistoryTurn, keep: int) -> None:
        """Add a turn and drop all but the newest `keep` of this conversation."""
        ...

    def clear_history(self, conversation_key: str) -> int:
        """`reset`: drop the conversation's history and blank the question text of its answers that no one rated
        (a rated answer keeps its question: the rating means nothing without it). Returns the turns dropped."""
        ...

    def get_mood(self, preference_key: str) -> str | None: ...

    def set_mood(self, preference_key: str, mood: str) -> None: ...

    def claim_event(self, platform: str, event_id: str) -> bool:
        """True when this delivery should be answered: the event id is new, its earlier claim was released, or
        the claim's holder is gone (its process died, or its lease of EVENT_LEASE_SECONDS ran out). False when
        it was answered ('done') or is being answered by a live holder. The claim is 'claimed' until
        `complete_event` (the reply is posted) or `release_event` (the turn or the post failed)."""
        ...

    def complete_event(self, platform: str, event_id: str) -> None:
        """The reply to a claimed event was posted: 'done', final; every later delivery is dropped."""
        ...

    def release_event(self, platform: str, event_id: str) -> None:
        """The turn or its post failed: forget this holder's claim, so a redelivery or retry is answered."""
        ...

    def save_answer(self, record: AnswerRecord) -> None: ...

    def get_answer(self, answer_id: str) -> AnswerRecord | None: ...

    def record_feedback(self, answer_id: str, user: str, helpful: bool, reason: str | None) -> FeedbackRecord:
        """Insert or update (one rating per user and answer); raises UnknownAnswer."""
        ...

    def answers(self, since: datetime | None = None) -> Iterator[AnswerRecord]:
        """Every saved answer and no-answer (since a time, if given), oldest first; read lazily, a page at a time,
        so `navibot stats` on a year of questions never holds them all."""
        ...

    def feedback(self, answer_id: str | None = None, since: datetime | None = None) -> list[FeedbackRecord]:
        """All feedback (or that of one answer, or given or changed since a time), oldest first, with the answer
        it rates."""
        ...

    def ratings(self, since: datetime | None = None) -> Iterator[FeedbackRecord]:
        """Every rating as it stands (given or last changed at or after `since`, if given), in that order, with
        the answer it rates; read lazily, a page at a time (`navibot feedback export`, `navibot stats`)."""
        ...

    def close(self) -> None: ...
