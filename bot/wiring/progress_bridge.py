"""The engine reports progress from the turn's worker thread (rag.answer.progress.AnswerProgress: plain calls);
an adapter shows it with async Slack/Teams calls (bot.port.TurnProgress). This bridge queues each report onto the
event loop and delivers them in order, one at a time, without making the model wait for Slack or Teams."""

from __future__ import annotations

import asyncio
import logging

from bot.port import TurnProgress

log = logging.getLogger(__name__)


class ThreadedProgress:
    """An AnswerProgress for the worker thread, delivering to a TurnProgress on `loop`. Create it on the loop;
    `close()` (on the loop) waits until every report was delivered, so the final reply always comes last."""

    def __init__(self, loop: asyncio.AbstractEventLoop, target: TurnProgress) -> None:
        self.loop = loop
        self.target = target
        self._queue: asyncio.Queue[tuple[str, str] | None] = asyncio.Queue()
        self._opening: asyncio.Task[None] | None = None
        self._last_status: str | None = None
        self._pump = loop.create_task(self._deliver())

    async def first(self, words: str, wait: float) -> None:
        """Shows `words` now, on the loop, before the turn's thread starts competing for the CPU: the turn waits
        for it at most `wait` seconds (then it is delivered in the background, still before any later report)."""
        self._last_status = words
        self._opening = self.loop.create_task(self._show("status", words))
        await asyncio.wait({self._opening}, timeout=wait)

    def status(self, words: str) -> None:
        self.loop.call_soon_threadsafe(self._queue.put_nowait, ("status", words))

    def sentence(self, text: str) -> None:
        self.loop.call_soon_threadsafe(self._queue.put_nowait, ("sentence", text))

    async def close(self) -> None:
        self.loop.call_soon_threadsafe(self._queue.put_nowait, None)  # after every report already scheduled
        await self._pump

    async def _deliver(self) -> None:
        while (item := await self._queue.get()) is not None:
            if self._opening is not None:
                await self._opening
            kind, text = item
            if kind == "status":
                if text == self._last_status:  # said already (the first word, then the engine's same stage)
                    continue
                self._last_status = text
            await self._show(kind, text)
        if self._opening is not None:
            await self._opening

    async def _show(self, kind: str, text: str) -> None:
        try:
            await (self.target.status(text) if kind == "status" else self.target.sentence(text))
        except Exception as exc:  # noqa: BLE001 - a surface that failed to show progress: the answer goes on
            log.warning("progress not shown (%s): %r", kind, exc)
