"""What the turn handler tells its observers: one event per turn with a trace id, kind, timings and error kind;
feedback; a broken observer never breaks a turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.chat.handler import TurnHandler
from bot.conversations.sqlite import SQLiteConversationStore
from bot.observability.observers import Observers, TurnEvent, current_trace
from bot.port import ReplyKind, Turn
from bot.wiring.runtime import Core, build_engine
from rag.answer.moods import MoodBook


class Recorder:
    def __init__(self) -> None:
        self.turns: list[TurnEvent] = []
        self.feedbacks: list[tuple[str, bool]] = []
        self.errors: list[tuple[str, str]] = []
        self.trace_during: list[str | None] = []

    def turn(self, event: TurnEvent) -> None:
        self.turns.append(event)

    def feedback(self, platform: str, helpful: bool) -> None:
        self.feedbacks.append((platform, helpful))

    def error(self, kind: str, platform: str) -> None:
        self.errors.append((kind, platform))


class Broken:
    def turn(self, event: TurnEvent) -> None:
        raise RuntimeError("watcher on fire")

    def feedback(self, platform: str, helpful: bool) -> None:
        raise RuntimeError("watcher on fire")

    def error(self, kind: str, platform: str) -> None:
        raise RuntimeError("watcher on fire")


@pytest.fixture
def setup(demo: Core, tmp_path: Path) -> Iterator[tuple[TurnHandler, Recorder, SQLiteConversationStore]]:
    store = SQLiteConversationStore(tmp_path / "c.sqlite3")
    recorder = Recorder()
    handler = TurnHandler(build_engine(demo), store, MoodBook(), observers=Observers([Broken(), recorder]))
    yield handler, recorder, store
    store.close()


def turn(text: str, event_id: str | None = None) -> Turn:
    return Turn("slack", "W1", "C1", "T1", "U1", text, event_id)


def test_each_turn_is_reported_once_with_its_trace_id_and_timings(setup) -> None:  # type: ignore[no-untyped-def]
    handler, recorder, _ = setup
    answer = handler.handle(turn("Can college students get SNAP?", "E1"))
    handler.handle(turn("Can college students get SNAP?", "E1"))  # redelivery
    handler.handle(turn("help"))
    handler.handle(turn("x" * 5000))
    kinds = [e.kind for e in recorder.turns]
    assert kinds == ["answer", "duplicate", "command", "error"]
    first = recorder.turns[0]
    assert first.trace_id == answer.trace_id and len(first.trace_id) == 12
    assert first.answer_id == answer.answer_id and first.citations == len(answer.citations) > 0
    assert {"rewrite", "retrieve", "generate", "total"} <= first.timings_ms.keys()
    assert first.is_question and not recorder.turns[1].is_question and not recorder.turns[2].is_question
    assert recorder.turns[3].error == "too_long" and not recorder.turns[3].is_question
    assert len({e.trace_id for e in recorder.turns}) == 4
    assert current_trace.get() is None  # reset after the turn


def test_a_store_failure_is_an_error_of_kind_store(setup) -> None:  # type: ignore[no-untyped-def]
    handler, recorder, store = setup
    store.close()
    reply = handler.handle(turn("Can college students get SNAP?"))
    assert reply.kind is ReplyKind.ERROR and reply.trace_id and reply.trace_id in reply.text
    assert reply.text.startswith("Sorry, my conversation store is not responding")  # the navigator knows why
    assert recorder.turns[-1].error == "store" and recorder.turns[-1].is_question


def test_feedback_is_reported(setup) -> None:  # type: ignore[no-untyped-def]
    handler, recorder, _ = setup
    answer = handler.handle(turn("Can college students get SNAP?"))
    assert answer.answer_id
    handler.record_feedback(answer.answer_id, "U1", False, "too long")
    assert recorder.feedbacks == [("slack", False)]
