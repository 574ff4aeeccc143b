"""What `navibot stats` and `navibot feedback export` compute from the conversation store: the figures and the rows.

Kept apart from the command module (bot/cli/admin_cli.py), which only parses, opens the store and prints. Both
read the store lazily (answers a page at a time), so a year of a busy agency's questions is never held twice.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Protocol, TextIO

from bot.conversations.store import ConversationStore, FeedbackRecord
from bot.errors import UserError

EXPORT_FIELDS = ("time", "platform", "rating", "reason", "question", "answer", "citations")
BOM = "\ufeff"  # the CSV's first character (see write_csv)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula


def parse_since(text: str | None) -> datetime | None:
    """`--since YYYY-MM-DD` as midnight UTC of that day; a bad value is a one-line UserError."""
    if text is None:
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise UserError(f"--since {text!r}: not a date; write it as YYYY-MM-DD, e.g. --since 2026-01-31") from None
    if len(text.strip()) != 10:  # fromisoformat also takes 20260131 and 2026-W05-1: say YYYY-MM-DD only
        raise UserError(f"--since {text!r}: write the date as YYYY-MM-DD, e.g. --since 2026-01-31")
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


# ---------------------------------------------------------------------------------------------------- stats


@dataclass(slots=True)
class Day:
    day: str  # YYYY-MM-DD, UTC
    questions: int = 0
    answered: int = 0
    not_answered: int = 0


@dataclass(slots=True)
class Stats:
    since: str | None
    days: list[Day] = field(default_factory=list)
    questions: int = 0
    answered: int = 0
    not_answered: int = 0
    ratings: int = 0  # one per navigator and answer (a changed rating counts once, as it stands)
    helpful: int = 0
    rated_answers: int = 0
    timed: int = 0  # answers with a recorded latency (older versions did not store it)
    latency_median_ms: float | None = None
    latency_p95_ms: float | None = None

    def rate(self, part: int, whole: int) -> float | None:
        return round(part / whole, 4) if whole else None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["answer_rate"] = self.rate(self.answered, self.questions)
        data["no_answer_rate"] = self.rate(self.not_answered, self.questions)
        data["helpful_rate"] = self.rate(self.helpful, self.ratings)
        return data


def percentile(ordered: list[float], share: float) -> float:
    """Nearest-rank percentile of an ascending list (p95 of 20 values is the 19th)."""
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def compute_stats(store: ConversationStore, since: datetime | None = None) -> Stats:
    return stats_of(store.answers(since), store.ratings(since), since)


class Asked(Protocol):
    """What the figures read of an answer: an AnswerRecord, or the admin page's lighter copy of one."""

    @property
    def answer_id(self) -> str: ...

    @property
    def created(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def latency_ms(self) -> float | None: ...


def stats_of(answers: Iterable[Asked], ratings: Iterable[FeedbackRecord], since: datetime | None = None) -> Stats:
    """The figures of these answers and of those of the ratings that rate one of them (the admin page's overview
    computes each platform's and channel's figures with this, so they add up as `navibot stats` counts)."""
    stats = Stats(since=since.date().isoformat() if since else None)
    per_day: Counter[tuple[str, bool]] = Counter()  # (day, answered) -> questions: one count per record, no objects
    latencies: list[float] = []
    ids: set[str] = set()
    for record in answers:
        ids.add(record.answer_id)
        per_day[(record.created[:10], record.kind == "answer")] += 1
        if record.latency_ms is not None:
            latencies.append(record.latency_ms)
    days: dict[str, Day] = {}
    for (when, answered), count in per_day.items():
        day = days.setdefault(when, Day(when))
        day.questions += count
        if answered:
            day.answered += count
        else:
            day.not_answered += count
    stats.questions = sum(d.questions for d in days.values())
    stats.answered = sum(d.answered for d in days.values())
    stats.not_answered = stats.questions - stats.answered
    # Ratings of the questions in the window (a rating is always given after its answer, so `since` narrows it).
    rated: set[str] = set()
    for rating in ratings:
        if rating.answer_id in ids:
            stats.ratings += 1
            stats.helpful += rating.helpful
            rated.add(rating.answer_id)
    stats.rated_answers = len(rated)
    stats.days = [days[d] for d in sorted(days)]
    if latencies:
        latencies.sort()
        stats.timed = len(latencies)
        stats.latency_median_ms = round(statistics.median(latencies), 1)
        stats.latency_p95_ms = round(percentile(latencies, 0.95), 1)
    return stats


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part:,} of {whole:,})"


def stats_text(stats: Stats) -> str:
    if not stats.questions:
        return f"No questions since {stats.since} yet." if stats.since else "No questions yet."
    width = max(10, *(len(f"{d.questions:,}") for d in stats.days))
    lines = ["Questions per day (UTC)" + (f", since {stats.since}" if stats.since else ""),
             f"{'day':<10}  {'questions':>{width}}  {'answered':>9}  {'not answered':>12}"]
    for d in [*stats.days, Day("total", stats.questions, stats.answered, stats.not_answered)]:
        lines.append(f"{d.day:<10}  {d.questions:>{width},}  {d.answered:>9,}  {d.not_answered:>12,}")
    lines.append("")
    lines.append(f"answer rate     {_share(stats.answered, stats.questions)}")
    lines.append(f"no-answer rate  {_share(stats.not_answered, stats.questions)}")
    if stats.ratings:
        lines.append(f"helpful rate    {_share(stats.helpful, stats.ratings)} ratings, "
                     f"on {stats.rated_answers:,} rated answer{'s' if stats.rated_answers != 1 else ''}")
    else:
        lines.append("helpful rate    no ratings yet")
    if stats.latency_median_ms is not None:
        untimed = stats.questions - stats.timed
        lines.append(f"latency         median {stats.latency_median_ms:,.0f} ms, p95 {stats.latency_p95_ms:,.0f} ms"
                     + (f" ({untimed:,} older answers have no time recorded)" if untimed else ""))
    else:
        lines.append("latency         not recorded (these answers were saved by a version that did not time them)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- feedback export


def citation_line(citations: list[dict[str, Any]]) -> str:
    """CSV form: `[1] Title › Heading › Sub — url | [2] ...`."""
    parts = []
    for c in citations:
        where = " › ".join([str(c.get("title") or c.get("doc_id") or ""), *map(str, c.get("heading_path") or [])])
        parts.append(f"[{c.get('number')}] {where}" + (f" — {c['url']}" if c.get("url") else ""))
    return " | ".join(parts)


def export_row(record: FeedbackRecord) -> dict[str, Any]:
    """One rating as it is exported; the time is when the rating as it stands was given (ISO 8601, UTC); no reason
    is None (null in JSON Lines, an empty cell in CSV)."""
    return {"time": record.updated, "platform": record.platform,
            "rating": "helpful" if record.helpful else "not helpful", "reason": record.reason,
            "question": record.question, "answer": record.answer, "citations": record.citations}


def export_rows(store: ConversationStore, since: datetime | None = None) -> Iterator[dict[str, Any]]:
    return (export_row(r) for r in store.ratings(since))


def defuse(text: str) -> str:
    """A cell a spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a leading apostrophe, which
    Excel, LibreOffice and Google Sheets show as text. CSV only: the JSON Lines export keeps the text as stored."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csv(rows: Iterable[dict[str, Any]], out: TextIO) -> int:
    """RFC 4180 (the csv module quotes commas, quotes and newlines); every free-text cell is defused, since a
    question or reason is typed by anyone in the channel and an answer may quote a crawled page.

    It starts with a UTF-8 byte order mark: Excel, which an agency's staff most likely open it with, reads a CSV
    without one in the Windows code page and garbles every citation's › and — and any accented question.
    LibreOffice, Google Sheets, pandas and Python's `utf-8-sig` skip it; JSON Lines (for programs) has none."""
    out.write(BOM)
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(EXPORT_FIELDS)
    count = 0
    for row in rows:
        cells = {**row, "reason": row["reason"] or "", "citations": citation_line(row["citations"])}
        writer.writerow([defuse(str(cells[name])) for name in EXPORT_FIELDS])
        count += 1
    return count


def write_jsonl(rows: Iterable[dict[str, Any]], out: TextIO) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count
