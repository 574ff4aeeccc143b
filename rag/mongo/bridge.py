"""One event loop in a background thread, so synchronous code on any thread can run async pymongo calls.

The store protocols (rag/search/store.py, bot/conversations/store.py) are synchronous and called from the adapters'
worker threads, while the MongoDB code uses pymongo's native async client. An AsyncMongoClient belongs to the loop it
was first used on, so every coroutine of a store runs on the one loop its bridge owns: callers block on
`run()` (any number of threads at once; the loop interleaves their requests over the client's pool).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from pymongo.errors import NetworkTimeout

T = TypeVar("T")


class BridgeTimeout(NetworkTimeout):
    """No answer within the bridge's own limit (a safety net above pymongo's timeoutMS); a network failure."""


class AsyncBridge:
    def __init__(self, name: str = "navibot-mongo") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._thread.start()
        self._closed = False
        self._lock = threading.Lock()  # no call is submitted once close() has begun

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the bridge's loop and wait for its result (or its exception) in the calling thread."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("AsyncBridge.run called from its own loop: await the coroutine instead")
        with self._lock:
            if self._closed:
                coro.close()
                raise RuntimeError("the MongoDB connection is closed")
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError as exc:
            future.cancel()
            raise BridgeTimeout(f"no answer from MongoDB within {timeout:g} s") from exc
        except concurrent.futures.CancelledError as exc:
            raise RuntimeError("the MongoDB connection was closed before MongoDB answered") from exc

    def close(self) -> None:
        """Cancel the calls still running (their callers get an error at once, rather than after their whole
        timeout), then stop the loop and its thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        with contextlib.suppress(concurrent.futures.TimeoutError):  # a call that ignores cancellation: stop anyway
            asyncio.run_coroutine_threadsafe(_cancel_pending(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()


async def _cancel_pending() -> None:
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
