"""What the Overview, Feedback and Documents views read, kept in memory and brought up to date on each request.

Reading and decoding every stored answer on every page view would take seconds on a year of a busy agency's
questions (100,000 answers: ~3 s on this machine, benchmarks/bench_admin.py). The snapshot keeps a light copy of
each answer (no question or answer text: the retention and `reset` may blank those in the store) and every rating
as it stands, read once through the store's own paged reads, then asks the store only for what was saved or
rated since the newest it holds. The window re-read overlaps by OVERLAP, so an answer saved late by another
instance (whose stamp is a little older than the newest seen) is not missed; ids already held are skipped.
The first read starts in the background when the server starts.
"""

from __future__ import annotations

import bisect
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.conversations.store import AnswerRecord, ConversationStore, FeedbackRecord
from bot.server.admin.figures import Row, Table
from bot.server.admin.period import Period

OVERLAP = timedelta(minutes=10)
CHECK_EVERY = 5000  # answers read between two looks at whether the server is stopping


@dataclass(frozen=True, slots=True)
class Fact:
    """The figures' view of one answer (bot.observability.usage_report.Asked) plus where it was asked and what it
    quoted."""

    answer_id: str
    created: str
    kind: str
    latency_ms: float | None
    platform: str
    channel: str
    doc_ids: tuple[str, ...]

    @classmethod
    def of(cls, record: AnswerRecord) -> Fact:
        parts = record.conversation_key.split("|")
        # Interned: a few platforms, channels and documents repeat over every answer (docs/admin-page.md: memory)
        return cls(record.answer_id, record.created, sys.intern(record.kind), record.latency_ms,
                   sys.intern(record.platform), sys.intern(f"{record.platform}:{parts[2] if len(parts) > 2 else ''}"),
                   tuple(dict.fromkeys(sys.intern(c.doc_id) for c in record.citations)))


def _light(rating: FeedbackRecord) -> FeedbackRecord:
    """A 👍 as the views use it (counted, and per quoted document): without its question, answer and quotes. Only
    the 👎 are shown in full (Feedback)."""
    quoted = [{"doc_id": sys.intern(str(c.get("doc_id", ""))), "title": sys.intern(str(c.get("title", "")))}
              for c in rating.citations]
    return replace(rating, question="", standalone="", answer="", citations=quoted)


def _key(fact: Fact) -> tuple[str, str]:
    return fact.created, fact.answer_id


def _row(fact: Fact) -> Row:
    return Row(fact.answer_id, fact.created, fact.kind == "answer", fact.latency_ms, fact.platform, fact.channel)


def _stamp(moment: datetime) -> str:
    """The stores' text form of a time (ISO 8601, UTC, milliseconds), whose order is time order."""
    return moment.isoformat(timespec="milliseconds")


class Snapshot:
    def __init__(self, store: ConversationStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._ids: set[str] = set()
        self._facts: list[Fact] = []  # by (created, answer_id)
        self._ratings: dict[tuple[str, str], FeedbackRecord] = {}  # (answer id, user) -> the rating as it stands
        self._newest_answer: datetime | None = None
        self._table: Table | None = None  # the columns of _facts, made when a view asks after a change
        self._pending: list[Fact] = []  # facts newer than the table's last row, not in it yet
        self._newest_rating: datetime | None = None

    def refresh(self, stopped: Callable[[], bool] = lambda: False) -> None:
        """Read what was saved or rated since the last refresh (everything, the first time). `stopped` is asked
        every CHECK_EVERY answers: when it says so (the server is shutting down), nothing read is kept."""
        with self._lock:
            since = self._newest_answer - OVERLAP if self._newest_answer else None
            new = []
            for n, record in enumerate(self.store.answers(since), 1):
                if record.answer_id not in self._ids:
                    new.append(Fact.of(record))
                if n % CHECK_EVERY == 0 and stopped():
                    return
            if new:
                new.sort(key=_key)
                self._ids.update(f.answer_id for f in new)
                if self._facts and _key(new[0]) < _key(self._facts[-1]):  # saved late: sort again
                    self._facts.extend(new)
                    self._facts.sort(key=_key)  # nearly sorted: Timsort is linear
                    self._table, self._pending = None, []
                else:  # the usual case: everything new came after what is held
                    self._facts.extend(new)
                    self._pending.extend(new)
                self._newest_answer = datetime.fromisoformat(self._facts[-1].created)
            since = self._newest_rating - OVERLAP if self._newest_rating else None
            newest = self._newest_rating
            for rating in self.store.ratings(since):
                self._ratings[(rating.answer_id, rating.user)] = rating if not rating.helpful else _light(rating)
                when = datetime.fromisoformat(rating.updated)
                newest = when if newest is None or when > newest else newest
            self._newest_rating = newest

    def answers(self, period: Period) -> list[Fact]:
        """The answers of the period, oldest first (what store.answers(period.since) gives, lighter)."""
        with self._lock:
            start = bisect.bisect_left(self._facts, (_stamp(period.since), ""), key=_key) if period.since else 0
            facts = self._facts[start:]
        return [f for f in facts if period.includes(f.created)] if period.until else facts

    def table(self) -> Table:
        """The answers as numpy columns (bot/server/admin/figures.py), remade after a change."""
        with self._lock:
            if self._table is None:
                self._table, self._pending = Table.of([_row(f) for f in self._facts]), []
            elif self._pending:
                self._table = self._table.extended([_row(f) for f in self._pending])
                self._pending = []
            return self._table

    def ratings(self, period: Period) -> Iterator[FeedbackRecord]:
        """The ratings as they stand, given or changed in the period (store.ratings(period.since)), in that order."""
        with self._lock:
            held = list(self._ratings.values())
        start = _stamp(period.since) if period.since else ""
        return iter(sorted((r for r in held if r.updated >= start), key=lambda r: r.updated))
