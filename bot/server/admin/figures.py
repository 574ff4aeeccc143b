"""`navibot stats`' figures (bot.observability.usage_report.stats_of) computed with numpy over the snapshot's columns.

stats_of walks every answer in Python: fine for a command run now and then, ~1 s per 100,000 answers and group on
this machine, too slow for a page that shows the period, each platform and the busiest channels at every view.
Here the same counts are bincounts and masks over arrays built once per change of the snapshot. The rules are
stats_of's, to the digit: questions and answered per UTC day; ratings of the selected answers only (given or
changed in the period); the helpful rate over ratings; the median as statistics.median (the mean of the two
middle values of an even count) and the p95 as the nearest rank, both rounded to 0.1 ms.
tests/bot/server/admin/test_admin_figures.py checks them equal to stats_of on random stores.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from bot.conversations.store import FeedbackRecord
from bot.observability.usage_report import Day, Stats

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Row:
    """What the figures need of one answer."""

    answer_id: str
    created: str
    answered: bool
    latency_ms: float | None
    platform: str
    channel: str


class Codes:
    """Names to small integers, in the order they were first seen."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._codes: dict[str, int] = {}

    def code(self, name: str) -> int:
        found = self._codes.get(name)
        if found is None:
            found = self._codes[name] = len(self.names)
            self.names.append(name)
        return found


@dataclass(slots=True)
class Table:
    """The snapshot's answers as columns, oldest first (rows sorted by created, answer id)."""

    created: list[str] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)
    days: Codes = field(default_factory=Codes)  # chronological: rows are in time order
    platforms: Codes = field(default_factory=Codes)
    channels: Codes = field(default_factory=Codes)
    day: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    answered: BoolArray = field(default_factory=lambda: np.zeros(0, np.bool_))
    latency: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))  # NaN: not recorded
    platform: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))
    channel: IntArray = field(default_factory=lambda: np.zeros(0, np.int64))

    @classmethod
    def of(cls, rows: Sequence[Row]) -> Table:
        return cls().extended(rows)

    def extended(self, rows: Sequence[Row]) -> Table:
        """This table and rows that all come after its last (answers saved since), as a new table: only the new
        rows are converted, and a view still reading this one is not disturbed (the code books only grow)."""
        n, held = len(rows), len(self.created)
        return Table(
            created=self.created + [r.created for r in rows],
            ids={**self.ids, **{r.answer_id: held + i for i, r in enumerate(rows)}},
            days=self.days, platforms=self.platforms, channels=self.channels,
            day=np.concatenate([self.day, np.fromiter((self.days.code(r.created[:10]) for r in rows), np.int64, n)]),
            answered=np.concatenate([self.answered, np.fromiter((r.answered for r in rows), np.bool_, n)]),
            latency=np.concatenate([self.latency, np.fromiter(
                (math.nan if r.latency_ms is None else r.latency_ms for r in rows), np.float64, n)]),
            platform=np.concatenate([self.platform, np.fromiter((self.platforms.code(r.platform) for r in rows),
                                                                np.int64, n)]),
            channel=np.concatenate([self.channel, np.fromiter((self.channels.code(r.channel) for r in rows),
                                                              np.int64, n)]))

    def window(self, since: datetime | None, until: str | None) -> tuple[int, int]:
        """Rows [start, end) asked at or after `since` and on or before the day `until`."""
        start = bisect.bisect_left(self.created, since.isoformat(timespec="milliseconds")) if since else 0
        end = bisect.bisect_right(self.created, until + "\uffff") if until else len(self.created)
        return start, max(start, end)


@dataclass(frozen=True, slots=True)
class Ratings:
    """The period's ratings: the row of the answer each rates (-1: not in the snapshot) and whether 👍."""

    rows: IntArray
    helpful: BoolArray

    @classmethod
    def of(cls, table: Table, ratings: Sequence[FeedbackRecord]) -> Ratings:
        rows = np.fromiter((table.ids.get(r.answer_id, -1) for r in ratings), np.int64, len(ratings))
        return cls(rows, np.fromiter((r.helpful for r in ratings), np.bool_, len(ratings)))


def stats_for(table: Table, rows: IntArray, ratings: Ratings, since: datetime | None) -> Stats:
    """The Stats stats_of gives for these rows (indices into the table, ascending) and the ratings that rate
    one of them."""
    stats = Stats(since=since.date().isoformat() if since else None)
    if len(rows):
        day = table.day[rows]
        questions = np.bincount(day, minlength=len(table.days.names))
        answered = np.bincount(day, weights=table.answered[rows], minlength=len(table.days.names)).astype(np.int64)
        stats.days = [Day(table.days.names[d], int(questions[d]), int(answered[d]), int(questions[d] - answered[d]))
                      for d in np.flatnonzero(questions)]
        stats.questions = len(rows)
        stats.answered = int(answered.sum())
        stats.not_answered = stats.questions - stats.answered
    if len(ratings.rows):
        chosen = np.zeros(len(table.created) + 1, np.bool_)  # the last slot stands for -1 (not held)
        chosen[rows] = True
        rated = chosen[ratings.rows]
        stats.ratings = int(rated.sum())
        stats.helpful = int((ratings.helpful & rated).sum())
        stats.rated_answers = len(np.unique(ratings.rows[rated]))
    latencies = table.latency[rows]
    latencies = np.sort(latencies[~np.isnan(latencies)])
    if len(latencies):
        n = len(latencies)
        stats.timed = n
        stats.latency_median_ms = round(float((latencies[(n - 1) // 2] + latencies[n // 2]) / 2), 1)
        stats.latency_p95_ms = round(float(latencies[max(0, math.ceil(0.95 * n) - 1)]), 1)
    return stats
