"""Which document URLs a chat message may link to. Knowledge-base URLs are data (a crawled page chooses its own),
so a link is made only to an absolute http(s) URL with a host, with no whitespace, control or invisible format
characters (a right-to-left override can disguise where a link goes); anything else is shown as text or dropped."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit


def web_url(url: str | None, max_chars: int, forbidden: str = "") -> str | None:
    """`url` when a message may link to it, else None. `forbidden`: characters the surface's own markup gives a
    meaning (Slack's `<url|label>`: `<`, `>`, `|`)."""
    if not url or len(url) > max_chars or any(
            c in forbidden or c.isspace() or unicodedata.category(c) in {"Cc", "Cf"} for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:  # an invalid IPv6 host, say
        return None
    return url if parts.scheme.lower() in {"http", "https"} and parts.hostname else None
