"""The Teams "AI generated" label and citation entities of an answer.

Teams reads one root message entity (`https://schema.org/Message`, with `"@type": "Message"`, `"@context"` and
`"@id": ""` as the protocol's AIEntity type has them): `additionalType: ["AIGeneratedContent"]` shows the AI label,
and each `citation` claim whose `position` matches an `[n]` marker in the message shows a pop-up with the source's
title, link and abstract. Limits: at most 10 citations (more is refused: the Agents Playground validates
`citation` with `.max(10)`), a name of at most 80 characters and an abstract of at most 160 (Teams documentation,
"Enhance AI-generated bot messages"). Citations on messages that carry an Adaptive Card are in public developer
preview: where a client does not show them, the card's own "Show quotes" still does.
"""

from __future__ import annotations

import re

from microsoft_agents.activity.entity.ai_entity import (
    AIEntity,
    ClientCitation,
    ClientCitationAppearance,
)

from adapters.teams.cards import web_link
from bot.port import Citation

MAX_CITATIONS = 10
MAX_NAME_CHARS = 80
MAX_ABSTRACT_CHARS = 160


class MessageEntity(AIEntity):
    """The SDK's AIEntity with the `"@id": ""` the protocol type carries (the SDK's own class has no such field;
    fields named `at_*` are written as `@*` by its serializer, always, as `@type` and `@context` are)."""

    at_id: str = ""


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis (never mid-word when avoidable)."""
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def _appearance(citation: Citation) -> ClientCitationAppearance:
    name = shorten(citation.title or citation.doc_id, MAX_NAME_CHARS)
    abstract = shorten(citation.quote, MAX_ABSTRACT_CHARS)
    if link := web_link(citation.url):
        return ClientCitationAppearance(name=name, abstract=abstract, url=link)
    return ClientCitationAppearance(name=name, abstract=abstract)  # only set fields are sent: no `"url": null`


def ai_entity(citations: list[Citation]) -> MessageEntity:
    """The one root message entity: the AI label and, for an answer, its first MAX_CITATIONS citations (numbered
    as in the text; the card quotes them all). A link that is not http(s) is left out of the pop-up."""
    claims = [ClientCitation(position=c.number, appearance=_appearance(c)) for c in citations[:MAX_CITATIONS]]
    # Fields are passed explicitly: the connector serialises only fields that were set (and an update, a PUT, keeps
    # the ones set to None: `"citation": null` would not be an optional list any more).
    if claims:
        return MessageEntity(type="https://schema.org/Message", additional_type=["AIGeneratedContent"],
                             citation=claims)
    return MessageEntity(type="https://schema.org/Message", additional_type=["AIGeneratedContent"])
