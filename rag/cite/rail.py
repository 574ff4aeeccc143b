"""The citation rail: whatever wrote the answer, a citation is shown only if it is a paragraph retrieved for this
question, and its quote is that paragraph's exact stored text; a sentence is shown only if every number, amount,
date, phone number, URL and e-mail address it states is in a paragraph it cites (rag/cite/claims.py). An answer left
without citations or without sentences is not shown."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from rag.cite.claims import unsupported_claims
from rag.documents import Chunk, SearchHit, SubChunk

_MARKER = re.compile(r"\s?\[(\d{1,3})\]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
# The end of a sentence: . ! or ? (and a closing quote or bracket), the [n] markers that follow it, then a space or
# the end. "U.S. citizens", "e.g. rent" and "273.5" end nothing: a lower-case word or a digit follows.
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)]*(?:\s?\[\d{1,3}\])*(?=\s|$)")


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
    unsupported: list[str] = field(default_factory=list)  # why sentences were removed, for the log

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
    text, unsupported, unbacked = _supported_sentences(draft.text, valid, retrieved)
    used = [valid[int(n)] for n in _MARKER.findall(text) if int(n) in valid]
    # A citation only a dropped sentence marked backed nothing that is shown; one the text never marks stays last.
    order = list(dict.fromkeys([*used, *(v for v in valid.values() if v not in unbacked)]))
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
    return CheckedAnswer(_MARKER.sub(mark, text).strip(), citations, dropped, unsupported)


def _sentences(line: str) -> list[str]:
    """The line cut after each sentence end (with its markers and the spaces after it); joined, they are the line."""
    pieces, start = [], 0
    for match in _SENTENCE_END.finditer(line):
        rest = line[match.end():]
        following = rest.lstrip()
        if following and (following[0].islower() or following[0].isdigit()):
            continue
        end = match.end() + len(rest) - len(following)
        pieces.append(line[start:end])
        start = end
    if start < len(line):
        pieces.append(line[start:])
    return pieces


def cited_texts(sub_ids: Iterable[str], retrieved: dict[str, tuple[SubChunk, Chunk]]) -> list[str]:
    """What a sentence citing these paragraphs may draw on: each paragraph as its citation shows it (title,
    heading path, link and the quote)."""
    texts = []
    for sub_id in sub_ids:
        sub, chunk = retrieved[sub_id]
        texts.append("\n".join([chunk.title, " > ".join(sub.heading_path), chunk.url or "", sub.text]))
    return texts


def unsupported_in_sentence(sentence: str, cited: Sequence[Citation]) -> list[str]:
    """One answer sentence against the citations it marks (already checked by the rail): the claims none of them
    holds, empty when the sentence may be shown. For answers checked sentence by sentence as they stream."""
    return unsupported_claims(sentence, ["\n".join([c.title, " > ".join(c.heading_path), c.url or "", c.quote])
                                         for c in cited])


def _supported_sentences(text: str, valid: dict[int, str], retrieved: dict[str, tuple[SubChunk, Chunk]]
                         ) -> tuple[str, list[str], set[str]]:
    """The text without the sentences that state something their cited paragraphs do not; why each was dropped;
    the paragraphs marked only by dropped sentences. A sentence without a marker cites what the next marked
    sentence cites (models often mark a run of sentences once), or else the previous one, or else every valid
    citation; a sentence whose markers are all invalid cites nothing."""
    lines = []
    for line in text.splitlines():
        mark = _LIST_MARK.match(line)
        head = mark.group(0) if mark else ""
        lines.append((head, _sentences(line[len(head):])))
    markers = [[int(n) for n in _MARKER.findall(piece)] for _, pieces in lines for piece in pieces]
    everything = list(dict.fromkeys(valid.values()))
    cites: list[list[str]] = []
    for i, own_numbers in enumerate(markers):
        numbers = own_numbers
        if not numbers:
            later = next((m for m in markers[i + 1:] if m), None)
            earlier = next((m for m in reversed(markers[:i]) if m), None)
            numbers = later or earlier or []
            if not numbers:
                cites.append(everything)
                continue
        cites.append([valid[n] for n in numbers if n in valid])
    kept_lines: list[str] = []
    reasons: list[str] = []
    dropped_ids: set[str] = set()
    kept_ids: set[str] = set()
    index = 0
    for head, pieces in lines:
        kept: list[str] = []
        for piece in pieces:
            sub_ids, own = cites[index], markers[index]
            index += 1
            missing = unsupported_claims(piece, cited_texts(sub_ids, retrieved))
            marked = {valid[n] for n in own if n in valid}
            if missing:
                reasons.append(f"{', '.join(repr(m) for m in missing)} not in the cited paragraphs "
                               f"({', '.join(sub_ids) or 'none'})")
                dropped_ids |= marked
            else:
                kept.append(piece)
                kept_ids |= marked
        if kept or not pieces:  # a line whose every sentence is dropped goes (a blank line stays)
            kept_lines.append((head + "".join(kept)).rstrip())
    return "\n".join(kept_lines), reasons, dropped_ids - kept_ids
