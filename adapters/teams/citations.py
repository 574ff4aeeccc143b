"""The Teams "AI generated" label and citation entities of an answer.

Teams reads one root message entity (`https://schema.org/Message`): `additionalType: ["AIGeneratedContent"]`
shows the AI label, and each `citation` claim whose `position` matches an `[n]` marker in the message shows a
pop-up with the source's title, link and abstract. Limits from the Teams documentation ("Enhance AI-generated
bot messages"): at most 20 citations (more is a 400 from Teams), a name of at most 80 characters and an abstract
of at most 160. Citations on messages that carry an Adaptive Card are in public developer preview: where a client
does not show them, the card's own "Show quotes" still does.
"""

from __future__ import annotations

import re

from microsoft_agents.activity.entity.ai_entity import (
    AIEntity,
    ClientCitation,
    ClientCitationAppearance,
)

from rag.citations import Citation

MAX_CITATIONS = 20
MAX_NAME_CHARS = 80
MAX_ABSTRACT_CHARS = 160


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis (never mid-word when avoidable)."""
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def ai_entity(citations: list[Citation]) -> AIEntity:
    """The one root message entity: the AI label and, for an answer, its citations (numbered as in the text)."""
    claims = [ClientCitation(position=c.number, appearance=ClientCitationAppearance(
        name=shorten(c.title or c.doc_id, MAX_NAME_CHARS), abstract=shorten(c.quote, MAX_ABSTRACT_CHARS),
        url=c.url or None)) for c in citations[:MAX_CITATIONS]]
    # Fields are passed explicitly: the connector serialises only fields that were set.
    return AIEntity(type="https://schema.org/Message",
                    additional_type=["AIGeneratedContent"], citation=claims or None)
