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
        self._pump = loop.create_task(self._deliver())

    def status(self, words: str) -> None:
        self.loop.call_soon_threadsafe(self._queue.put_nowait, ("status", words))

    def sentence(self, text: str) -> None:
        self.loop.call_soon_threadsafe(self._queue.put_nowait, ("sentence", text))

    async def close(self) -> None:
        self._queue.put_nowait(None)
        await self._pump

    async def _deliver(self) -> None:
        while (item := await self._queue.get()) is not None:
            kind, text = item
            try:
                await (self.target.status(text) if kind == "status" else self.target.sentence(text))
            except Exception as exc:  # noqa: BLE001 - a surface that failed to show progress: the answer goes on
                log.warning("progress not shown (%s): %r", kind, exc)
