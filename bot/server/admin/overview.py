"""The Overview: `navibot stats` for a period, and the same figures by platform and by channel.

The figures are computed by bot/server/admin/figures.py over the snapshot's columns (bot/server/admin/snapshot.py:
read a page at a time from the store once, then only what is new), by the rules of `navibot stats`
(bot.observability.usage_report.stats_of), so the totals are the command's figures for the same `--since`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bot.conversations.store import AnswerRecord
from bot.observability.usage_report import Stats
from bot.server.admin.figures import Ratings, stats_for
from bot.server.admin.period import Period
from bot.server.admin.snapshot import Snapshot

TOP_CHANNELS = 20  # the channels table shows the busiest ones
CHART_CHANNELS = 10  # and the chart the ten busiest


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
        """What admin.js draws: per day and per busy channel, the questions (answered / not answered); by
        platform, the two rates."""
        return {"days": [d.day for d in self.total.days],
                "answered": [d.answered for d in self.total.days],
                "not_answered": [d.not_answered for d in self.total.days],
                "platforms": [g.name for g in self.platforms],
                "platform_answer_rate": [g.stats.as_dict()["answer_rate"] for g in self.platforms],
                "platform_helpful_rate": [g.stats.as_dict()["helpful_rate"] for g in self.platforms],
                "channels": [g.name for g in self.channels[:CHART_CHANNELS]],
                "channel_answered": [g.stats.answered for g in self.channels[:CHART_CHANNELS]],
                "channel_not_answered": [g.stats.not_answered for g in self.channels[:CHART_CHANNELS]]}


def compute_overview(snapshot: Snapshot, period: Period) -> Overview:
    table = snapshot.table()
    ratings = Ratings.of(table, list(snapshot.ratings(period)))
    start, end = table.window(period.since, period.until)
    total = stats_for(table, np.arange(start, end), ratings, period.since)

    def group(codes: np.ndarray, code: int, name: str) -> Group:
        return Group(name, stats_for(table, start + np.flatnonzero(codes == code), ratings, period.since))

    platform_codes = table.platform[start:end]
    platforms = sorted((table.platforms.names[c], int(c)) for c in np.unique(platform_codes))
    channel_codes = table.channel[start:end]
    counts = np.bincount(channel_codes, minlength=len(table.channels.names))
    used = [(-int(counts[c]), table.channels.names[c], c) for c in np.flatnonzero(counts)]
    busiest = sorted(used)[:TOP_CHANNELS]
    return Overview(total, [group(platform_codes, code, name) for name, code in platforms],
                    [group(channel_codes, int(code), name) for _, name, code in busiest], len(used))
