"""A burst of connections while the event loop is busy waits in the kernel's accept queue, not in SYN retries:
with aiohttp's default backlog (128) the connections past it were dropped and their clients tried again after 1 s
(the one-second Slack acks seen with 200 questions at once)."""

from __future__ import annotations

import asyncio
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.slack.settings import SlackSettings
from adapters.teams.settings import TeamsSettings
from bot.config.settings import Settings
from bot.server.app import Server, build_server_app
from bot.wiring.runtime import Bot, build_bot

CONNECTIONS = 300  # more than aiohttp's default backlog of 128, as 200 questions at once are


@pytest.fixture
def bot(demo_store: Path, tmp_path: Path) -> Iterator[Bot]:
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    built = build_bot(settings, demo_store, tmp_path / "conversations.sqlite3")
    yield built
    built.close()


def test_connections_made_while_the_loop_is_busy_all_complete_at_once(bot: Bot) -> None:
    async def scenario() -> int:
        app = build_server_app(bot, bot.core.settings, SlackSettings(_env_file=None),  # type: ignore[call-arg]
                               TeamsSettings(_env_file=None, allow_anonymous=True))  # type: ignore[call-arg]
        server = Server(app)
        port = await server.start("127.0.0.1", 0)
        clients = [socket.socket() for _ in range(CONNECTIONS)]
        try:
            for client in clients:
                client.setblocking(False)
                client.connect_ex(("127.0.0.1", port))
            time.sleep(0.3)  # noqa: ASYNC251 - the loop busy, as with a burst being acknowledged: nothing accepted
            _, writable, _ = select.select([], clients, [], 0)  # connected: the kernel finished the handshake
            return sum(1 for c in writable if c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0)
        finally:
            for client in clients:
                client.close()
            await server.stop()

    assert asyncio.run(scenario()) == CONNECTIONS
