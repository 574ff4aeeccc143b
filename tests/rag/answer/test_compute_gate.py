"""The compute gate: at most K turns inside the engine's CPU stages at once, while their model waits overlap.

A CPU-bound retriever (the demo store's search plus a busy loop) counts the turns inside it at once; the answerer
waits on a "model" through the real `Failover` (the path every hosted call takes), counting the overlapping waits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bot.wiring.runtime import Core
from rag.answer.answerer import AnswerRequest, DraftStream
from rag.answer.compute_gate import ComputeGate, waiting_on_model
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import MoodBook
from rag.answer.rewrite import HeuristicRewriter
from rag.cite.rail import Draft
from rag.documents import SearchHit
from rag.engine import Engine
from rag.providers.failover import Endpoint, Failover, not_an_http_error

CPU_SECONDS = 0.06  # each turn's busy loop inside retrieval
MODEL_SECONDS = 0.4  # each turn's wait on the model
TURNS = 6


class Peak:
    """How many threads are inside a section at once, at most."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def __enter__(self) -> None:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *_: object) -> None:
        with self.lock:
            self.now -= 1


class BusyRetriever:
    """The demo retriever, then `CPU_SECONDS` of pure-Python work (holding the GIL as a real search does)."""

    def __init__(self, inner: Any, peak: Peak) -> None:
        self.inner = inner
        self.glossary = inner.glossary
        self.peak = peak

    def search(self, query: str, k: int = 5, tags: list[str] | None = None,
               groups: list[str] | None = None, follow_up: str = "") -> list[SearchHit]:
        with self.peak:
            hits: list[SearchHit] = self.inner.search(query, k=k, tags=tags, groups=groups)
            end = time.perf_counter() + CPU_SECONDS
            while time.perf_counter() < end:
                sum(range(200))
        return hits


class ModelAnswerer:
    """Waits `MODEL_SECONDS` on a hosted "model" through `Failover`, then answers extractively."""

    def __init__(self, core: Core, waits: Peak) -> None:
        self.extractive = ExtractiveAnswerer(core.embedder)
        self.waits = waits
        self.failover: Failover[str] = Failover("fake", [Endpoint("fake#1", "client")], 5.0, not_an_http_error)

    def _call(self, client: str, timeout: float) -> None:
        with self.waits:
            time.sleep(MODEL_SECONDS)

    def answer(self, request: AnswerRequest) -> Draft:
        self.failover.call("generate", self._call)
        return self.extractive.answer(request)


def run_turns(engine: Engine, turns: int = TURNS) -> float:
    mood = MoodBook().resolve(None)
    start = threading.Barrier(turns)
    errors: list[BaseException] = []

    def one(i: int) -> None:
        start.wait()
        try:
            engine.answer(["Can college students get SNAP?", "Who can get WIC?"][i % 2], [], mood)
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(turns)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []
    return time.perf_counter() - began


def gated_engine(demo: Core, slots: int | None) -> tuple[Engine, Peak, Peak]:
    cpu, waits = Peak(), Peak()
    retriever: Any = BusyRetriever(demo.retriever, cpu)  # duck-typed as a Retriever
    engine = Engine(retriever, HeuristicRewriter(), ModelAnswerer(demo, waits), compute_slots=slots)
    return engine, cpu, waits


@pytest.mark.parametrize("slots", [1, 2])
def test_at_most_k_turns_do_cpu_work_at_once_while_model_waits_overlap(demo: Core, slots: int) -> None:
    engine, cpu, waits = gated_engine(demo, slots)
    took = run_turns(engine)
    assert cpu.peak <= slots
    assert waits.peak >= TURNS - 2  # the model waits are not held up by the gate
    assert took < TURNS * MODEL_SECONDS  # nothing close to one turn after the other


def test_without_the_gate_turns_crowd_the_cpu_stages(demo: Core) -> None:
    """The contrast that shows the fake retriever can measure the gate: unlimited, more than 2 turns get in."""
    engine, cpu, waits = gated_engine(demo, 0)
    run_turns(engine)
    assert cpu.peak > 2
    assert waits.peak >= TURNS - 2


def test_a_streamed_answer_gives_the_slot_up_between_pieces() -> None:
    """Engine._streamed reads each piece inside `waiting_on_model`: while one turn waits on its stream, another
    turn gets the only slot."""
    gate = ComputeGate(1)
    other_got_in = threading.Event()

    def other() -> None:
        with gate.held():
            other_got_in.set()

    with gate.held():
        helper = threading.Thread(target=other)
        helper.start()
        assert not other_got_in.wait(0.1)  # the slot is taken
        with waiting_on_model():
            assert other_got_in.wait(5)  # given up for the wait
            helper.join(5)
    assert not helper.is_alive()


def test_nested_holds_and_waits_take_and_give_one_slot() -> None:
    """A model call inside a fallback inside a model call gives the slot up once; a nested hold takes none (a
    BoundedSemaphore would raise on a second release, and a second acquire of the only slot would hang)."""
    gate = ComputeGate(1)
    done: list[str] = []
    run: Callable[[], None] = lambda: done.append("ok")  # noqa: E731
    with gate.held():
        with gate.held():
            run()
        with waiting_on_model(), waiting_on_model():
            run()
        run()
    with gate.held():  # the slot came back
        run()
    assert done == ["ok"] * 4
    with waiting_on_model():  # outside a turn: nothing to give up
        run()


class StreamingModel:
    """Streams its answer piece by piece; while each piece is being "written", checks whether another turn could
    take the engine's only compute slot."""

    def __init__(self, engine_gate: Callable[[], ComputeGate]) -> None:
        self.gate = engine_gate
        self.slot_free_while_writing: list[bool] = []

    def answer(self, request: AnswerRequest) -> Draft:
        raise AssertionError("the streamed path is expected")

    def stream(self, request: AnswerRequest) -> DraftStream:
        def pieces() -> Iterator[str]:
            for piece in ["Most students ", "need an exemption ", "[1]."]:
                semaphore = self.gate()._semaphore
                assert semaphore is not None
                free = semaphore.acquire(blocking=False)
                if free:
                    semaphore.release()
                self.slot_free_while_writing.append(free)
                yield piece
        return DraftStream(pieces=pieces())


class Shown:
    def status(self, words: str) -> None:
        pass

    def sentence(self, text: str) -> None:
        pass


def test_a_turn_reading_its_streamed_answer_leaves_the_slot_to_others(demo: Core) -> None:
    model = StreamingModel(lambda: engine.gate)
    engine = Engine(demo.retriever, HeuristicRewriter(), model, compute_slots=1)
    engine.answer("Can college students get SNAP?", [], MoodBook().resolve(None), progress=Shown())
    assert model.slot_free_while_writing == [True, True, True]
