"""`navibot serve` runs on uvloop's event loop where uvloop is installed, and on asyncio's own where it is not
(Windows): the sockets of a burst of Slack requests cost the server's one event-loop thread less."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import Any

import pytest
import uvloop

import bot.server.app as server_app
from bot.cli.main import main


def serve_without_listening(monkeypatch: pytest.MonkeyPatch, look: Callable[[], None]) -> None:
    """Runs `navibot serve` (Teams in local anonymous mode) up to the moment it would listen, where `look` is called
    on the server's event loop instead of serving."""

    async def instead_of_serving(*_: Any, **__: Any) -> None:
        look()

    monkeypatch.setattr(server_app, "run", instead_of_serving)
    for name in [n for n in os.environ if n.startswith(("SLACK_", "NAVIBOT_TEAMS_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NAVIBOT_TEAMS_ALLOW_ANONYMOUS", "true")
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "text")
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == 0


def serve_on_which_loop(monkeypatch: pytest.MonkeyPatch) -> list[type]:
    seen: list[type] = []
    serve_without_listening(monkeypatch, lambda: seen.append(type(asyncio.get_running_loop())))
    return seen


def test_serve_runs_on_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    assert serve_on_which_loop(monkeypatch) == [uvloop.Loop]


def test_without_uvloop_serve_runs_on_asyncio_s_own_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError, as on Windows
    assert server_app.event_loop_factory() is None
    [loop] = serve_on_which_loop(monkeypatch)
    assert loop is not uvloop.Loop and loop.__module__.startswith("asyncio.")
