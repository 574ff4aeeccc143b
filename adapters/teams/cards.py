"""Adaptive Cards (schema 1.5, what Teams renders) for the bot's replies.

An answer card: the concise answer with its [n] markers; a "Show quotes" button that toggles hidden containers on
the client (one per citation: number and title, heading path, the verbatim quote, an "Open source" link), so the
navigator sees the short answer first and checks the source in one click without a round trip; and feedback
buttons. Feedback buttons are `Action.Execute` (Universal Actions: Teams sends an `adaptiveCard/action` invoke and
shows the card the bot returns) with an `Action.Submit` fallback for clients without Universal Actions (a message
activity whose `value` carries the same data; the bot then updates the card in place).
"""

from __future__ import annotations

from typing import Any

from rag.citations import Citation

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_VERSION = "1.5"
VERB_HELPFUL = "feedback.helpful"
VERB_NOT_HELPFUL = "feedback.not_helpful"
FEEDBACK_VERBS = {VERB_HELPFUL: True, VERB_NOT_HELPFUL: False}


def _card(body: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "version": CARD_VERSION, "msteams": {"width": "Full"}, "body": body}


def _text(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def _lines(text: str, **style: Any) -> list[dict[str, Any]]:
    """One TextBlock per line: Teams' card markdown may join single line breaks, so lines are kept apart here."""
    return [_text(line, **style) for line in text.split("\n") if line.strip()]


def quote_id(number: int) -> str:
    return f"quote-{number}"


def _quote_container(citation: Citation) -> dict[str, Any]:
    items: list[dict[str, Any]] = [_text(f"[{citation.number}] {citation.title}", weight="Bolder")]
    where = " > ".join(citation.heading_path)
    if citation.page:
        where = f"{where} (page {citation.page})" if where else f"page {citation.page}"
    if where:
        items.append(_text(where, isSubtle=True, size="Small", spacing="None"))
    # The paragraph exactly as stored (its lines joined by newlines give the stored text back): the navigator
    # reads the source's own words, not a paraphrase.
    items.append({"type": "Container", "id": f"{quote_id(citation.number)}-text", "items": _lines(citation.quote)})
    if citation.url:
        items.append({"type": "ActionSet", "actions": [
            {"type": "Action.OpenUrl", "title": "Open source", "url": citation.url}]})
    return {"type": "Container", "id": quote_id(citation.number), "isVisible": False, "separator": True,
            "style": "emphasis", "items": items}


def _feedback_action(verb: str, title: str, answer_id: str, mood: str | None) -> dict[str, Any]:
    data = {"answer_id": answer_id, "mood": mood or ""}
    return {"type": "Action.Execute", "title": title, "verb": verb, "data": data,
            # Clients without Universal Actions post a message whose value is this data (with the verb in it).
            "fallback": {"type": "Action.Submit", "title": title, "data": {"verb": verb, **data}}}


def _feedback_set(answer_id: str, mood: str | None) -> dict[str, Any]:
    return {"type": "ActionSet", "id": "feedback", "actions": [
        _feedback_action(VERB_HELPFUL, "👍 Helpful", answer_id, mood),
        _feedback_action(VERB_NOT_HELPFUL, "👎 Not helpful", answer_id, mood)]}


def answer_card(text: str, citations: list[Citation], answer_id: str | None, mood: str | None,
                understood_as: str | None = None, feedback: bool | None = None) -> dict[str, Any]:
    """The reply card of an answer (or a no-answer, which has no citations). `feedback` is the rating just given,
    shown under the buttons after a click; the buttons stay so the rating can be changed or given by others."""
    first, _, rest = text.strip().partition("\n")
    body: list[dict[str, Any]] = [_text(first, id="answer"), *_lines(rest, isSubtle=True)]
    if understood_as:
        body.append(_text(f"Understood as: {understood_as}", isSubtle=True, size="Small"))
    if citations:
        body.append({"type": "ActionSet", "actions": [{
            "type": "Action.ToggleVisibility", "title": f"Show quotes ({len(citations)})",
            "targetElements": [quote_id(c.number) for c in citations]}]})
        body.extend(_quote_container(c) for c in citations)
    footer = "AI-generated: check the quotes before you rely on it."
    if mood:
        footer += f" Mood: {mood}."
    if citations:
        body.append(_text(footer, isSubtle=True, size="Small", separator=True))
    if answer_id:
        body.append(_feedback_set(answer_id, mood))
        if feedback is not None:
            choice = "helpful" if feedback else "not helpful"
            body.append(_text(f"Thanks, feedback saved: {choice}.", id="feedback-status", color="Good",
                              size="Small"))
    return _card(body)


def notice_card(text: str, attention: bool = False) -> dict[str, Any]:
    """A plain card for errors and apologies (red text when `attention`)."""
    return _card(_lines(text, **({"color": "Attention"} if attention else {})))


def attachment(card: dict[str, Any]) -> dict[str, Any]:
    return {"contentType": CARD_CONTENT_TYPE, "content": card}
