"""The Agents SDK's pause between streamed Teams activities, shortened for the tests.

`StreamingResponse._send_activity` sleeps `_interval` after every activity it sends; `_set_defaults` sets it to
1.0 s for Teams (Teams' rate for one stream), so every personal-chat answer in a test waited about a second per
update (informative update, sentences, final message): ~30 s of the suite asleep. The tests run the same SDK code
with the interval scaled by PACE; the order, merging and content of what is streamed do not depend on its length,
and a test that times the stream (tests/adapters/teams/test_teams_streaming.py) scales its fake model's timing by
the same factor."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from microsoft_agents.hosting.core.app.streaming.streaming_response import StreamingResponse

PACE = 0.2  # 1.0 s -> 0.2 s between a Teams stream's activities


@contextmanager
def paced(factor: float = PACE) -> Iterator[None]:
    """StreamingResponse's interval multiplied by `factor` while inside."""
    original = StreamingResponse._set_defaults

    def set_defaults(self: StreamingResponse, context: Any) -> None:
        original(self, context)
        self._interval *= factor

    StreamingResponse._set_defaults = set_defaults  # type: ignore[method-assign]
    try:
        yield
    finally:
        StreamingResponse._set_defaults = original  # type: ignore[method-assign]
