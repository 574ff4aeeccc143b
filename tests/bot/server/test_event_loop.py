"""`navibot serve` runs on uvloop's event loop where uvloop is installed, and on asyncio's own where it is not
(Windows): the sockets of a burst of Slack requests cost the server's one event-loop thread less."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest
import uvloop

import bot.server.app as server_app
from bot.cli.main import main


def serve_on_which_loop(monkeypatch: pytest.MonkeyPatch) -> list[type]:
    """Runs `navibot serve` (Teams in local anonymous mode) with the server's life replaced by a look at its loop."""
    seen: list[type] = []

    async def look(*_: Any, **__: Any) -> None:
        seen.append(type(asyncio.get_running_loop()))

    monkeypatch.setattr(server_app, "run", look)
    for name in [n for n in os.environ if n.startswith(("SLACK_", "NAVIBOT_TEAMS_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NAVIBOT_TEAMS_ALLOW_ANONYMOUS", "true")
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "text")
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == 0
    return seen


def test_serve_runs_on_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    assert serve_on_which_loop(monkeypatch) == [uvloop.Loop]


def test_without_uvloop_serve_runs_on_asyncio_s_own_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError, as on Windows
    assert server_app.event_loop_factory() is None
    [loop] = serve_on_which_loop(monkeypatch)
    assert loop is not uvloop.Loop and loop.__module__.startswith("asyncio.")
