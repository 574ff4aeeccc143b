"""`navibot chat` prints a language model's answer sentence by verified sentence, then its sources."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.cli.terminal import chat
from bot.config.settings import Settings
from bot.wiring.runtime import build_bot
from tests.fakes.fake_gemini_stream import FakeStreamingGemini
from tests.fakes.fake_models import PARAGRAPH, FakeGemini


@pytest.fixture
def gemini() -> Iterator[FakeStreamingGemini]:
    server = FakeStreamingGemini()
    server.start()
    yield server
    server.stop()


class Screen(io.StringIO):
    """The terminal, remembering what was on it each time the bot flushed a sentence."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes: list[str] = []

    def flush(self) -> None:
        self.flushes.append(self.getvalue())


def test_chat_streams_the_verified_sentences_then_prints_the_sources(demo_store: Path, tmp_path: Path,
                                                                     gemini: FakeStreamingGemini) -> None:
    def two(body: dict[str, Any]) -> str:
        (a, x), (b, y) = [(i, t.strip().split(". ")[0].rstrip(".:")) for i, t in
                          PARAGRAPH.findall(FakeGemini.text_of(body)) if "&" not in t and "[" not in t][::-1][:2]
        return f"{x} [{a}]. {y} [{b}]. Call 1-900-555-0100 [nowhere::1.0]."
    gemini.stream_reply = two
    settings = Settings(_env_file=None, data_dir=tmp_path, llm="gemini",  # type: ignore[call-arg]
                        gemini_api_keys=[SecretStr("k")], gemini_base_urls=[gemini.url])
    bot = build_bot(settings, demo_store, tmp_path / "conversations.sqlite3")
    questions = iter(["Can college students get SNAP?"])

    def read(_: str) -> str:
        try:
            return next(questions)
        except StopIteration:
            raise EOFError from None
    screen = Screen()
    try:
        assert chat(bot, read, screen) == 0
    finally:
        bot.close()
    text = screen.getvalue()
    assert len(screen.flushes) >= 2 and screen.flushes[0].rstrip().endswith("[1].")  # the first, alone
    assert "bot> " in screen.flushes[0] and text.count("bot> ") == 1
    assert "Sources (2)" in text and "555-0100" not in text  # the third sentence cited a paragraph not retrieved
