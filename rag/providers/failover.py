"""Calls to a hosted model, tried over several endpoints (regions, proxies) and keys in a random order.

Why our own loop and not the SDKs' retries: a navigator is on a live call, so a slow or overloaded endpoint must
be left for another at once (not retried after a back-off), and the whole turn has one deadline. The SDK clients
are therefore built with their retries off, and every call gets `min(per-call timeout, time left in the turn)`.

What moves to the next endpoint: a timeout or connection failure, HTTP 429, 5xx, a key refused there (401/403:
another key may work), and a reply that cannot be understood. What stops at once: any other 4xx in the API's own
error format, because the request itself is wrong and every endpoint would refuse it too (a 4xx page from a proxy
or a wrong base URL moves on).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit

from rag.answer.budget import Deadline, current_budget
from rag.answer.compute_gate import waiting_on_model

log = logging.getLogger(__name__)

MIN_CALL_SECONDS = 0.05  # less than this left in the turn: not worth starting a call


class ProviderError(RuntimeError):
    """A provider call failed; the message names the provider, the operation and the cause, never a key."""


class RequestRejected(ProviderError):
    """The provider refused the request itself (a 4xx other than 401/403/408/429): not retried elsewhere."""


class ProviderUnavailable(ProviderError):
    """Every endpoint failed, or the turn's deadline left no time to try one."""


class BadReply(ValueError):
    """The provider answered, but not in the expected shape (e.g. malformed JSON): try the next endpoint."""


class Verdict(Enum):
    NEXT = "next"  # transient or endpoint-specific: try another endpoint
    STOP = "stop"  # the request is at fault: no endpoint will accept it


Classifier = Callable[[Exception], tuple[Verdict, str]]


def classify_status(status: int | None) -> Verdict:
    if status is None or status in (401, 403, 408, 429) or status >= 500:
        return Verdict.NEXT
    return Verdict.STOP if 400 <= status < 500 else Verdict.NEXT


def not_an_http_error(exc: Exception) -> tuple[Verdict, str]:
    """Anything but an HTTP error reply tries the next endpoint: a timeout or connection failure of httpx/httpx2
    (both SDKs use one of them) said in a few words, anything else by its type and message."""
    name = type(exc).__name__
    module = type(exc).__module__ or ""
    if module.startswith(("httpx", "httpcore")) or isinstance(exc, (TimeoutError, ConnectionError)):
        timed_out = "Timeout" in name or isinstance(exc, TimeoutError)
        return Verdict.NEXT, "timed out" if timed_out else f"connection failed ({name})"
    return Verdict.NEXT, f"{name}: {str(exc)[:200]}"


def not_the_api(provider: str, status: int | None) -> tuple[Verdict, str]:
    """An HTTP error that is not in the API's own JSON error format (e.g. an HTML 404 page) comes from whatever
    stands at that base URL (a proxy, a typo in the path), not from the provider judging the request: another
    endpoint may work, so it is not a reason to stop."""
    return Verdict.NEXT, f"HTTP {status} that is not a {provider} API error (a wrong base URL or a proxy?)"


def api_message(message: object) -> str:
    """The provider's own explanation of an HTTP error, shortened for a log line ("": none given). It says what is
    wrong with a setting (e.g. a model that cannot switch thinking off); the APIs never echo the key."""
    text = " ".join(str(message or "").split())
    return f": {text[:160]}{'…' if len(text) > 160 else ''}" if text else ""


@dataclass(frozen=True, slots=True)
class Endpoint[C]:
    label: str  # what logs may say about it: host and key number, never the key
    client: C


class Failover[C]:
    def __init__(self, provider: str, endpoints: Sequence[Endpoint[C]], per_call_timeout: float,
                 classify: Classifier, rng: random.Random | None = None) -> None:
        if not endpoints:
            raise ValueError(f"{provider}: no endpoint configured")
        self.provider = provider
        self.endpoints = list(endpoints)
        self.per_call_timeout = per_call_timeout
        self.classify = classify
        self._rng = rng or random.Random()

    def call[T](self, operation: str, fn: Callable[[C, float], T], share: float = 1.0) -> T:
        """`fn(client, timeout_seconds)` on endpoints in a random order until one succeeds, within the turn's
        deadline. `share` < 1 keeps this operation to that share of the turn's time left, so a slow rewrite
        cannot starve the answer."""
        deadline = current_budget().deadline
        if share < 1.0 and deadline.remaining() != float("inf"):
            deadline = Deadline(deadline.remaining() * share)
        order = self._rng.sample(self.endpoints, len(self.endpoints))
        causes: list[str] = []
        for endpoint in order:
            timeout = deadline.timeout(self.per_call_timeout)
            if timeout < MIN_CALL_SECONDS:
                causes.append("the turn's deadline passed (no time left for this call)")
                break
            try:
                with waiting_on_model():  # the turn's compute slot goes to another turn while this one waits
                    return fn(endpoint.client, timeout)
            except BadReply as exc:
                cause = f"unusable reply ({exc})"
            except Exception as exc:  # classified: anything unknown tries the next endpoint
                verdict, cause = self.classify(exc)
                if verdict is Verdict.STOP:
                    raise RequestRejected(f"{self.provider} {operation} refused by {endpoint.label}: {cause}") from exc
            causes.append(f"{endpoint.label}: {cause}")
            log.info("%s %s failed on %s (%s)", self.provider, operation, endpoint.label, cause)
        raise ProviderUnavailable(f"{self.provider} {operation} failed: {'; '.join(causes) or 'no endpoint'}")


def endpoint_labels(provider: str, base_urls: Sequence[str], n_keys: int) -> list[tuple[str | None, int, str]]:
    """Every (base URL, key number) pair, with a label that is safe to log: host and port only, since a proxy's
    URL may carry a user and password (https://user:password@proxy/)."""
    urls: list[str | None] = list(base_urls) or [None]
    return [(url, key, f"{provider}@{_host(url) if url else 'default'}#key{key + 1}")
            for url in urls for key in range(n_keys)]


def _host(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host  # an IPv6 address
    try:
        return f"{host}:{parts.port}" if parts.port else host
    except ValueError:  # a port that is not a number: the settings accept any http(s) URL
        return host
