"""Block Kit rendering of replies: the answer with its quotes (collapsed or expanded) and feedback buttons, plain
replies, and the feedback-reason modal. Pure functions of the reply; no Web API calls here.

Block Kit limits respected: a section's text is at most 3,000 characters, a message at most 50 blocks and about
12,000 characters of text in all (more is refused with msg_blocks_too_long). The quotes share what the answer leaves
of that; a long quote is trimmed with "…" and a link to the source, and citations beyond the budget are listed as
links ("+N more sources"), never dropped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from adapters.web_links import web_url
from bot.port import Citation, Reply, StoredAnswer

Block = dict[str, Any]

ACTION_SHOW_QUOTES = "navibot_show_quotes"
ACTION_HIDE_QUOTES = "navibot_hide_quotes"
ACTION_FEEDBACK = "navibot_feedback"
ACTION_REASON = "navibot_feedback_reason"
VIEW_REASON = "navibot_feedback_reason_view"
REASON_BLOCK = "reason"
REASON_INPUT = "reason_input"
HELPFUL, NOT_HELPFUL = "helpful", "not_helpful"

SECTION_LIMIT = 3000  # characters of a section block's text
MAX_BLOCKS = 50  # blocks in one message
QUOTE_LIMIT = 2800  # characters of one quote shown, leaving room for the title line and the link
# Slack refuses a message whose blocks hold more than about 12,000 characters of text in all (msg_blocks_too_long;
# not in the reference pages, measured in slackapi/bolt-js#2509); links are counted too, to keep a margin.
TEXT_BUDGET = 10_000
MORE_SOURCES_LIMIT = 1500  # the "+N more sources" line, kept free within the text budget
MIN_QUOTE = 300  # a quote cut shorter than this says too little: that citation is listed as a link instead
MIN_SHARE = 800  # the least room a quote block gets when many share the budget: the first ones are shown
FALLBACK_LIMIT = 3900  # the notification / screen-reader text; Slack truncates `text` far above this
URL_LIMIT = 1000  # a longer document URL is shown as text, not linked


def escape(text: str) -> str:
    """The three characters Slack's mrkdwn treats as control characters; everything else is shown as is."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link_url(url: str | None) -> str | None:
    """A document's URL when it may be linked (adapters/web_links.py), at most URL_LIMIT characters and free of the
    characters that end or split Slack's `<url|label>`. None otherwise: the source is then named as text."""
    return web_url(url, URL_LIMIT, forbidden="<>|")


def mrkdwn_link(url: str | None, label: str) -> str:
    """`<url|label>` for mrkdwn when the URL may be linked (link_url), else the label alone as text. The label is
    escaped (&, <, > as Slack asks), kept on one line, and its `|` shown as `¦` so nothing in it reads as markup."""
    shown = escape(" ".join(label.split())).replace("|", "¦")
    safe = link_url(url)
    return f"<{escape(safe)}|{shown}>" if safe else shown


def _mrkdwn(text: str) -> str:
    """Escaped answer text; Markdown bold (**x**, as language models write it) becomes Slack's *x*."""
    return re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"*\1*", escape(text))


def split_text(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """Pieces of at most `limit` characters, cut at the last line break (a paragraph's end is one) in the second
    half of the window, else at the last space there, else hard."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[:limit]
        cut = window.rfind("\n")
        if cut < limit // 2:
            cut = window.rfind(" ")
        if cut < limit // 2:
            cut = limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def _mrkdwn_text(text: str) -> Block:
    """A mrkdwn text object. verbatim: Slack does not turn the words into links, channel names or mentions by itself
    (document and user text are data); only the `<url|label>` links built here link."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _section(text: str) -> Block:
    return {"type": "section", "text": _mrkdwn_text(text)}


def _sections(escaped_text: str) -> list[Block]:
    return [_section(piece) for piece in split_text(escaped_text)] or [_section(" ")]


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Message:
    """What chat.postMessage / chat.update take: the fallback text and the blocks."""

    text: str
    blocks: list[Block] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AnswerView:
    """What an answer message shows; built from the fresh Reply or, for a button click, from the stored answer."""

    answer_id: str
    text: str
    mood: str
    citations: list[Citation]
    question: str = ""
    standalone: str = ""

    @classmethod
    def from_reply(cls, reply: Reply, question: str) -> AnswerView:
        return cls(reply.answer_id or "", reply.text, reply.mood or "", list(reply.citations), question,
                   reply.standalone_question or "")

    @classmethod
    def from_stored(cls, stored: StoredAnswer) -> AnswerView:
        return cls(stored.answer_id, stored.answer, stored.mood, list(stored.citations), stored.question,
                   stored.standalone)


def plain_message(text: str) -> Message:
    """Commands, no-answers, errors: the text, nothing to click."""
    return Message(_trim(escape(text), FALLBACK_LIMIT), _sections(escape(text))[:MAX_BLOCKS])


def _context_line(view: AnswerView) -> Block:
    count = len(view.citations)
    line = f"mood: {escape(view.mood)} · {count} source{'s' if count != 1 else ''}"
    if view.standalone and " ".join(view.standalone.split()).lower() != " ".join(view.question.split()).lower():
        # A rewritten follow-up: say how it was understood, so a misunderstanding shows before it is read aloud.
        line += f" · understood as: _{escape(_trim(view.standalone, 500))}_"
    return {"type": "context", "elements": [_mrkdwn_text(line)]}


def text_length(node: Any) -> int:
    """Characters of the text and link addresses in a block tree: what counts towards TEXT_BUDGET."""
    if isinstance(node, dict):
        return sum(len(v) if k in {"text", "url"} and isinstance(v, str) else text_length(v) for k, v in node.items())
    if isinstance(node, list):
        return sum(text_length(v) for v in node)
    return 0


def _citation_block(citation: Citation, room: int) -> Block | None:
    """One citation as a rich_text block of at most `room` characters (text_length), or None when not even
    MIN_QUOTE characters of its quote fit. The quote is a rich_text_quote of plain text elements, so the source's
    words arrive verbatim (no mrkdwn escaping or interpretation)."""
    header: list[Block] = [{"type": "text", "text": f"[{citation.number}] ", "style": {"bold": True}}]
    title = _trim(citation.title or citation.doc_id, 300)
    url = link_url(citation.url)
    if url:
        header.append({"type": "link", "url": url, "text": title, "style": {"bold": True}})
    else:
        header.append({"type": "text", "text": title, "style": {"bold": True}})
    where = " › ".join(citation.heading_path)
    if citation.page:
        where = f"{where} (page {citation.page})" if where else f"page {citation.page}"
    if where:
        header.append({"type": "text", "text": "\n" + _trim(where, 500), "style": {"italic": True}})
    room -= text_length(header)
    quote: list[Block] = [{"type": "text", "text": citation.quote}]
    if len(citation.quote) > min(QUOTE_LIMIT, room):
        if url:
            rest: list[Block] = [{"type": "text", "text": " "},
                                 {"type": "link", "url": url, "text": "read the rest at the source"}]
        else:
            rest = [{"type": "text", "text": f" (the rest is in {citation.title or citation.doc_id})"}]
        limit = min(QUOTE_LIMIT, room - text_length(rest))
        if limit < MIN_QUOTE:
            return None
        quote = [{"type": "text", "text": _trim(citation.quote, limit)}, *rest]
    return {"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": header},
                                              {"type": "rich_text_quote", "elements": quote}]}


def _quotes(citations: list[Citation], max_blocks: int, room: int) -> list[Block]:
    """Quote blocks sharing `max_blocks` blocks and `room` characters fairly (what a short quote leaves goes to the
    next ones; with very many, the first ones get MIN_SHARE each), then the citations that did not fit, as links."""
    blocks: list[Block] = []
    room -= MORE_SOURCES_LIMIT
    for i, citation in enumerate(citations):
        left = len(citations) - i
        if left > 1 and len(blocks) == max_blocks - 1:
            break  # the last block lists the rest
        block = _citation_block(citation, min(room, max(room // left, MIN_SHARE)))
        if block is None:
            break
        blocks.append(block)
        room -= text_length(block)
    if len(blocks) < len(citations):
        blocks.append(_more_sources(citations[len(blocks):]))
    return blocks


def _more_sources(rest: list[Citation]) -> Block:
    """Citations beyond the block or text budget, as links in one section of at most MORE_SOURCES_LIMIT
    characters."""
    head = f"+{len(rest)} more source{'s' if len(rest) != 1 else ''}: "
    parts: list[str] = []
    for c in rest:
        parts.append(mrkdwn_link(c.url, _trim(f"[{c.number}] {c.title or c.doc_id}", 150)))
    text = head
    for i, part in enumerate(parts):
        candidate = text + (", " if i else "") + part
        if len(candidate) > MORE_SOURCES_LIMIT - 60:
            text += f", … ({len(parts) - i} more not listed here)"
            break
        text = candidate
    return _section(text)


def _buttons(view: AnswerView, expanded: bool) -> list[Block]:
    toggle = ({"type": "button", "action_id": ACTION_HIDE_QUOTES, "text": {"type": "plain_text", "text": "Hide quotes"},
               "value": view.answer_id} if expanded else
              {"type": "button", "action_id": ACTION_SHOW_QUOTES, "value": view.answer_id,
               "text": {"type": "plain_text", "text": f"Show quotes ({len(view.citations)})"}})
    feedback = {"type": "feedback_buttons", "action_id": ACTION_FEEDBACK,
                "positive_button": {"text": {"type": "plain_text", "text": "👍"},
                                    "value": f"{HELPFUL}:{view.answer_id}",
                                    "accessibility_label": "This answer was helpful"},
                "negative_button": {"text": {"type": "plain_text", "text": "👎"},
                                    "value": f"{NOT_HELPFUL}:{view.answer_id}",
                                    "accessibility_label": "This answer was not helpful"}}
    return [{"type": "actions", "elements": [toggle]}, {"type": "context_actions", "elements": [feedback]}]


def answer_message(view: AnswerView, expanded: bool = False) -> Message:
    """The concise answer, a context line (mood, number of sources), the quotes when expanded, the toggle button
    and the feedback buttons."""
    answer = _sections(_mrkdwn(view.text))
    context = _context_line(view)
    buttons = _buttons(view, expanded)
    quotes: list[Block] = []
    if expanded and view.citations:
        quotes = _quotes(view.citations, MAX_BLOCKS - len(answer) - 1 - len(buttons),
                         TEXT_BUDGET - text_length([*answer, context, *buttons]))
    sources = "; ".join(f"[{c.number}] {c.title}" for c in view.citations)
    fallback = _trim(escape(f"{view.text}\nSources: {sources}" if sources else view.text), FALLBACK_LIMIT)
    return Message(fallback, [*answer, context, *quotes, *buttons])


def feedback_confirmation(helpful: bool, answer_id: str) -> Message:
    """Shown only to the person who clicked; a 👎 offers a reason."""
    if helpful:
        return plain_message("Thanks, your 👍 is saved.")
    text = "Thanks, your 👎 is saved. What was wrong? A reason helps whoever reviews the answers (optional)."
    return Message(text, [_section(escape(text)), {"type": "actions", "elements": [
        {"type": "button", "action_id": ACTION_REASON, "value": answer_id,
         "text": {"type": "plain_text", "text": "Add a reason"}}]}])


def reason_modal(private_metadata: str, max_chars: int) -> dict[str, Any]:
    """The modal asking why an answer did not help; private_metadata carries the answer and where to confirm."""
    return {
        "type": "modal", "callback_id": VIEW_REASON, "private_metadata": private_metadata,
        "title": {"type": "plain_text", "text": "Why not helpful?"},
        "submit": {"type": "plain_text", "text": "Save"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [{"type": "input", "block_id": REASON_BLOCK,
                    "label": {"type": "plain_text", "text": "What was wrong with the answer?"},
                    "hint": {"type": "plain_text", "text": "e.g. wrong program cited, out of date, did not answer"},
                    "element": {"type": "plain_text_input", "action_id": REASON_INPUT, "multiline": True,
                                "max_length": max_chars}}],
    }
