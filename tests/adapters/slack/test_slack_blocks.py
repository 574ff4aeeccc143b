"""Block Kit rendering and Slack text handling, without Slack: limits, trimming, escaping, the modal."""

from __future__ import annotations

import json
from typing import Any

import pytest
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from adapters.slack.app import question_text, render
from adapters.slack.blocks import (
    MAX_BLOCKS,
    MIN_QUOTE,
    QUOTE_LIMIT,
    SECTION_LIMIT,
    TEXT_BUDGET,
    AnswerView,
    answer_message,
    escape,
    feedback_confirmation,
    plain_message,
    reason_modal,
    split_text,
    text_length,
)
from bot.chat.chat_commands import HELP
from bot.port import Reply, ReplyKind
from rag.cite.rail import Citation
from tests.fakes.fake_slack import BLOCKS_TEXT_LIMIT, blocks_text_length


def citation(n: int, quote: str = "Students who work 20 hours a week can get SNAP.", url: str | None = None,
             path: list[str] | None = None) -> Citation:
    return Citation(number=n, doc_id=f"kb/doc{n}", chunk_id=f"kb/doc{n}::0", sub_id=f"kb/doc{n}::0.0",
                    title=f"Document {n}", heading_path=path or ["Eligibility", "Students"],
                    url=url if url is not None else f"https://benefits.example.gov/doc{n}#:~:text=Students",
                    page=None, quote=quote)


def view(citations: list[Citation], text: str = "Yes, if they work 20 hours a week [1].") -> AnswerView:
    return AnswerView("a1", text, "concise", citations, "can students get SNAP?", "can students get SNAP?")


def valid(blocks: list[dict[str, Any]]) -> None:
    """slack_sdk's own models check field limits (button text, values, section text, element counts)."""
    assert len(blocks) <= MAX_BLOCKS
    for raw in blocks:
        parsed = Block.parse(raw)
        assert parsed is not None, raw["type"]
        parsed.validate_json()
        if raw["type"] == "section":
            assert len(raw["text"]["text"]) <= SECTION_LIMIT


def test_escape_only_slack_control_characters() -> None:
    assert escape("SNAP & WIC <under 5> *bold*") == "SNAP &amp; WIC &lt;under 5&gt; *bold*"
    message = answer_message(view([citation(1)], text="Income <= 130% & **assets** below $2,750 [1]."))
    assert message.blocks[0]["text"]["text"] == "Income &lt;= 130% &amp; *assets* below $2,750 [1]."


def test_the_collapsed_and_expanded_answer_are_valid_block_kit() -> None:
    cited = [citation(1), citation(2, url="")]  # a local document has no link
    collapsed = answer_message(view(cited))
    expanded = answer_message(view(cited), expanded=True)
    valid(collapsed.blocks)
    valid(expanded.blocks)
    quotes = [b for b in expanded.blocks if b["type"] == "rich_text"]
    assert [q["elements"][1]["elements"][0]["text"] for q in quotes] == [c.quote for c in cited]
    header = quotes[0]["elements"][0]["elements"]
    assert header[1] == {"type": "link", "url": cited[0].url, "text": "Document 1", "style": {"bold": True}}
    assert header[2]["text"] == "\nEligibility › Students"
    assert quotes[1]["elements"][0]["elements"][1]["type"] == "text", "no link without a URL"
    assert "Sources: [1] Document 1; [2] Document 2" in expanded.text


def test_a_long_quote_is_trimmed_with_an_ellipsis_and_a_link_to_the_rest() -> None:
    long_quote = "A household may deduct shelter costs above half its income. " * 80
    expanded = answer_message(view([citation(1, quote=long_quote)]), expanded=True)
    valid(expanded.blocks)
    [quote] = [b for b in expanded.blocks if b["type"] == "rich_text"]
    text, _, link = quote["elements"][1]["elements"]
    assert text["text"].endswith("…") and len(text["text"]) <= QUOTE_LIMIT
    assert long_quote.startswith(text["text"][:-1])
    assert link["type"] == "link" and link["url"] == "https://benefits.example.gov/doc1#:~:text=Students"


def test_citations_beyond_the_block_budget_are_listed_as_links_never_dropped() -> None:
    cited = [citation(n) for n in range(1, 61)]
    expanded = answer_message(view(cited), expanded=True)
    valid(expanded.blocks)
    assert len(expanded.blocks) == MAX_BLOCKS
    quotes = [b for b in expanded.blocks if b["type"] == "rich_text"]
    more = [b for b in expanded.blocks if b["type"] == "section" and b["text"]["text"].startswith("+")]
    assert len(more) == 1
    listed = more[0]["text"]["text"]
    assert listed.startswith(f"+{60 - len(quotes)} more sources: ")
    assert "<https://benefits.example.gov/doc60#:~:text=Students|[60] Document 60>" in listed
    # Still holds when the links are too long for one section: the rest is counted, not silently lost.
    cited = [citation(n, url=f"https://benefits.example.gov/{'x' * 900}/{n}") for n in range(1, 61)]
    expanded = answer_message(view(cited), expanded=True)
    valid(expanded.blocks)
    text = expanded.blocks[-3]["text"]["text"]
    assert "more not listed here" in text and len(text) <= SECTION_LIMIT


def test_many_long_quotes_share_slacks_total_text_limit_and_the_rest_are_listed() -> None:
    cited = [citation(n, quote=f"({n}) " + "Students who work 20 hours a week can get SNAP. " * 40)
             for n in range(1, 31)]
    expanded = answer_message(view(cited), expanded=True)
    valid(expanded.blocks)
    assert text_length(expanded.blocks) <= TEXT_BUDGET and blocks_text_length(expanded.blocks) <= BLOCKS_TEXT_LIMIT
    quotes = [b for b in expanded.blocks if b["type"] == "rich_text"]
    assert len(quotes) >= 5
    for block, source in zip(quotes, cited, strict=False):
        text, _, link = block["elements"][1]["elements"]
        assert text["text"].endswith("…") and source.quote.startswith(text["text"][:-1])
        assert len(text["text"]) >= MIN_QUOTE and link["url"] == source.url
    [more] = [b for b in expanded.blocks if b["type"] == "section" and b["text"]["text"].startswith("+")]
    assert more["text"]["text"].startswith(f"+{30 - len(quotes)} more sources: <{cited[len(quotes)].url}|")


def test_a_long_answer_is_split_into_sections_within_the_limit() -> None:
    paragraph = ("SNAP counts gross and net income. " * 40).strip()
    text = "\n\n".join([paragraph] * 5)
    message = answer_message(view([citation(1)], text=text))
    valid(message.blocks)
    sections = [b for b in message.blocks if b["type"] == "section"]
    assert len(sections) >= 2
    assert " ".join(s["text"]["text"] for s in sections).split() == text.split()
    assert split_text("word " * 2000, 100)[0] == ("word " * 20).strip()


def test_the_context_line_shows_how_a_follow_up_was_understood() -> None:
    follow = AnswerView("a1", "Yes [1].", "kids", [citation(1), citation(2)], "what about part-time?",
                        "Can part-time college students get SNAP?")
    context = answer_message(follow).blocks[1]["elements"][0]["text"]
    assert context == "mood: kids · 2 sources · understood as: _Can part-time college students get SNAP?_"


def test_plain_replies_have_no_buttons_and_commands_render_as_text() -> None:
    help_message = render(Reply(ReplyKind.COMMAND, HELP), "help")
    assert [b["type"] for b in help_message.blocks] == ["section"]
    assert "`reset`" in help_message.blocks[0]["text"]["text"]
    no_answer = render(Reply(ReplyKind.NO_ANSWER, "I could not find that.", answer_id="x"), "q")
    assert [b["type"] for b in no_answer.blocks] == ["section"]
    valid(plain_message("x" * 10_000).blocks)


def test_feedback_confirmation_and_reason_modal() -> None:
    assert [b["type"] for b in feedback_confirmation(True, "a1").blocks] == ["section"]
    thumbs_down = feedback_confirmation(False, "a1")
    valid(thumbs_down.blocks)
    assert thumbs_down.blocks[1]["elements"][0]["value"] == "a1"
    modal = reason_modal(json.dumps({"answer_id": "a1"}), 2000)
    View(**modal).validate_json()


@pytest.mark.parametrize(("raw", "expected"), [
    ("<@U0NAVIBOT> can students get SNAP?", "can students get SNAP?"),
    ("<@U0NAVIBOT>", ""),
    ("hey <@U0NAVIBOT|navibot>, does <@U0ALICE> qualify?", "hey does @U0ALICE qualify?"),
    ("<@U0NAVIBOT>: reset", "reset"),
    ("<@U0NAVIBOT>, mood kids", "mood kids"),
    ("first line <@U0NAVIBOT>\nsecond line", "first line\nsecond line"),
    ("see <https://www.fns.usda.gov/snap|the SNAP page> and <https://x.gov/a>", "see the SNAP page and https://x.gov/a"),
    ("in <#C123|benefits>: income &lt; 130% &amp; assets &gt; 0", "in #benefits: income < 130% & assets > 0"),
    ("<!here> mood   kids", "@here mood kids"),
])
def test_question_text_reads_slack_markup_as_words(raw: str, expected: str) -> None:
    assert question_text(raw, "U0NAVIBOT") == expected
