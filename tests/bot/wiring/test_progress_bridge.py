"""Progress reported from the turn's worker thread reaches the adapter in order, and a failing surface does not
stop the reports after it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from bot.chat.starters import starter_questions, topic_questions
from bot.config.settings import Settings
from bot.wiring.progress_bridge import ThreadedProgress
from rag.search.store import StoredDocument


class Surface:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def status(self, words: str) -> None:
        await asyncio.sleep(0.01)  # a slow Web API call: the reports behind it wait their turn
        if words == "boom":
            raise ConnectionError("gone")
        self.seen.append(("status", words))

    async def sentence(self, text: str) -> None:
        self.seen.append(("sentence", text))


def test_reports_from_a_worker_thread_arrive_in_order() -> None:
    async def main() -> list[tuple[str, str]]:
        surface = Surface()
        bridge = ThreadedProgress(asyncio.get_running_loop(), surface)

        def worker() -> None:
            bridge.status("Searching…")
            bridge.status("boom")
            for n in range(5):
                bridge.sentence(f"s{n} ")

        thread = threading.Thread(target=worker)
        thread.start()
        await asyncio.to_thread(thread.join)
        await bridge.close()
        return surface.seen

    seen = asyncio.run(main())
    assert seen == [("status", "Searching…"), *[("sentence", f"s{n} ") for n in range(5)]]


def doc(title: str, groups: tuple[str, ...] = ("all",)) -> StoredDocument:
    return StoredDocument(title.lower(), title, "h", None, 1, groups)


def test_starters_are_the_admins_list_or_the_public_topics() -> None:
    documents = [doc("WIC basics"), doc("SNAP for students"), doc("Secret staff memo", ("supervisors",)),
                 doc("SNAP for students")]
    assert topic_questions(documents) == ["What should I know about SNAP for students?",
                                          "What should I know about WIC basics?"]
    assert starter_questions(["Who can get WIC?", " "], documents) == ["Who can get WIC?"]
    assert all("Secret" not in q for q in starter_questions([], documents))


def test_the_admins_questions_come_from_one_setting_separated_by_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_SUGGESTED_QUESTIONS", " Can students get SNAP? | | Who can get WIC, and how?")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.suggested_questions == ["Can students get SNAP?", "Who can get WIC, and how?"]


def test_the_same_status_twice_in_a_row_is_shown_once() -> None:
    async def main() -> list[tuple[str, str]]:
        surface = Surface()
        bridge = ThreadedProgress(asyncio.get_running_loop(), surface)
        for words in ("Searching…", "Searching…", "Checking…"):
            bridge.status(words)
        await bridge.close()
        return surface.seen

    assert asyncio.run(main()) == [("status", "Searching…"), ("status", "Checking…")]


def test_the_first_word_goes_out_before_the_turn_and_before_later_reports() -> None:
    async def main() -> list[tuple[str, str]]:
        surface = Surface()
        bridge = ThreadedProgress(asyncio.get_running_loop(), surface)
        await bridge.first("Searching the SNAP rules…", wait=1.0)
        shown_before_the_turn = list(surface.seen)
        bridge.status("Searching the SNAP rules…")  # the engine says the same stage: not repeated
        bridge.sentence("One [1]. ")
        await bridge.close()
        assert shown_before_the_turn == [("status", "Searching the SNAP rules…")]
        return surface.seen

    assert asyncio.run(main()) == [("status", "Searching the SNAP rules…"), ("sentence", "One [1]. ")]
