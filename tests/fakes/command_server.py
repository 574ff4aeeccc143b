"""Run a server command (`navibot serve`, `slack`, `teams`) end to end in this process, as a user would, and talk to
it from a background event loop; then stop it with SIGTERM, as `docker stop` does.

The command runs in the main thread (its signal handlers need it); the scenario runs on a BackgroundLoop once the
server's /healthz answers. SIGTERM is sent only once the server was seen listening: its handlers are in place from
before it starts (bot.server.app.run), and a SIGTERM to a process without them would end the test run itself.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Sequence

import aiohttp

from bot.cli.main import main
from tests.fakes.fake_slack import BackgroundLoop


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def wait_until_listening(url: str, timeout: float = 30.0) -> None:
    """Until GET /healthz answers (any status: an empty store is still a server)."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as session:
        while True:
            try:
                async with session.get(url + "/healthz") as response:
                    await response.read()
                    return
            except aiohttp.ClientConnectionError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"nothing listened at {url} within {timeout:g} s") from None
                await asyncio.sleep(0.05)


def while_serving[T](loop: BackgroundLoop, argv: Sequence[str], port: int,
                  scenario: Callable[[str], Awaitable[T]]) -> tuple[int, T]:
    """`main(argv)` (which must listen on 127.0.0.1:`port`) with `scenario(url)` run against it; returns the exit
    code and what the scenario returned. A scenario that fails still stops the server."""
    url = f"http://127.0.0.1:{port}"
    lock = threading.Lock()
    serving = [True]  # False once main() returned: its handlers are gone, and SIGTERM would end this process

    async def drive() -> T:
        listening = False
        try:
            await wait_until_listening(url)
            listening = True
            return await scenario(url)
        finally:
            with lock:
                if listening and serving[0]:
                    os.kill(os.getpid(), signal.SIGTERM)

    future = asyncio.run_coroutine_threadsafe(drive(), loop.loop)
    try:
        code = main(list(argv))
    finally:
        with lock:
            serving[0] = False
    if code != 0:  # it stopped by itself: the scenario did not run to the end
        future.cancel()
        return code, None  # type: ignore[return-value]
    return code, future.result(timeout=30)
