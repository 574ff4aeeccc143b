"""The message activities that carry the bot's replies in Teams, kept within Teams' limits.

Teams refuses a message over its size limit (413 `MessageSizeTooBig`), counted on the activity JSON the connector
receives; 28 KB is the limit this bot keeps to (the Teams documentation has said 28 KB, later 40 KB in UTF-16 and
100 KB: the smallest is kept). An answer's card fits the budget whatever the number and length of its quotes: the
quotes share what the answer leaves, a long one is cut with "…" (the "Open source" button takes the reader to the
rest), and when even that does not fit the quotes are left out (titles and links only), then the links too (a
list of the sources). The citation entities are at most 10 (citations.py). If Teams still refuses a message (413
or 400), `reply_variants` gives the smaller ones to send instead: never silence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, Attachment, Entity

from adapters.teams.cards import (
    MIN_SHARE,
    answer_card,
    attachment,
    json_size,
    notice_card,
    quote_share,
    sources_card,
)
from adapters.teams.citation_entities import ai_entity
from bot.port import Citation, Reply, ReplyKind

MAX_ACTIVITY_BYTES = 28_000  # the whole activity as the connector receives it (JSON, UTF-8 bytes)
# What the SDK adds when it sends a reply (conversation, from, recipient, serviceUrl, channelId, replyToId, locale):
# Teams ids are long, so the card is fitted to what is left after a generous allowance for them.
ADDRESSING_RESERVE = 1_500
QUOTES_KEPT = 3  # with many citations, room is kept for this many quotes (of MIN_SHARE) before more links
CARD_BUDGET = MAX_ACTIVITY_BYTES - ADDRESSING_RESERVE
SUMMARY_CHARS = 120


@dataclass(frozen=True, slots=True)
class AnswerParts:
    """What an answer message shows; from a fresh Reply or, after a feedback click, from the stored answer."""

    text: str
    citations: list[Citation] = field(default_factory=list)
    answer_id: str | None = None
    mood: str | None = None
    understood_as: str | None = None
    feedback: bool | None = None  # the rating just given, shown under the buttons
    labelled: bool = True  # an answer: the AI label and citation entities (a no-answer is sent without them)


def activity_size(activity: Activity) -> int:
    """Bytes of the activity as the connector client posts it (`model_dump(by_alias, exclude_unset)`, then
    aiohttp's json.dumps, non-ASCII as \\u escapes: never fewer bytes than UTF-8)."""
    return json_size(activity.model_dump(by_alias=True, exclude_unset=True, mode="json"))


def summary(text: str) -> str:
    """What notifications show for a card message."""
    first = text.strip().split("\n", 1)[0]
    return first if len(first) <= SUMMARY_CHARS else first[:SUMMARY_CHARS - 1] + "…"


def attachment_fields(card: dict[str, Any]) -> dict[str, Any]:
    fields = attachment(card)
    return {"content_type": fields["contentType"], "content": fields["content"]}


def card_message(card: dict[str, Any], text: str, entities: list[Entity] | None = None) -> Activity:
    """A card as a message, with the summary notifications show (the text itself is on the card only: a message's
    own text would be read as Teams markdown)."""
    activity = Activity(type=ActivityTypes.message, attachments=[Attachment(**attachment_fields(card))],
                        summary=summary(text))
    if entities is not None:
        activity.entities = entities
    return activity


def _entities(parts: AnswerParts, citations: bool) -> list[Entity] | None:
    if not parts.labelled:
        return None
    # Teams ties each citation entity to its `[n]` in the text; a cited paragraph the text never marks (the citation
    # rail keeps those, numbered last) stays in the card's quotes only.
    marked = [c for c in parts.citations if f"[{c.number}]" in parts.text] if citations else []
    return [ai_entity(marked)]


def _with_card(parts: AnswerParts, citations: bool, rooms: list[int | None] | None) -> Activity:
    card = answer_card(parts.text, parts.citations, parts.answer_id, parts.mood, parts.understood_as, parts.feedback,
                       quote_rooms=rooms)
    return card_message(card, parts.text, _entities(parts, citations))


def _fits(activity: Activity) -> bool:
    return activity_size(activity) <= CARD_BUDGET


def answer_message(parts: AnswerParts, citations: bool = True, quotes: bool = True) -> Activity:
    """The answer card as a message of at most CARD_BUDGET bytes; with `citations` (and `parts.labelled`) the
    citation entities, without `quotes` titles and links only.

    Whole quotes if they fit; else as many citations as fit get a container with title and link (the rest are
    listed by title), and the quotes share the room left, the first ones first; if not even the list fits, the
    compact message."""
    if quotes:
        full = _with_card(parts, citations, None)
        if _fits(full):
            return full
    count = len(parts.citations)
    if not _fits(_with_card(parts, citations, [])):
        return compact_message(parts, citations)
    # The most citations that can have a container of their own (title, heading, link) while leaving room for the
    # first few quotes; the others are listed by title.
    keep = min(count, QUOTES_KEPT) * MIN_SHARE if quotes else 0
    low, high = 0, count
    while low < high:
        middle = (low + high + 1) // 2
        if activity_size(_with_card(parts, citations, [0] * middle)) <= CARD_BUDGET - keep:
            low = middle
        else:
            high = middle - 1
    links = _with_card(parts, citations, [0] * low)
    room = CARD_BUDGET - activity_size(links)
    shown = parts.citations[:low]
    while quotes and shown and room > 0:
        # A cut quote adds a line ("the rest is at the source"): measure, and shrink the room by the excess.
        fitted = _with_card(parts, citations, list(quote_share(shown, room)))
        excess = activity_size(fitted) - CARD_BUDGET
        if excess <= 0:
            return fitted
        room -= excess + 100
    return links


def compact_message(parts: AnswerParts, citations: bool = True) -> Activity:
    """The last resort: the answer and a plain list of its sources (no quotes, no buttons to them), as many as fit."""
    entities = _entities(parts, citations)
    shown = len(parts.citations)
    text = parts.text
    while True:
        card = sources_card(text, parts.citations[:shown], len(parts.citations), parts.answer_id, parts.mood,
                            parts.feedback)
        activity = card_message(card, parts.text, entities)
        excess = activity_size(activity) - CARD_BUDGET
        if excess <= 0:
            return activity
        if shown > 0:
            shown -= 1
        elif entities and any(getattr(e, "citation", None) for e in entities):
            entities = [ai_entity([])]
        else:  # an answer longer than any Teams message: its start
            text = text[: max(0, len(text) - excess - 100)].rstrip() + "…"


def answer_variants(parts: AnswerParts) -> list[Activity]:
    """The answer message and, in order, the smaller ones to send if Teams refuses it: the same card without
    citation entities (a preview feature on card messages, which some clients refuse), then titles and links
    instead of quotes, then the answer and a list of its sources. Each is smaller than the one before."""
    first = answer_message(parts)
    variants = [first]
    if first.entities and any(getattr(e, "citation", None) for e in first.entities):
        variants.append(first.model_copy(update={"entities": [ai_entity([])]}))
    for candidate in (answer_message(parts, citations=False, quotes=False), compact_message(parts, citations=False)):
        if activity_size(candidate) < activity_size(variants[-1]):
            variants.append(candidate)
    return variants


def notice_message(text: str, attention: bool = False) -> Activity:
    """Command replies, errors, apologies: a card whose lines show as written (no markdown, no HTML, no links)."""
    return card_message(notice_card(text, attention=attention), text)


def reply_parts(reply: Reply, asked: str | None = None) -> AnswerParts:
    understood = reply.standalone_question
    if not understood or asked is None or understood.strip() == asked.strip():
        understood = None
    return AnswerParts(reply.text, list(reply.citations), reply.answer_id, reply.mood, understood,
                       labelled=reply.kind is ReplyKind.ANSWER)


def reply_variants(reply: Reply, asked: str | None = None) -> list[Activity]:
    """The message that carries a Reply (first) and the smaller ones to try if Teams refuses it."""
    if reply.kind in (ReplyKind.ANSWER, ReplyKind.NO_ANSWER):
        return answer_variants(reply_parts(reply, asked))
    return [notice_message(reply.text, attention=reply.kind is ReplyKind.ERROR)]


def reply_activity(reply: Reply, asked: str | None = None) -> Activity:
    """The message that carries a Reply: an answer card (with the AI label and citation entities) or a notice."""
    return reply_variants(reply, asked)[0]

