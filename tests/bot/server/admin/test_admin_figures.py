"""The admin page's figures (numpy, bot/server/admin/figures.py) are `navibot stats`' (stats_of) to the digit, on
random stores: odd and even counts, answers without a recorded time, ratings of answers outside the period, ratings
changed before it, platforms and channels, periods with a start and an end."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from bot.conversations.store import AnswerRecord, FeedbackRecord
from bot.observability.usage_report import stats_of
from bot.server.admin.overview import channel_of, compute_overview
from bot.server.admin.period import parse_period
from bot.server.admin.snapshot import Snapshot

START = datetime(2026, 3, 1, tzinfo=UTC)


class ListStore:
    """The two reads the snapshot makes, over lists (the stores' own reads are tested in tests/bot/cli)."""

    def __init__(self, answers: list[AnswerRecord], ratings: list[FeedbackRecord]) -> None:
        self._answers = sorted(answers, key=lambda a: (a.created, a.answer_id))
        self._ratings = sorted(ratings, key=lambda r: r.updated)

    def answers(self, since: datetime | None = None) -> Iterator[AnswerRecord]:
        cut = since.isoformat(timespec="milliseconds") if since else ""
        return (a for a in self._answers if a.created >= cut)

    def ratings(self, since: datetime | None = None) -> Iterator[FeedbackRecord]:
        cut = since.isoformat(timespec="milliseconds") if since else ""
        return (r for r in self._ratings if r.updated >= cut)


def random_store(rng: random.Random, count: int) -> ListStore:
    answers, ratings = [], []
    for n in range(count):
        when = START + timedelta(minutes=rng.randrange(20 * 24 * 60))
        platform = rng.choice(["slack", "teams"])
        latency = None if rng.random() < 0.1 else round(rng.uniform(50, 3000), rng.choice([0, 1, 3]))
        answers.append(AnswerRecord(f"a{n}", f"{platform}|T|C{rng.randrange(25)}|t", platform, "U", "q", "q", "a",
                                    rng.choice(["answer", "answer", "no_answer"]), "concise", [],
                                    when.isoformat(timespec="milliseconds"), latency))
        for user in range(rng.choice([0, 0, 0, 1, 2])):
            rated = when + timedelta(minutes=rng.randrange(0, 3 * 24 * 60))
            ratings.append(FeedbackRecord(f"a{n}", f"U{user}", rng.random() < 0.7, None, "q", "q", "a", [],
                                          platform, rated.isoformat(timespec="milliseconds"),
                                          rated.isoformat(timespec="milliseconds")))
    return ListStore(answers, ratings)


@pytest.mark.parametrize("seed", range(8))
def test_figures_equal_stats_of(seed: int) -> None:
    rng = random.Random(seed)
    store = random_store(rng, rng.choice([1, 2, 7, 40, 301]))
    snapshot = Snapshot(store)  # type: ignore[arg-type]
    snapshot.refresh()
    for query in ({"days": "all"}, {"since": "2026-03-05"}, {"since": "2026-03-03", "until": "2026-03-09"},
                  {"since": "2026-05-01"}):
        period = parse_period(query)
        answers = [a for a in store.answers(period.since) if period.includes(a.created)]
        ratings = list(store.ratings(period.since))
        overview = compute_overview(snapshot, period)
        assert overview.total.as_dict() == stats_of(answers, ratings, period.since).as_dict(), query
        for group in overview.platforms:
            mine = [a for a in answers if a.platform == group.name]
            assert group.stats.as_dict() == stats_of(mine, ratings, period.since).as_dict(), (query, group.name)
        for group in overview.channels:
            mine = [a for a in answers if channel_of(a) == group.name]
            assert group.stats.as_dict() == stats_of(mine, ratings, period.since).as_dict(), (query, group.name)
        assert sum(g.stats.questions for g in overview.platforms) == overview.total.questions


def test_the_snapshot_takes_new_and_late_saved_answers_and_changed_ratings() -> None:
    rng = random.Random(99)
    store = random_store(rng, 60)
    snapshot = Snapshot(store)  # type: ignore[arg-type]
    snapshot.refresh()
    period = parse_period({"days": "all"})
    compute_overview(snapshot, period)  # the columns are made
    newest = max(a.created for a in store._answers)
    later = (datetime.fromisoformat(newest) + timedelta(minutes=5)).isoformat(timespec="milliseconds")
    late = (datetime.fromisoformat(newest) - timedelta(minutes=3)).isoformat(timespec="milliseconds")
    for answer_id, created in (("new", later), ("late", late)):  # "late": saved now by another instance, stamped
        store._answers.append(AnswerRecord(answer_id, "teams|T|C99|t", "teams", "U", "q", "q", "a", "no_answer",
                                           "concise", [], created, 5.0))  # before the newest already read
        store._answers.sort(key=lambda a: (a.created, a.answer_id))
        snapshot.refresh()
        overview = compute_overview(snapshot, period)
        answers, ratings = list(store.answers()), list(store.ratings())
        assert overview.total.as_dict() == stats_of(answers, ratings).as_dict()
    first = store._ratings[0]
    now = (datetime.fromisoformat(max(r.updated for r in store._ratings)) + timedelta(minutes=1)).isoformat(
        timespec="milliseconds")  # a changed rating is stamped when it is changed: after every earlier one
    changed = FeedbackRecord(first.answer_id, first.user, not first.helpful, "changed", "q", "q", "a", [],
                             first.platform, first.created, now)
    store._ratings = [changed, *store._ratings[1:]]
    snapshot.refresh()
    assert compute_overview(snapshot, period).total.as_dict() == stats_of(list(store.answers()),
                                                                          store._ratings).as_dict()


def test_a_first_read_cut_short_by_shutdown_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.server.admin import snapshot as snapshot_module

    monkeypatch.setattr(snapshot_module, "CHECK_EVERY", 10)
    store = random_store(random.Random(5), 50)
    snapshot = Snapshot(store)  # type: ignore[arg-type]
    asked: list[int] = []

    def stopping() -> bool:  # "stopping" from the first look on, after 10 answers
        asked.append(1)
        return True

    snapshot.refresh(stopping)
    assert asked == [1] and compute_overview(snapshot, parse_period({"days": "all"})).total.questions == 0
    snapshot.refresh()
    assert compute_overview(snapshot, parse_period({"days": "all"})).total.questions == 50
