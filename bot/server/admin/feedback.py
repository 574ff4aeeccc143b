"""Feedback: each 👎 with its reason, the question, the answer and its quotes (filtered by period and channel, a
page at a time), and the 👍 each document's quotes earned."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from bot.conversations.store import FeedbackRecord
from bot.server.admin.period import Period
from bot.server.admin.snapshot import Snapshot

PAGE_SIZE = 25


@dataclass(slots=True)
class FeedbackPage:
    down: list[FeedbackRecord]  # this page's 👎, newest first
    down_total: int
    page: int
    pages: int
    up_by_document: list[tuple[str, str, int]] = field(default_factory=list)  # (doc_id, title, 👍), most first
    channels: list[str] = field(default_factory=list)  # the channels with ratings in the period, for the filter
    where: dict[str, str] = field(default_factory=dict)  # answer id -> channel, of this page's 👎


def feedback_page(snapshot: Snapshot, period: Period, channel: str | None, page: int) -> FeedbackPage:
    """The ratings of the period's answers; only the 👎 of the asked page are kept."""
    channels = {f.answer_id: f.channel for f in snapshot.answers(period)}  # of the answers of the period
    down_total = 0
    up: Counter[tuple[str, str]] = Counter()
    seen_channels: set[str] = set()
    start, stop = (page - 1) * PAGE_SIZE, page * PAGE_SIZE
    newest: deque[FeedbackRecord] = deque(maxlen=stop)  # only what the asked page needs: the newest `stop`
    for rating in snapshot.ratings(period):
        where = channels.get(rating.answer_id)
        if where is None:
            continue
        seen_channels.add(where)
        if channel and where != channel:
            continue
        if rating.helpful:
            for doc_id, title in {(c.get("doc_id", ""), c.get("title", "")) for c in rating.citations}:
                up[(str(doc_id), str(title))] += 1
        else:
            down_total += 1
            newest.append(rating)
    down = list(reversed(newest))[start:stop]
    pages = max(1, -(-down_total // PAGE_SIZE))
    return FeedbackPage(down, down_total, page, pages,
                        [(d, t, n) for (d, t), n in sorted(up.items(), key=lambda item: (-item[1], item[0]))],
                        sorted(seen_channels), {r.answer_id: channels[r.answer_id] for r in down})
