"""The Overview: `navibot stats` for a period, and the same figures by platform and by channel.

One pass over the answers of the period (read a page at a time by the store) and one over its ratings; each
group's figures come from `bot.cli.admin_report.stats_of`, the function behind `navibot stats`, so the totals are
the command's figures for the same `--since`."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from bot.cli.admin_report import Stats, stats_of
from bot.conversations.store import AnswerRecord, ConversationStore, FeedbackRecord
from bot.server.admin.period import Period

TOP_CHANNELS = 20  # the channels table shows the busiest ones


def channel_name(platform: str, conversation_key: str) -> str:
    """`slack:C0123` from the conversation key platform|workspace|channel|thread."""
    parts = conversation_key.split("|")
    return f"{platform}:{parts[2] if len(parts) > 2 else ''}"


def channel_of(record: AnswerRecord) -> str:
    return channel_name(record.platform, record.conversation_key)


@dataclass(slots=True)
class Group:
    name: str
    stats: Stats

    def row(self) -> dict[str, Any]:
        data = self.stats.as_dict()
        return {"name": self.name, **{k: data[k] for k in (
            "questions", "answered", "not_answered", "answer_rate", "no_answer_rate", "ratings", "helpful",
            "helpful_rate", "latency_median_ms", "latency_p95_ms")}}


@dataclass(slots=True)
class Overview:
    total: Stats
    platforms: list[Group] = field(default_factory=list)
    channels: list[Group] = field(default_factory=list)
    channel_count: int = 0

    def chart_data(self) -> dict[str, Any]:
        """What admin.js draws: per day, the questions (answered / not answered) and the helpful rate."""
        return {"days": [d.day for d in self.total.days],
                "answered": [d.answered for d in self.total.days],
                "not_answered": [d.not_answered for d in self.total.days],
                "platforms": [g.name for g in self.platforms],
                "platform_answer_rate": [g.stats.as_dict()["answer_rate"] for g in self.platforms],
                "platform_helpful_rate": [g.stats.as_dict()["helpful_rate"] for g in self.platforms]}


def compute_overview(store: ConversationStore, period: Period) -> Overview:
    answers: list[AnswerRecord] = [r for r in store.answers(period.since) if period.includes(r.created)]
    ratings: list[FeedbackRecord] = list(store.ratings(period.since))
    total = stats_of(answers, ratings, period.since)
    by_platform: dict[str, list[AnswerRecord]] = defaultdict(list)
    by_channel: dict[str, list[AnswerRecord]] = defaultdict(list)
    for record in answers:
        by_platform[record.platform].append(record)
        by_channel[channel_of(record)].append(record)
    ratings_by_answer: dict[str, list[FeedbackRecord]] = defaultdict(list)
    for rating in ratings:
        ratings_by_answer[rating.answer_id].append(rating)

    def group(name: str, records: list[AnswerRecord]) -> Group:
        rated = [r for record in records for r in ratings_by_answer.get(record.answer_id, ())]
        rated.sort(key=lambda r: r.updated)
        return Group(name, stats_of(records, rated, period.since))

    platforms = [group(name, records) for name, records in sorted(by_platform.items())]
    busiest = sorted(by_channel.items(), key=lambda item: (-len(item[1]), item[0]))[:TOP_CHANNELS]
    return Overview(total, platforms, [group(name, records) for name, records in busiest], len(by_channel))
