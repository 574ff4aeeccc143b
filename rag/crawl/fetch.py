"""HTTP for the crawler: one aiohttp session, a polite per-host pace, retries with backoff, and hard limits.

A fetch never raises for anything the network or the server does: it returns a `FetchResult` that says what
happened, so one bad URL is a line in the report and never the end of a run.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import aiohttp

from rag.crawl.frontier import host_of

USER_AGENT = "Navibot/0.1 (+https://github.com/navibot/navibot; benefits-navigator knowledge crawler)"
ROBOTS_TOKEN = "navibot"  # the product token robots.txt groups are matched against
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
MAX_REDIRECTS = 10  # followed for us (robots.txt, sitemaps) or one by one by the crawler
MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    """Limits of one request. Tests shrink the times; the defaults suit a real government website."""

    user_agent: str = USER_AGENT
    timeout: float = 30.0  # seconds for one attempt, connection to last byte: a page that trickles is cut off
    retries: int = 2  # extra attempts after a timeout, a dropped connection, 429 or 5xx
    backoff: float = 1.0  # first wait before a retry; doubled each time, with jitter
    max_backoff: float = 30.0
    max_retry_after: float = 120.0  # a longer Retry-After is not waited for: the URL is reported instead
    max_bytes: int = 10 * MB  # a bigger body is not read (Content-Length) or abandoned while reading


@dataclass(slots=True)
class FetchResult:
    url: str
    status: int = 0  # 0: no HTTP response at all
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    final_url: str = ""  # differs from url only when redirects were followed for us (robots.txt, sitemaps)
    error: str | None = None  # why there is no usable response
    transient: bool = False  # the error may go away (timeout, server error): the page may still exist
    unreachable: bool = False  # no connection could be made to the host at all
    wrong_type: bool = False  # answered, but with a body that is neither HTML nor PDF (not read)
    canonical: str | None = None  # from a `Link: <...>; rel="canonical"` header (PDFs have no <link> tag)

    @property
    def ok(self) -> bool:
        return self.error is None and 200 <= self.status < 300

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


class HostThrottle:
    """Spaces the starts of requests to one host by a delay, however many workers share it."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._delays: dict[str, float] = {}
        self._next: dict[str, float] = {}

    def set_delay(self, host: str, seconds: float) -> None:
        """A host's robots.txt Crawl-delay, when it asks for more than our default."""
        self._delays[host] = max(self.delay, seconds)

    async def wait(self, host: str) -> None:
        now = asyncio.get_running_loop().time()
        start = max(now, self._next.get(host, now))
        self._next[host] = start + self._delays.get(host, self.delay)
        if start > now:
            await asyncio.sleep(start - now)


def parse_http_date(value: str | None) -> datetime | None:
    """An HTTP date (Retry-After, Last-Modified) as an aware datetime; None if missing or unreadable."""
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After is either seconds or an HTTP date."""
    if value and value.strip().isdigit():
        return float(value)
    when = parse_http_date(value)
    return None if when is None else max(0.0, (when - datetime.now(UTC)).total_seconds())


class Fetcher:
    """GETs over one shared session, each paced by the host's throttle (retries included)."""

    def __init__(self, session: aiohttp.ClientSession, policy: FetchPolicy, throttle: HostThrottle) -> None:
        self.session = session
        self.policy = policy
        self.throttle = throttle

    async def get(self, url: str, headers: dict[str, str] | None = None, *, follow_redirects: bool = False,
                  max_bytes: int | None = None, wanted: Callable[[str], bool] | None = None) -> FetchResult:
        """GET with retries. Redirects are returned (status 3xx, `location` header) unless `follow_redirects`;
        a body whose content type `wanted` refuses is not read."""
        policy = self.policy
        attempt = 0
        while True:
            await self.throttle.wait(host_of(url))
            result = await self._once(url, headers or {}, follow_redirects, max_bytes or policy.max_bytes, wanted)
            retryable = result.transient and (result.status == 0 or result.status in RETRY_STATUSES)
            if not retryable or attempt >= policy.retries:
                return result
            wait = min(policy.backoff * 2 ** attempt, policy.max_backoff) * random.uniform(0.8, 1.2)
            asked = retry_after_seconds(result.headers.get("retry-after"))
            if asked is not None:
                if asked > policy.max_retry_after:
                    result.error = f"{result.error}; the server asks to retry after {asked:.0f} s"
                    return result
                wait = max(wait, asked)
            attempt += 1
            await asyncio.sleep(wait)

    async def _once(self, url: str, headers: dict[str, str], follow: bool, max_bytes: int,
                    wanted: Callable[[str], bool] | None) -> FetchResult:
        result = FetchResult(url=url, final_url=url)
        timeout = aiohttp.ClientTimeout(total=self.policy.timeout)
        try:
            async with self.session.get(url, headers=headers, allow_redirects=follow, max_redirects=MAX_REDIRECTS,
                                        timeout=timeout) as resp:
                result.status = resp.status
                result.final_url = str(resp.url)
                result.headers = {k.lower(): v for k, v in resp.headers.items()}
                link = resp.links.get("canonical")
                if link and link.get("url"):
                    result.canonical = str(resp.url.join(link["url"]))  # type: ignore[arg-type]
                if resp.status >= 400:
                    result.error = f"HTTP {resp.status}"
                    result.transient = resp.status in RETRY_STATUSES
                    return result
                if not 200 <= resp.status < 300:
                    return result  # 3xx (redirect, 304 Not Modified): no body wanted
                if wanted is not None and not wanted(result.content_type):
                    result.error = f"not a web page or PDF ({result.content_type or 'no content type'})"
                    result.wrong_type = True
                    return result
                if resp.content_length is not None and resp.content_length > max_bytes:
                    result.error = f"too large ({resp.content_length / MB:.1f} MB, limit {max_bytes / MB:.0f} MB)"
                    return result
                body = bytearray()
                async for piece in resp.content.iter_chunked(64 * 1024):
                    body += piece
                    if len(body) > max_bytes:
                        result.error = f"too large (more than {max_bytes / MB:.0f} MB)"
                        return result
                result.body = bytes(body)
        except TimeoutError:
            result.error, result.transient = f"timed out after {self.policy.timeout:g} s", True
        except aiohttp.TooManyRedirects:
            result.error = "too many redirects"
        except aiohttp.ClientConnectorError as exc:
            result.error, result.transient, result.unreachable = f"cannot connect ({exc.os_error})", True, True
        except aiohttp.InvalidURL as exc:
            result.error = f"invalid URL ({exc})"
        except (aiohttp.ClientError, OSError, ValueError) as exc:  # dropped connection, bad chunking, bad header
            result.error, result.transient = f"{exc.__class__.__name__}: {exc}".rstrip(": "), True
        return result
