"""Acks first: the work Slack requests start (Bolt's dispatch of an acknowledged event, a question's turn, a click's
Web API calls) waits while requests keep arriving, then starts one piece at a time, in the order it was started.

The acks share one event loop (and one GIL) with that work. With 200 questions at once, work started as soon as
its request was acknowledged delayed the acks still to send: Bolt's dispatch alone costs ~0.4 ms of loop time a
request, a turn's start more. "Requests keep arriving" is judged by the loop's own progress, not by the clock: the
door is quiet when two loop iterations passed without a new request (data already in the sockets is read and its
handler run within two iterations). A wall-clock quiet gap opened the door mid-burst whenever the process was
descheduled for a few milliseconds on a busy machine. One piece is released per quiet check, so a backlog does not
run as one long block in front of the next request; none waits longer than `cap` seconds, however busy the door.
"""

from __future__ import annotations

import asyncio
from collections import deque

BUSY_POLL_SECONDS = 0.001  # while requests keep arriving, how often the door is looked at again


class AfterAcks:
    """`note_request()` at the door; `await wait()` before work a request started. Create and use on one loop."""

    def __init__(self, cap: float) -> None:
        self.cap = cap
        self._arrivals = 0
        self._waiting: deque[tuple[float, asyncio.Future[None]]] = deque()
        self._pump: asyncio.Task[None] | None = None

    def note_request(self) -> None:
        self._arrivals += 1

    @property
    def waiting(self) -> int:
        return sum(1 for _, future in self._waiting if not future.done())

    async def wait(self) -> None:
        """Returns once the door is quiet and the work that waited before this is started (FIFO), or after `cap`."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiting.append((loop.time(), future))
        if self._pump is None or self._pump.done():
            self._pump = loop.create_task(self._release())
        await future  # cancelled (a shutdown): the pump skips it

    async def _release(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting:
            since, future = self._waiting[0]
            if future.done():  # cancelled while waiting
                self._waiting.popleft()
                continue
            seen = self._arrivals
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            if self._arrivals != seen and loop.time() - since < self.cap:
                await asyncio.sleep(BUSY_POLL_SECONDS)
                continue
            self._waiting.popleft()
            if not future.done():
                future.set_result(None)
