"""`navibot serve` freezes what start-up built before it listens: a full garbage collection during a burst of
requests then walks only what the burst allocated, not the model's vocabulary and the glossary (~30 ms with every
thread stopped, the acks included, when they are walked)."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator

import pytest

import bot.server.app as server_app
from tests.bot.server.test_event_loop import serve_without_listening


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_serve_freezes_the_start_up_objects_before_it_listens(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen_when_listening: list[int] = []
    serve_without_listening(monkeypatch, lambda: frozen_when_listening.append(gc.get_freeze_count()))
    assert frozen_when_listening and frozen_when_listening[0] > 10_000


def test_a_full_collection_skips_frozen_objects() -> None:
    kept = [{"word": str(i), "vector": [i, i + 1]} for i in range(200_000)]  # like a model's vocabulary
    walked = collection_seconds()
    assert server_app.freeze_startup_objects() >= len(kept)
    assert len(gc.get_objects()) < len(kept)  # the collector no longer sees them
    assert collection_seconds() < walked / 2


def collection_seconds() -> float:
    """The fastest of three full collections: a busy machine only ever makes one slower."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - started)
    return min(times)
