"""Streamed answers through the real google-genai client (generate_content_stream) against a local fake Gemini:
each sentence reaches the navigator only after the rail passed it; the offline answer arrives whole."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bot.wiring.runtime import Core
from rag.answer.answerer import FallbackAnswerer
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import MoodBook
from rag.answer.rewrite import HeuristicRewriter
from rag.engine import Engine
from rag.providers.gemini import GeminiAnswerer, gemini_failover
from rag.providers.stream_prompts import STREAM_ANSWER_SYSTEM
from tests.fakes.fake_gemini_stream import FakeStreamingGemini
from tests.fakes.fake_models import PARAGRAPH, FakeGemini

QUESTION = "Can college students get SNAP?"
MOOD = MoodBook().resolve(None)
KEY = "test-key-do-not-log"


class Recorder:
    """What the navigator's surface was told, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def status(self, words: str) -> None:
        self.events.append(("status", words))

    def sentence(self, text: str) -> None:
        self.events.append(("sentence", text))

    @property
    def sentences(self) -> list[str]:
        return [text for kind, text in self.events if kind == "sentence"]


@pytest.fixture(scope="module")
def gemini() -> Iterator[FakeStreamingGemini]:
    server = FakeStreamingGemini()
    server.start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _fresh(gemini: FakeStreamingGemini) -> Iterator[None]:
    gemini.reset()
    yield
    assert gemini.refused == [], gemini.refused


def engine(core: Core, url: str) -> Engine:
    failover = gemini_failover([KEY], [url], 5.0)
    answerer = FallbackAnswerer(GeminiAnswerer(failover, "gemini-2.5-flash"), ExtractiveAnswerer(core.embedder))
    return Engine(core.retriever, HeuristicRewriter(), answerer, turn_deadline_seconds=12.0)


def first_sentences(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, first sentence without its full stop) of each paragraph the prompt shows, most relevant last."""
    found = []
    for sub_id, text in PARAGRAPH.findall(FakeGemini.text_of(body)):
        first = re.split(r"(?<=[.!?])\s+", text.strip())[0].rstrip(".!?:")
        if first and "&" not in first and "[" not in first:
            found.append((sub_id, first))
    return found[::-1]


def test_the_answer_streams_sentence_by_verified_sentence(demo: Core, gemini: FakeStreamingGemini) -> None:
    def two(body: dict[str, Any]) -> str:
        (a, first), (b, second) = first_sentences(body)[:2]
        return f"{first} [{a}]. {second} [{b}]."
    gemini.stream_reply = two
    progress = Recorder()
    outcome = engine(demo, gemini.url).answer(QUESTION, [], MOOD, progress=progress)
    assert outcome.kind == "answer"
    assert len(progress.sentences) == 2 and progress.sentences[0].endswith("[1]. ")
    assert "".join(progress.sentences).strip() == outcome.text  # the final message is what was streamed
    assert [c.number for c in outcome.citations] == [1, 2]
    kinds = [kind for kind, _ in progress.events]
    assert kinds == ["status", "status", "sentence", "sentence", "status"]
    assert progress.events[0] == ("status", "Searching the SNAP rules…")
    assert progress.events[-1] == ("status", "Checking the quotes…")
    call = next(c for c in gemini.calls if c.path.endswith(":streamGenerateContent"))
    assert FakeGemini.system_of(call.body) == STREAM_ANSWER_SYSTEM
    assert "responseSchema" not in call.body.get("generationConfig", {})


def test_a_second_sentence_citing_an_unretrieved_paragraph_ends_the_answer_before_it(
        demo: Core, gemini: FakeStreamingGemini) -> None:
    def bad_second(body: dict[str, Any]) -> str:
        (a, first), (_, second) = first_sentences(body)[:2]
        return f"{first} [{a}]. {second} [nowhere::9.9]. More text that is never shown [{a}]."
    gemini.stream_reply = bad_second
    progress = Recorder()
    outcome = engine(demo, gemini.url).answer(QUESTION, [], MOOD, progress=progress)
    assert outcome.kind == "answer" and len(progress.sentences) == 1
    assert outcome.text == progress.sentences[0].strip() and "never shown" not in outcome.text
    assert [c.number for c in outcome.citations] == [1]


def test_a_first_sentence_citing_an_unretrieved_paragraph_becomes_the_no_answer_with_nothing_shown(
        demo: Core, gemini: FakeStreamingGemini) -> None:
    def bad_first(body: dict[str, Any]) -> str:
        (a, first), (_, second) = first_sentences(body)[:2]
        return f"{second} [nowhere::9.9]. {first} [{a}]."
    gemini.stream_reply = bad_first
    progress = Recorder()
    outcome = engine(demo, gemini.url).answer(QUESTION, [], MOOD, progress=progress)
    assert outcome.kind == "no_answer" and progress.sentences == []
    assert outcome.text.startswith("I couldn't find this")


def test_a_stream_that_breaks_off_keeps_only_the_checked_sentences(demo: Core, gemini: FakeStreamingGemini) -> None:
    def long(body: dict[str, Any]) -> str:
        (a, first), (b, second) = first_sentences(body)[:2]
        return f"{first} [{a}]. {second} [{b}]. " + "And then a sentence that is cut off " * 5 + f"[{a}]."
    gemini.stream_reply = long
    gemini.break_after = 60  # tokens: past the first sentence, before the end of the third
    progress = Recorder()
    outcome = engine(demo, gemini.url).answer(QUESTION, [], MOOD, progress=progress)
    assert outcome.kind == "answer" and 1 <= len(progress.sentences) <= 2
    assert "cut off" not in outcome.text
    assert any(f.startswith("generate: the stream broke off") for f in outcome.fallbacks)


def test_an_unreachable_model_gives_the_offline_answer_whole(demo: Core, gemini: FakeStreamingGemini) -> None:
    gemini.status = 503
    progress = Recorder()
    outcome = engine(demo, gemini.url).answer(QUESTION, [], MOOD, progress=progress)
    assert outcome.kind == "answer" and progress.sentences == []  # the extractive answer is not streamed
    assert "The AI model is unavailable right now" in outcome.text
    assert [k for k, _ in progress.events] == ["status", "status", "status"]


def test_the_offline_answerer_reports_its_stages_and_answers_whole(demo: Core) -> None:
    progress = Recorder()
    plain = Engine(demo.retriever, HeuristicRewriter(), ExtractiveAnswerer(demo.embedder))
    outcome = plain.answer(QUESTION, [], MOOD, progress=progress)
    assert outcome.kind == "answer" and progress.sentences == []
    assert progress.events[0] == ("status", "Searching the SNAP rules…")
    assert outcome.text == plain.answer(QUESTION, [], MOOD).text  # the same answer as without progress


def test_a_failing_progress_report_does_not_stop_the_answer(demo: Core, gemini: FakeStreamingGemini) -> None:
    class Broken(Recorder):
        def sentence(self, text: str) -> None:
            raise ConnectionError("the surface went away")
    outcome = engine(demo, gemini.url).answer(QUESTION, [], MOOD, progress=Broken())
    assert outcome.kind == "answer" and outcome.citations


def test_an_endpoint_without_streaming_still_gets_the_model_to_write_the_answer_whole(demo: Core) -> None:
    plain = FakeGemini()  # generateContent only: streamGenerateContent is a 404 there, as behind some proxies
    plain.start()
    try:
        progress = Recorder()
        proxied = engine(demo, plain.url)
        outcome = proxied.answer(QUESTION, [], MOOD, progress=progress)
        assert outcome.kind == "answer" and progress.sentences == []
        assert "unavailable" not in outcome.text  # Gemini's answer, not the extractive fallback
        assert [c.path.rsplit(":", 1)[-1] for c in plain.calls] == ["streamGenerateContent", "generateContent"]
        again = proxied.answer(QUESTION, [], MOOD, progress=Recorder())  # not asked to stream again
        assert again.kind == "answer" and again.fallbacks == []
        assert [c.path.rsplit(":", 1)[-1] for c in plain.calls[2:]] == ["generateContent"]
    finally:
        plain.stop()


def test_the_turns_deadline_ends_a_slow_stream_at_its_last_verified_sentence(
        demo: Core, gemini: FakeStreamingGemini) -> None:
    def many(body: dict[str, Any]) -> str:
        (a, first), = first_sentences(body)[:1]
        return " ".join([f"{first} [{a}]."] * 40)
    gemini.stream_reply = many
    gemini.tokens_per_second = 40  # about 40 s of text: far over the turn's 2 s
    quick = engine(demo, gemini.url)
    quick.turn_deadline_seconds = 2.0
    started = time.monotonic()
    progress = Recorder()
    outcome = quick.answer(QUESTION, [], MOOD, progress=progress)
    assert time.monotonic() - started < 4.0
    assert outcome.kind == "answer" and outcome.text == "".join(progress.sentences).strip()
    assert any("the turn's time ran out" in f for f in outcome.fallbacks)
