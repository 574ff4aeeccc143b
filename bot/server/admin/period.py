"""The period an admin view covers: `?since=YYYY-MM-DD` (as `navibot stats --since`) and an optional `?until=`
(the last day included), both UTC days; `?days=N` is the period chooser's shorthand for the last N days."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.errors import UserError
from bot.observability.usage_report import parse_since

CHOICES = (7, 30, 90, 365)  # the period chooser's buttons, in days; plus "all"
DEFAULT_DAYS = 30


@dataclass(frozen=True, slots=True)
class Period:
    since: datetime | None
    until: str | None  # YYYY-MM-DD, the last day included
    days: int | None  # the chooser's button this period is, if any

    def includes(self, created: str) -> bool:
        """`created` is a stored ISO time; `since` is already applied by the store's query."""
        return self.until is None or created[:10] <= self.until

    def label(self) -> str:
        start = self.since.date().isoformat() if self.since else "the first question"
        return f"{start} to {self.until or 'today'} (UTC)"

    def query(self) -> dict[str, str]:
        """The query parameters that give this period again (links between views keep it)."""
        if self.days is not None:
            return {"days": str(self.days)}
        out = {"since": self.since.date().isoformat()} if self.since else {"days": "all"}
        if self.until:
            out["until"] = self.until
        return out


def _day(text: str | None, name: str) -> datetime | None:
    """A YYYY-MM-DD of the query as midnight UTC (`navibot stats --since`'s reading), or None when empty."""
    if not text:
        return None
    try:
        return parse_since(text)
    except UserError:
        raise UserError(f"{name}={text!r}: write the date as YYYY-MM-DD, e.g. 2026-01-31") from None


def parse_period(query: dict[str, str], today: datetime | None = None) -> Period:
    """A bad value is a UserError with a one-line message, shown on the page."""
    days = query.get("days")
    if days is not None and not query.get("since"):
        if days == "all":
            return Period(None, None, None)
        try:
            count = int(days)
        except ValueError:
            raise UserError(f"days={days!r}: give a number of days, or 'all'") from None
        if not 1 <= count <= 10_000:
            raise UserError(f"days={days!r}: give between 1 and 10000 days")
        now = today or datetime.now(UTC)
        start = (now - timedelta(days=count - 1)).date()
        return Period(datetime(start.year, start.month, start.day, tzinfo=UTC), None, count)
    since = _day(query.get("since"), "since")
    until_day = _day(query.get("until"), "until")
    until = until_day.date().isoformat() if until_day else None
    if since is None and until is None and "since" not in query:
        return parse_period({"days": str(DEFAULT_DAYS)}, today)
    if since is not None and until is not None and until < since.date().isoformat():
        raise UserError(f"until={until} is before since={since.date().isoformat()}")
    return Period(since, until, None)
