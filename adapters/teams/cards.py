"""Adaptive Cards (schema 1.5, what Teams renders) for the bot's replies.

An answer card: the concise answer with its [n] markers; a "Show quotes" button that toggles hidden containers on
the client (one per citation: number and title, heading path, the verbatim quote, an "Open source" link), so the
navigator sees the short answer first and checks the source in one click without a round trip; and feedback
buttons. Feedback buttons are `Action.Execute` (Universal Actions: Teams sends an `adaptiveCard/action` invoke and
shows the card the bot returns) with an `Action.Submit` fallback for clients without Universal Actions (a message
activity whose `value` carries the same data; the bot then updates the card in place).

Text from documents (titles, heading paths, quotes), from users (echoed command arguments, the rewritten question)
and from the model is data, never markup: it goes into `RichTextBlock`/`TextRun` elements, which the schema renders
as plain text (no Markdown, no HTML; the reference renderer sets `innerText`), so `[Reset](https://evil)`, `<at>`,
`**` or `<b>` show as typed. Only the bot's own formatting survives: `**bold**` in an answer and `` `code` `` in
command replies become TextRun styles. `Action.OpenUrl` is only ever given an http(s) URL.
"""

from __future__ import annotations

import json
import re
from typing import Any

from adapters.web_links import web_url
from bot.port import Citation

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_VERSION = "1.5"
VERB_HELPFUL = "feedback.helpful"
VERB_NOT_HELPFUL = "feedback.not_helpful"
FEEDBACK_VERBS = {VERB_HELPFUL: True, VERB_NOT_HELPFUL: False}

TITLE_CHARS = 300  # a document title on the card (the citation pop-up has its own, shorter limit)
WHERE_CHARS = 500  # a heading path
QUOTE_CHARS = 3000  # one quote, however much room the message has
URL_CHARS = 2000  # a longer link is not given a button (the title is still shown)
MIN_QUOTE_CHARS = 200  # a quote cut shorter than this says too little: the citation is shown as a link only
MIN_SHARE = 1200  # the least room (bytes) a quote gets when many share a full message: the first ones are shown
MORE_ID = "quote-more"
_STYLED = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*|`([^`\n]+)`")


def web_link(url: str | None) -> str | None:
    """`url` if a button may open it (adapters/web_links.py: absolute http(s), no whitespace, control or invisible
    characters), else None."""
    return web_url(url, URL_CHARS)


def trim(text: str, limit: int) -> str:
    """At most `limit` characters, cut with "…"."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _card(body: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "AdaptiveCard", "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
            "version": CARD_VERSION, "msteams": {"width": "Full"}, "body": body}


def _run(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextRun", "text": text, **style}


def plain(text: str, runs: list[dict[str, Any]] | None = None, **block: Any) -> dict[str, Any]:
    """A line shown exactly as written: a RichTextBlock of TextRuns (`runs`, or one run of `text`). `block` holds
    the block's own properties (id, separator, spacing); run styles are passed in the runs."""
    return {"type": "RichTextBlock", "inlines": runs if runs is not None else [_run(text)], **block}


def styled_runs(line: str, **style: Any) -> list[dict[str, Any]]:
    """The bot's own light formatting as TextRun styles: `**bold**` (as language models write it) and `` `code` ``
    (the commands in help texts). Everything else, brackets and angle brackets included, is literal text."""
    runs: list[dict[str, Any]] = []
    last = 0
    for match in _STYLED.finditer(line):
        if match.start() > last:
            runs.append(_run(line[last:match.start()], **style))
        if match.group(1) is not None:
            runs.append(_run(match.group(1), **{**style, "weight": "Bolder"}))
        else:
            runs.append(_run(match.group(2), **{**style, "fontType": "Monospace"}))
        last = match.end()
    if last < len(line) or not runs:
        runs.append(_run(line[last:], **style))
    return runs


def _lines(text: str, styled: bool = False, **style: Any) -> list[dict[str, Any]]:
    """One block per line: Teams may join single line breaks, so lines are kept apart here."""
    return [plain(line, styled_runs(line, **style) if styled else [_run(line, **style)])
            for line in text.split("\n") if line.strip()]


def quote_id(number: int) -> str:
    return f"quote-{number}"


def json_size(value: Any) -> int:
    """Bytes of `value` as the connector client sends it (json.dumps, non-ASCII as \\u escapes)."""
    return len(json.dumps(value, separators=(", ", ": ")).encode())


def _where(citation: Citation) -> str:
    where = " > ".join(citation.heading_path)
    if citation.page:
        where = f"{where} (page {citation.page})" if where else f"page {citation.page}"
    return trim(where, WHERE_CHARS)


def _cut_quote(quote: str, room: int) -> str:
    """The quote's first characters whose JSON fits `room` bytes, cut at a line or word end, with "…"."""
    if json_size(quote) <= room:
        return quote
    low, high = 0, min(len(quote), room)
    while low < high:  # the longest prefix that fits (JSON escapes make bytes and characters differ)
        middle = (low + high + 1) // 2
        if json_size(quote[:middle] + "…") <= room:
            low = middle
        else:
            high = middle - 1
    cut = quote[:low]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > low * 3 // 4:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _quote_container(citation: Citation, room: int | None) -> dict[str, Any]:
    """One citation's hidden container: number and title, heading path, quote, "Open source" button. `room`: bytes
    the quote's text may take (None: up to QUOTE_CHARS; too little for MIN_QUOTE_CHARS: no quote, title and link)."""
    title = trim(citation.title or citation.doc_id, TITLE_CHARS)
    items: list[dict[str, Any]] = [plain("", [_run(f"[{citation.number}] {title}", weight="Bolder")])]
    if where := _where(citation):
        items.append(plain(where, [_run(where, isSubtle=True, size="Small")], spacing="None"))
    link = web_link(citation.url)
    quote = trim(citation.quote, QUOTE_CHARS)
    if room is not None:
        quote = _cut_quote(quote, room) if room >= json_size(quote[:MIN_QUOTE_CHARS]) else ""
    if quote:
        # The paragraph exactly as stored (its lines joined by newlines give the stored text back), or its start
        # when the message has no room for all of it: the navigator reads the source's own words.
        lines = _lines(quote)
        if quote != citation.quote:
            rest = "The rest is at the source." if link else f"The rest is in {title}."
            lines.append(plain(rest, [_run(rest, isSubtle=True, italic=True, size="Small")]))
        items.append({"type": "Container", "id": f"{quote_id(citation.number)}-text", "items": lines})
    if link:
        items.append({"type": "ActionSet", "actions": [
            {"type": "Action.OpenUrl", "title": "Open source", "url": link}]})
    return {"type": "Container", "id": quote_id(citation.number), "isVisible": False, "separator": True,
            "style": "emphasis", "items": items}


def _more_sources(listed: list[Citation], quotes_left_out: bool) -> dict[str, Any]:
    """The hidden container after the quotes: why some are not shown, and the citations that did not get a
    container of their own, as a plain list."""
    items: list[dict[str, Any]] = []
    if quotes_left_out:
        note = "Some quotes are not shown: Teams limits the size of a message. Open the sources to read them."
        items.append(plain(note, [_run(note, isSubtle=True, italic=True, size="Small")]))
    if listed:
        head = f"{len(listed)} more source{'s' if len(listed) != 1 else ''}:"
        items.append(plain(head, [_run(head, weight="Bolder", size="Small")]))
        items.extend(plain("", [_run(f"[{c.number}] {trim(c.title or c.doc_id, TITLE_CHARS)}", size="Small")],
                           spacing="None") for c in listed)
    return {"type": "Container", "id": MORE_ID, "isVisible": False, "separator": True, "items": items}


def quote_share(citations: list[Citation], room: int) -> list[int]:
    """How `room` bytes of quote text are shared: in order, each quote gets its fair share of what is left (what a
    short quote leaves goes to the next ones), but at least MIN_SHARE while there is room: with many long quotes,
    the first ones are shown and the last ones are links."""
    shares: list[int] = []
    for i, citation in enumerate(citations):
        fair = max(room // (len(citations) - i), min(MIN_SHARE, room))
        share = min(json_size(trim(citation.quote, QUOTE_CHARS)), fair)
        shares.append(share)
        room -= share
    return shares


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
                understood_as: str | None = None, feedback: bool | None = None,
                quote_rooms: list[int | None] | None = None) -> dict[str, Any]:
    """The reply card of an answer (or a no-answer, which has no citations). `feedback` is the rating just given,
    shown under the buttons after a click; the buttons stay so the rating can be changed or given by others.
    `quote_rooms`: for the first len(quote_rooms) citations, the bytes each quote may take (None: up to
    QUOTE_CHARS, 0: title and link only); the citations after those are listed by title. Default: all quoted."""
    first, _, rest = text.strip().partition("\n")
    body: list[dict[str, Any]] = [plain(first, styled_runs(first), id="answer"),
                                  *_lines(rest, styled=True, isSubtle=True)]
    if understood_as:
        body.append(plain("", [_run("Understood as: ", isSubtle=True, size="Small"),
                               _run(trim(understood_as, 500), isSubtle=True, size="Small")]))
    if citations:
        rooms = quote_rooms if quote_rooms is not None else [None] * len(citations)
        shown = citations[:len(rooms)]
        containers = [_quote_container(c, room) for c, room in zip(shown, rooms, strict=False)]
        targets = [quote_id(c.number) for c in shown]
        quoted = {item.get("id") for container in containers for item in container["items"]}
        quotes_left_out = any(f"{quote_id(c.number)}-text" not in quoted for c in shown)
        listed = citations[len(rooms):]
        if quotes_left_out or listed:
            containers.append(_more_sources(listed, quotes_left_out))
            targets.append(MORE_ID)
        body.append({"type": "ActionSet", "actions": [{
            "type": "Action.ToggleVisibility", "title": f"Show quotes ({len(citations)})",
            "targetElements": targets}]})
        body.extend(containers)
    footer = "AI-generated: check the quotes before you rely on it."
    if mood:
        footer += f" Mood: {mood}."
    if citations:
        body.append(plain(footer, [_run(footer, isSubtle=True, size="Small")], separator=True))
    if answer_id:
        body.append(_feedback_set(answer_id, mood))
        if feedback is not None:
            choice = "helpful" if feedback else "not helpful"
            status = f"Thanks, feedback saved: {choice}."
            body.append(plain(status, [_run(status, color="Good", size="Small")], id="feedback-status"))
    return _card(body)


def sources_card(text: str, citations: list[Citation], total: int, answer_id: str | None, mood: str | None,
                 feedback: bool | None = None) -> dict[str, Any]:
    """The smallest answer card: the answer and its sources as a plain list ("[n] title", the first `citations`
    of `total`), for when the quotes and links would make the message too big for Teams."""
    first, _, rest = text.strip().partition("\n")
    body: list[dict[str, Any]] = [plain(first, styled_runs(first), id="answer"),
                                  *_lines(rest, styled=True, isSubtle=True)]
    if total:
        lines = [f"[{c.number}] {trim(c.title or c.doc_id, TITLE_CHARS)}" for c in citations]
        if total > len(citations):
            lines.append(f"… and {total - len(citations)} more")
        body.append(plain("Sources (too many to quote here):", [_run("Sources (too many to quote here):",
                                                                      weight="Bolder", size="Small")],
                          separator=True))
        body.extend(plain(line, [_run(line, size="Small")], spacing="None") for line in lines)
    footer = "AI-generated: check the sources before you rely on it." + (f" Mood: {mood}." if mood else "")
    body.append(plain(footer, [_run(footer, isSubtle=True, size="Small")], separator=True))
    if answer_id:
        body.append(_feedback_set(answer_id, mood))
        if feedback is not None:
            status = f"Thanks, feedback saved: {'helpful' if feedback else 'not helpful'}."
            body.append(plain(status, [_run(status, color="Good", size="Small")], id="feedback-status"))
    return _card(body)


def notice_card(text: str, attention: bool = False) -> dict[str, Any]:
    """A plain card for command replies, errors and apologies (red text when `attention`): every line shown as
    written, `code` spans in a monospace font, nothing in it a link or markup."""
    return _card(_lines(text, styled=True, **({"color": "Attention"} if attention else {})))


def attachment(card: dict[str, Any]) -> dict[str, Any]:
    return {"contentType": CARD_CONTENT_TYPE, "content": card}
