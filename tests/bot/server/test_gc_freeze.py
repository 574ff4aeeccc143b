"""`navibot serve` freezes what start-up built before it listens: a full garbage collection during a burst of
requests then walks only what the burst allocated, not the model's vocabulary and the glossary (~30 ms with every
thread stopped, the acks included, when they are walked)."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest

import bot.server.app as server_app
from bot.cli.main import main


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_serve_freezes_the_start_up_objects_before_it_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen_when_listening: list[int] = []

    async def listen(*_: Any, **__: Any) -> None:
        frozen_when_listening.append(gc.get_freeze_count())

    monkeypatch.setattr(server_app, "run", listen)
    for name in [n for n in os.environ if n.startswith(("SLACK_", "NAVIBOT_TEAMS_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NAVIBOT_TEAMS_ALLOW_ANONYMOUS", "true")
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "text")
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == 0
    assert frozen_when_listening and frozen_when_listening[0] > 10_000


def test_a_full_collection_skips_frozen_objects() -> None:
    kept = [{"word": str(i), "vector": [i, i + 1]} for i in range(200_000)]  # like a model's vocabulary
    started = time.perf_counter()
    gc.collect()
    walked = time.perf_counter() - started
    assert server_app.freeze_startup_objects() >= len(kept)
    started = time.perf_counter()
    gc.collect()
    assert time.perf_counter() - started < walked / 2
