"""robots.txt as RFC 9309 reads it: the group for our product token (else `*`), the longest matching rule wins,
Allow wins a tie, `*` and a final `$` are wildcards; plus the non-standard but common Crawl-delay.

Python's `urllib.robotparser` takes the first matching rule and treats `*` in a path literally, which reads
`Disallow: /*?print=` (common on government sites) wrongly, hence this small parser.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

# Crawl-delay beyond this is treated as this: a site asking for minutes per page would stall a scheduled run.
MAX_CRAWL_DELAY = 60.0


def _pattern(path: str) -> re.Pattern[str]:
    anchored = path.endswith("$")
    body = re.escape(path.rstrip("$") if anchored else path).replace(r"\*", ".*")
    return re.compile(body + ("$" if anchored else ""))


@dataclass(slots=True)
class RobotsRules:
    """The rules that apply to us on one host."""

    rules: list[tuple[str, bool]] = field(default_factory=list)  # (path pattern, allowed)
    crawl_delay: float | None = None
    blocked_reason: str | None = None  # set when the whole host is off limits (robots.txt unreachable)
    _compiled: list[tuple[int, re.Pattern[str], bool]] = field(init=False, repr=False, default_factory=list)

    def __post_init__(self) -> None:
        self._compiled = [(len(p), _pattern(p), allow) for p, allow in self.rules]

    def allowed(self, url: str) -> bool:
        if self.blocked_reason:
            return False
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if target == "/robots.txt":
            return True
        best_len, verdict = -1, True
        for length, pattern, allow in self._compiled:
            if pattern.match(target) and (length > best_len or (length == best_len and allow)):
                best_len, verdict = length, allow
        return verdict


def parse_robots(text: str, agent: str) -> RobotsRules:
    """The rules of the groups naming `agent` (a product token such as "navibot"), else of the `*` groups."""
    agent = agent.lower()
    groups: list[tuple[list[str], list[tuple[str, bool]], list[float]]] = []
    in_agents = False  # consecutive user-agent lines share one group
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if ":" not in line:
            continue
        key, value = (s.strip() for s in line.split(":", 1))
        key = key.lower()
        if key == "user-agent":
            if not in_agents:
                groups.append(([], [], []))
            groups[-1][0].append(value.lower())
            in_agents = True
            continue
        in_agents = False
        if not groups:
            continue  # rules before any user-agent line belong to no group
        if key in ("allow", "disallow") and value:
            groups[-1][1].append((value if value.startswith(("/", "*")) else "/" + value, key == "allow"))
        elif key == "crawl-delay":
            with contextlib.suppress(ValueError):
                groups[-1][2].append(float(value))
    mine = [g for g in groups if any(a.split("/")[0].strip() == agent for a in g[0])]
    chosen = mine or [g for g in groups if "*" in g[0]]
    delays = [d for g in chosen for d in g[2]]
    return RobotsRules(rules=[r for g in chosen for r in g[1]],
                       crawl_delay=min(max(delays), MAX_CRAWL_DELAY) if delays else None)


def rules_for_status(status: int, text: str, agent: str) -> RobotsRules:
    """RFC 9309 §2.3.1: a 4xx robots.txt means no rules; a server error means the whole host is off limits."""
    if 200 <= status < 300:
        return parse_robots(text, agent)
    if 400 <= status < 500:
        return RobotsRules()
    return RobotsRules(blocked_reason=f"robots.txt answered HTTP {status}")
