"""Teams message limits: every answer activity stays under 28 KB (the JSON the connector receives) however many and
however long its quotes, carries at most 10 citation entities (each root entity with `"@id": ""`), and a message
Teams refuses as too big (413 MessageSizeTooBig) or malformed (400) is followed by a smaller one, never silence."""

from __future__ import annotations

import asyncio
import json
from itertools import pairwise
from typing import Any

import pytest
from aiohttp import web

from adapters.teams.citation_entities import MAX_ABSTRACT_CHARS, MAX_CITATIONS, MAX_NAME_CHARS
from adapters.teams.messages import (
    CARD_BUDGET,
    MAX_ACTIVITY_BYTES,
    activity_size,
    reply_activity,
    reply_variants,
)
from bot.port import Reply, ReplyKind
from bot.wiring.runtime import Bot
from rag.cite.rail import Citation
from rag.engine import Outcome
from tests.adapters.teams.test_teams import STUDENTS, actions, card_texts, message, only_card, running
from tests.fakes.fake_connector import Call, FakeConnector

# A regulation's paragraphs: long, with section signs, dashes and quotation marks (each \u-escaped in the JSON: six
# bytes where UTF-8 takes two or three), and deep links with text fragments, as 7 CFR 273 has them.
SENTENCE = ("§ 273.5(b)(11)—A student who is enrolled at least half time in an institution of higher education is "
            "eligible only if the student meets one of the “exemptions” listed in this paragraph; ")


def regulation(count: int, length: int = 3200) -> list[Citation]:
    return [Citation(
        number=n, doc_id=f"7-cfr-273-{n}", chunk_id=f"c{n}", sub_id=f"s{n}",
        title=f"7 CFR Part 273—Certification of Eligible Households, § 273.{n} (paragraph {n}) " + "é" * 5,
        heading_path=["PART 273—CERTIFICATION OF ELIGIBLE HOUSEHOLDS", "Subpart B—Application Processing",
                      f"§ 273.{n} Students—eligibility of students enrolled in higher education"],
        url=f"https://www.ecfr.gov/current/title-7/subtitle-B/chapter-II/subchapter-C/part-273/section-273.{n}"
            "#:~:text=A%20student%20who%20is%20enrolled%20at%20least%20half%20time",
        page=None, quote=((SENTENCE * (length // len(SENTENCE) + 1))[:length] + f" (paragraph {n})"))
        for n in range(1, count + 1)]


def answer(citations: list[Citation]) -> Reply:
    text = "Students enrolled half time or more need an exemption " + " ".join(f"[{c.number}]" for c in citations)
    return Reply(ReplyKind.ANSWER, text + ".", citations, mood="concise", answer_id="a-limits")


def wire(activity: Any) -> dict[str, Any]:
    return activity.model_dump(by_alias=True, exclude_unset=True, mode="json")


def quote_containers(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in card["body"] if e.get("type") == "Container" and e.get("id", "").startswith("quote-")
            and e["id"] != "quote-more"]


# --- rendering ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [1, 5, 12, 20, 25, 60])
def test_every_variant_of_an_answer_fits_whatever_the_number_of_long_quotes(count: int) -> None:
    cited = regulation(count)
    variants = reply_variants(answer(cited), asked=STUDENTS)
    sizes = [activity_size(v) for v in variants]
    assert len(sizes) >= 3 and sizes[0] <= CARD_BUDGET, "smaller messages to fall back on"
    assert all(smaller < bigger for bigger, smaller in pairwise(sizes)), sizes
    first = wire(variants[0])
    (entity,) = first["entities"]
    assert entity["@id"] == "" and entity["@type"] == "Message" and entity["@context"] == "https://schema.org"
    claims = entity["citation"]
    assert [c["position"] for c in claims] == list(range(1, min(count, MAX_CITATIONS) + 1))
    for claim in claims:
        assert len(claim["appearance"]["name"]) <= MAX_NAME_CHARS
        assert len(claim["appearance"]["abstract"]) <= MAX_ABSTRACT_CHARS
        assert claim["appearance"]["url"].startswith("https://")
    # No citation is dropped: each has its container (title, heading, link), or is listed by title.
    card = first["attachments"][0]["content"]
    texts = card_texts(card)
    for citation in cited:
        assert any(t.startswith(f"[{citation.number}] 7 CFR Part 273") for t in texts), citation.number
    toggle = actions(card, "Action.ToggleVisibility")[0]
    assert toggle["title"] == f"Show quotes ({count})"
    assert set(toggle["targetElements"]) == {e["id"] for e in card["body"] if e.get("type") == "Container"}


def test_twenty_regulation_paragraphs_keep_quotes_cut_with_an_ellipsis_and_a_link() -> None:
    cited = regulation(20)
    full_size = sum(len(c.quote) for c in cited)
    activity = reply_activity(answer(cited))
    assert full_size > MAX_ACTIVITY_BYTES, "the quotes alone are too big for one Teams message"
    assert activity_size(activity) <= CARD_BUDGET
    containers = quote_containers(wire(activity)["attachments"][0]["content"])
    quoted = [c for c in containers if any(i.get("id") == f"{c['id']}-text" for i in c["items"])]
    assert quoted, "the first quotes are still shown"
    for container in quoted:
        lines = card_texts(next(i for i in container["items"] if i.get("id") == f"{container['id']}-text"))
        assert lines[-2].endswith("…") and lines[-1] == "The rest is at the source."
        assert next(a["url"] for a in actions(container, "Action.OpenUrl")).startswith("https://www.ecfr.gov/")
    # Every citation keeps its link, quoted or not; a note says why some quotes are missing.
    assert all(actions(c, "Action.OpenUrl") for c in containers)
    assert any("Teams limits the size of a message" in t for t in card_texts(wire(activity)["attachments"]))


def test_a_short_answer_is_sent_whole() -> None:
    cited = regulation(3, length=600)
    activity = wire(reply_activity(answer(cited)))
    for container in quote_containers(activity["attachments"][0]["content"]):
        quote = next(i for i in container["items"] if i.get("id") == f"{container['id']}-text")
        number = int(container["id"].split("-")[1])
        assert "\n".join(card_texts(quote)) == cited[number - 1].quote, "verbatim, not cut"


def test_the_smallest_variant_lists_sources_without_quotes_or_entities() -> None:
    variants = reply_variants(answer(regulation(25)))
    last = wire(variants[-1])
    assert [e.get("citation") for e in last["entities"]] == [None], "the AI label stays, citations go"
    assert not any(t.startswith("§") for t in card_texts(last["attachments"])), "no quote text"


# --- sending: a refused message is followed by a smaller one ---------------------------------------------------------

class RefusingConnector(FakeConnector):
    """A Bot Connector that refuses messages with an attachment as Teams does: with `statuses` in order (e.g. 413
    MessageSizeTooBig), and any body over `max_bytes`; records what it refused."""

    def __init__(self, statuses: list[int] | None = None, max_bytes: int | None = None) -> None:
        super().__init__()
        self.statuses = list(statuses or [])
        self.max_bytes = max_bytes
        self.refused: list[tuple[int, int]] = []  # (status, body bytes)
        self.accepted_bytes: list[int] = []

    async def _post(self, request: web.Request) -> web.Response:
        raw = await request.read()
        body = json.loads(raw)
        if body.get("attachments"):
            status = self.statuses.pop(0) if self.statuses else None
            if status is None and self.max_bytes is not None and len(raw) > self.max_bytes:
                status = 413
            if status is not None:
                self.refused.append((status, len(raw)))
                code = "MessageSizeTooBig" if status == 413 else "BadArgument"
                return web.json_response({"error": {"code": code, "message": "Message size too big"}}, status=status)
            self.accepted_bytes.append(len(raw))
        return await super()._post(request)


def _ask(bot: Bot, connector: RefusingConnector, reply: Reply,
         monkeypatch: pytest.MonkeyPatch) -> tuple[list[Call], RefusingConnector]:
    def answered(*_args: Any, **_kwargs: Any) -> Outcome:  # the engine's answer: the handler saves it as usual
        return Outcome("answer", reply.text, STUDENTS, list(reply.citations), answer=reply.text)

    monkeypatch.setattr(bot.engine, "answer", answered)

    async def scenario() -> list[Call]:
        async with running(bot, connector=connector) as h:
            await h.post(message(h.connector, STUDENTS))
            return await h.connector.wait_messages(1)

    return asyncio.run(scenario()), connector


def test_a_413_is_answered_by_a_smaller_message(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    (posted,), connector = _ask(bot, RefusingConnector(statuses=[413]), answer(regulation(20)), monkeypatch)
    ((status, refused_bytes),) = connector.refused
    assert status == 413 and connector.accepted_bytes[0] < refused_bytes
    assert refused_bytes <= MAX_ACTIVITY_BYTES, "the first message was already within the limit"
    assert [e.get("citation") for e in posted.body["entities"]] == [None], "sent again without citation entities"
    assert card_texts(only_card(posted))[0].startswith("Students enrolled half time")


def test_a_connector_with_a_smaller_limit_gets_the_message_that_fits(bot: Bot,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (posted,), connector = _ask(bot, RefusingConnector(max_bytes=12_000), answer(regulation(20)), monkeypatch)
    assert [status for status, _ in connector.refused] == [413] * len(connector.refused) and connector.refused
    assert connector.accepted_bytes[0] <= 12_000
    texts = card_texts(only_card(posted))
    assert all(any(t.startswith(f"[{n}] ") for t in texts) for n in range(1, 21)), "every source still named"


def test_when_every_message_is_refused_the_user_gets_an_apology(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    reply = answer(regulation(20))
    count = len(reply_variants(reply, asked=STUDENTS))
    (apology,), connector = _ask(bot, RefusingConnector(statuses=([413, 400] * count)[:count]), reply, monkeypatch)
    assert len(connector.refused) == count >= 3, "each smaller message was tried once"
    assert "Sorry, something went wrong" in card_texts(apology.cards())[0]


def test_the_real_send_path_posts_at_most_28_kb(bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    (posted,), connector = _ask(bot, RefusingConnector(), answer(regulation(30)), monkeypatch)
    assert not connector.refused and connector.accepted_bytes[0] <= MAX_ACTIVITY_BYTES
    assert len(posted.body["entities"][0]["citation"]) == MAX_CITATIONS

