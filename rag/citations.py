"""The citation rail: whatever wrote the answer, a citation is shown only if it is a paragraph retrieved for this
question, and its quote is that paragraph's exact stored text. An answer left without citations is not shown."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from rag.models import Chunk, SearchHit, SubChunk

_MARKER = re.compile(r"\s?\[(\d{1,3})\]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")


@dataclass(slots=True)
class Draft:
    """What an answerer returns: text with [n] markers, n pointing into `cited` (1-based), and optionally the
    quote it believes each sub-chunk says (checked against the store, never shown as is)."""

    text: str
    cited: list[str]
    claimed_quotes: dict[str, str] = field(default_factory=dict)
    prefix: str = ""  # shown before the answer (a mood's emoji), not part of it
    note: str = ""  # shown after the answer (why a mood could not be honoured), not part of it


@dataclass(frozen=True, slots=True)
class Citation:
    number: int
    doc_id: str
    chunk_id: str
    sub_id: str
    title: str
    heading_path: list[str]
    url: str | None  # with a #:~:text= fragment (web pages) or #page= (PDFs) that jumps to the quote
    page: int | None
    quote: str  # the exact stored source text of the paragraph

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class CheckedAnswer:
    text: str
    citations: list[Citation]
    dropped: list[str]  # why citations were removed, for the log

    @property
    def ok(self) -> bool:
        return bool(self.citations) and bool(self.text.strip())


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _fragment_words(text: str) -> list[str]:
    first = _LIST_MARK.sub("", text.strip().splitlines()[0] if text.strip() else "")
    return first.split()


def link_to_quote(url: str | None, sub: SubChunk) -> str | None:
    """Deep link to the quote: a text fragment on web pages (browsers scroll to and highlight it), the page
    number on PDFs. Tables are linked without a fragment (their cells rarely render as one run of text)."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"}:
        return url
    if parts.path.lower().endswith(".pdf"):
        return f"{url.split('#')[0]}#page={sub.page}" if sub.page else url
    if sub.kind == "table":
        return url
    words = _fragment_words(sub.text)
    if not words:
        return url

    def enc(ws: list[str]) -> str:
        return quote(" ".join(ws), safe="").replace("-", "%2D")

    directive = f"text={enc(words)}" if len(words) <= 8 else f"text={enc(words[:4])},{enc(words[-4:])}"
    return f"{url}:~:{directive}" if "#" in url else f"{url}#:~:{directive}"


def check(draft: Draft, hits: list[SearchHit]) -> CheckedAnswer:
    """Keep the citations that pass; number them 1..n in the order the text first uses them (cited paragraphs the
    text never marks come last); drop the markers of the others."""
    retrieved: dict[str, tuple[SubChunk, Chunk]] = {
        sub.sub_id: (sub, hit.chunk) for hit in hits for sub in hit.chunk.subchunks}
    dropped: list[str] = []
    valid: dict[int, str] = {}  # draft marker number → sub-chunk id, for the citations that pass
    for position, sub_id in enumerate(draft.cited, start=1):
        found = retrieved.get(sub_id)
        if found is None:
            dropped.append(f"{sub_id}: not among the retrieved paragraphs")
            continue
        claimed = draft.claimed_quotes.get(sub_id)
        if claimed is not None and (not claimed.strip() or _squash(claimed) not in _squash(found[0].text)):
            dropped.append(f"{sub_id}: the quoted text is not in the source")
            continue
        valid[position] = sub_id
    used = [valid[int(n)] for n in _MARKER.findall(draft.text) if int(n) in valid]
    order = list(dict.fromkeys([*used, *valid.values()]))
    number = {sub_id: i for i, sub_id in enumerate(order, start=1)}

    def mark(match: re.Match[str]) -> str:
        sub_id = valid.get(int(match.group(1)))
        return f" [{number[sub_id]}]" if sub_id else ""

    citations = []
    for sub_id in order:
        sub, chunk = retrieved[sub_id]
        citations.append(Citation(number=number[sub_id], doc_id=chunk.doc_id, chunk_id=chunk.chunk_id, sub_id=sub_id,
                                  title=chunk.title, heading_path=list(sub.heading_path),
                                  url=link_to_quote(chunk.url, sub), page=sub.page, quote=sub.text))
    return CheckedAnswer(_MARKER.sub(mark, draft.text).strip(), citations, dropped)
