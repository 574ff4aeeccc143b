"""Markup from documents and from users is data in Teams: a crafted page's title, headings, paragraph and link, and
a crafted command argument, show as typed (RichTextBlock/TextRun: no Markdown, no HTML, no mention), nothing of
theirs becomes a link, and `Action.OpenUrl` only ever opens an http(s) URL. The help text shows `mood <name>`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.teams.cards import notice_card, web_link
from adapters.teams.messages import reply_activity
from bot.chat.chat_commands import HELP
from bot.config.settings import Settings
from bot.port import Reply, ReplyKind
from bot.wiring.runtime import Bot, build_bot, build_core
from tests.adapters.teams.test_teams import actions, card_texts, message, only_card, running
from tests.fakes.fake_connector import Call

TITLE = "[Reset your password](https://evil.example/reset) <at>Everyone</at> <b>SNAP</b>"
HEADING = "Student rules [click here](https://evil.example/h1) **now** <img src=x onerror=alert(1)>"
SUBHEADING = "Exemptions <at>General</at> [Reset password](https://evil.example/h2)"
PARAGRAPH = ("College students can get SNAP [Reset your password](https://evil.example/q) when they work 20 hours a "
             "week, <at>Everyone</at> <a href=\"https://evil.example/a\">official form</a> **urgent** _now_ "
             "![x](https://evil.example/i.png)")
EVIL_PAGE = f"""---
title: "{TITLE}"
url: javascript:alert(document.cookie)
---

# {HEADING}

## {SUBHEADING}

{PARAGRAPH}
"""


@pytest.fixture
def evil_bot(tmp_path: Path) -> Iterator[Bot]:
    """A knowledge base holding one crafted page (its link a javascript: URL)."""
    page = tmp_path / "kb" / "evil.md"
    page.parent.mkdir()
    page.write_text(EVIL_PAGE, encoding="utf-8")
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    core = build_core(settings, tmp_path / "knowledge.sqlite3")
    try:
        assert core.ingestor.ingest_paths([page.parent]).added == 1
    finally:
        core.close()
    built = build_bot(settings, tmp_path / "knowledge.sqlite3", tmp_path / "conversations.sqlite3")
    yield built
    built.close()


def elements(node: Any, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == kind:
            found.append(node)
        for value in node.values():
            found.extend(elements(value, kind))
    elif isinstance(node, list):
        for value in node:
            found.extend(elements(value, kind))
    return found


def assert_plain_text_only(card: dict[str, Any]) -> None:
    """No element of the card reads Markdown or HTML, no run is a link, every button opens http(s) at most."""
    assert not elements(card, "TextBlock"), "TextBlock text is Markdown: every line is a RichTextBlock"
    assert all("selectAction" not in run for run in elements(card, "TextRun"))
    for action in actions(card, "Action.OpenUrl"):
        assert action["url"].startswith(("https://", "http://")), action


def ask(bot: Bot, *texts: str) -> list[Call]:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            for n, text in enumerate(texts, start=1):
                await h.post(message(h.connector, text, activity_id=f"m{n}"))
                await h.connector.wait_messages(n)
            return h.connector.messages()

    return asyncio.run(scenario())


def test_a_crafted_document_shows_as_typed_and_links_nowhere(evil_bot: Bot) -> None:
    (reply,) = ask(evil_bot, "Can college students get SNAP?")
    assert "text" not in reply.body, "no message text: Teams would read it as Markdown"
    card = only_card(reply)
    assert_plain_text_only(card)
    texts = card_texts(card)
    assert f"[1] {TITLE}" in texts, "the title as typed"
    assert f"{HEADING} > {SUBHEADING}" in texts, "the heading path as typed"
    assert PARAGRAPH in texts, "the quote verbatim, brackets and tags included"
    assert "[Reset your password](https://evil.example/q)" in texts[0], "the answer quotes it as text, not a link"
    assert not actions(card, "Action.OpenUrl"), "a javascript: link gets no button"
    (entity,) = reply.body["entities"]
    (claim,) = entity["citation"]
    assert "url" not in claim["appearance"], "nor a link in the citation pop-up"


def test_a_crafted_command_argument_is_echoed_as_text(evil_bot: Bot) -> None:
    replies = ask(evil_bot, "mood [Reset](https://evil.example/reset)", "mood <b>bold</b><img/src=x>")
    for reply, argument in zip(replies, ["[Reset](https://evil.example/reset)", "<b>bold</b><img/src=x>"],
                               strict=True):
        assert "text" not in reply.body
        card = only_card(reply)
        assert_plain_text_only(card)
        assert f"I don't know the mood '{argument}'." in card_texts(card)
        assert not actions(card, "Action.OpenUrl")


def test_help_shows_mood_name_literally() -> None:
    card = only_card_of(reply_activity(Reply(ReplyKind.COMMAND, HELP)))
    assert_plain_text_only(card)
    lines = card_texts(card)
    assert lines == HELP.replace("`", "").split("\n"), "every line as written, one per block"
    runs = elements(card, "TextRun")
    assert {"type": "TextRun", "text": "mood <name>", "fontType": "Monospace"} in runs
    assert "&lt;" not in json.dumps(card) and "&gt;" not in json.dumps(card)


def test_model_bold_stays_bold_but_links_and_html_in_an_answer_stay_text() -> None:
    text = "**Yes**, students can [apply here](https://evil.example) <at>Everyone</at> [1]."
    card = only_card_of(reply_activity(Reply(ReplyKind.NO_ANSWER, text, [], mood="concise", answer_id="a1")))
    assert_plain_text_only(card)
    answer = card["body"][0]
    assert answer["id"] == "answer" and answer["inlines"][0] == {"type": "TextRun", "text": "Yes", "weight": "Bolder"}
    assert card_texts(answer) == ["Yes, students can [apply here](https://evil.example) <at>Everyone</at> [1]."]


def test_error_and_notice_cards_are_plain_text_too() -> None:
    card = notice_card("Sorry <at>Everyone</at>, see [this](https://evil.example)", attention=True)
    assert_plain_text_only(card)
    assert card_texts(card) == ["Sorry <at>Everyone</at>, see [this](https://evil.example)"]


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,<b>x</b>",
                                 "file:///etc/passwd", "//evil.example/x", "/relative", "https:///no-host",
                                 "https://evil.example/a b", "https://evil.example/\nx", "vbscript:x", "", None,
                                 "https://" + "a" * 3000 + ".example",
                                 "https://benefits.gov/\u202egpj.exe",  # a right-to-left override disguises it
                                 "https://benefits.gov/\u200bx"])
def test_only_http_links_get_a_button(url: str | None) -> None:
    assert web_link(url) is None


@pytest.mark.parametrize("url", ["https://www.ecfr.gov/current/title-7/part-273#:~:text=student",
                                 "http://localhost:8000/page", "HTTPS://Example.org/"])
def test_http_links_are_kept_as_they_are(url: str) -> None:
    assert web_link(url) == url


def only_card_of(activity: Any) -> dict[str, Any]:
    body = activity.model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert "text" not in body
    (attachment,) = body["attachments"]
    content: dict[str, Any] = attachment["content"]
    return content
