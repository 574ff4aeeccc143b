"""The questions offered to start a conversation: Slack's assistant-pane prompts and Teams prompt starters.

An admin lists them (NAVIBOT_SUGGESTED_QUESTIONS); without a list they are drawn from the knowledge base's own
topics: the titles of documents every chat may see (a restricted document's title is never offered)."""

from __future__ import annotations

from collections.abc import Sequence

from rag.search.store import StoredDocument, is_public

MAX_STARTERS = 3
TITLE_CHARS = 70


def topic_questions(documents: Sequence[StoredDocument], limit: int = MAX_STARTERS) -> list[str]:
    """A question about each of the first public documents (by title, alphabetically, titles told apart)."""
    titles = sorted({" ".join(d.title.split()) for d in documents if d.title.strip() and is_public(d.groups)},
                    key=str.lower)
    return [f"What should I know about {_short(t)}?" for t in titles[:limit]]


def starter_questions(configured: Sequence[str], documents: Sequence[StoredDocument],
                      limit: int = MAX_STARTERS) -> list[str]:
    chosen = [q.strip() for q in configured if q.strip()]
    return chosen[:limit] if chosen else topic_questions(documents, limit)


def _short(title: str) -> str:
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"
