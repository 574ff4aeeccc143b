"""Retrying rate-limited Web API calls: Slack answers 429 with a Retry-After header (seconds) to wait."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

log = logging.getLogger(__name__)

MAX_RETRIES = 3
MAX_WAIT_SECONDS = 30.0  # a longer Retry-After means the answer would come too late for a call anyway


class RetryAfterHandler(AsyncRateLimitErrorRetryHandler):
    """Waits exactly what Retry-After says (capped), where slack_sdk's own handler adds up to a second of jitter:
    Slack computes the delay per method and workspace, so a random extra only makes the answer later."""

    def __init__(self, max_retry_count: int = MAX_RETRIES, max_wait: float = MAX_WAIT_SECONDS) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait = max_wait

    async def prepare_for_next_attempt_async(self, *, state: RetryState, request: HttpRequest,
                                             response: HttpResponse | None = None,
                                             error: Exception | None = None) -> None:
        if response is None:  # only called for 429 responses (see _can_retry_async); kept for the type checker
            raise error or RuntimeError("rate-limit retry without a response")
        wait = 1.0  # Slack always sends Retry-After; one second if a proxy dropped it
        for name, values in response.headers.items():
            if name.lower() == "retry-after" and values:
                with contextlib.suppress(ValueError):
                    wait = max(0.0, float(values[0]))
        wait = min(wait, self.max_wait)
        method = request.url.rsplit("/", 1)[-1]
        log.warning("Slack rate-limited %s; retry %d of %d in %.0f s", method, state.current_attempt + 1,
                    self.max_retry_count, wait)
        state.next_attempt_requested = True
        await asyncio.sleep(wait)
        state.increment_current_attempt()


def retry_handlers() -> list[AsyncRetryHandler]:
    """Connection resets (slack_sdk's default) and rate limits."""
    return [AsyncConnectionErrorRetryHandler(), RetryAfterHandler()]
