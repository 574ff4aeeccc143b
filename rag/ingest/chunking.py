"""Structure-aware chunking: section chunks for the answerer, paragraph sub-chunks for verbatim citations.

The document's blocks become a tree of sections (real headings, plus the lettered and numbered paragraphs of
regulations such as "(b) Student exemptions."). A section whose whole subtree fits in `max_words` becomes one
chunk; a bigger one is packed greedily from its own paragraphs and its child sections, so small siblings merge,
nothing is ever cut inside a paragraph, and a list or table stays in the chunk of its lead-in sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.documents import Block, Chunk, SourceDocument, SubChunk
from rag.ingest.legal_labels import label_spans, leading_labels, resolve_labels

# "(a)", "(12)", "(iv)", "(A)" at the start of a regulation paragraph (or of a table row's first cell).
_LABEL = re.compile(r"^\s*(?:\|\s*)?\((?P<label>[a-z]{1,7}|\d{1,3}|[A-Z]{1,2})\)\s*")


@dataclass(slots=True)
class _Section:
    heading: str | None
    level: int
    path: list[str]
    derived_path: list[bool] = field(default_factory=list)  # per heading of `path`: made from a label?
    content: list[Block] = field(default_factory=list)
    children: list[_Section] = field(default_factory=list)

    def words(self) -> int:
        return sum(_words(b) for b in self.content) + sum(c.words() for c in self.children)


def _words(block: Block) -> int:
    return len(block.text.split())


def _label_title(text: str, label: str) -> str:
    """"(b) Student Exemptions. To be eligible..." → "(b) Student Exemptions"; long first sentences → "(b)".

    `label` is the label as read, which is the printed one except for a slip ("(1)" printed where "(i)" belongs).
    A table row is titled by its first cell when the other cells define it.
    """
    rest = _LABEL.sub("", text, count=1)
    if text.lstrip().startswith("|"):  # a first cell that other cells define: "| (1) Agency error (AE) claim | any…"
        cells = [c.strip() for c in rest.split("\n", 1)[0].split("|")]
        defined = len(cells) > 1 and any(cells[1:]) and 0 < len(cells[0].split()) <= 8 and cells[0][0].isupper()
        return f"({label}) {cells[0]}" if defined else f"({label})"
    head = re.split(r"(?<=[a-z\)])\.\s|—|\.$", rest, maxsplit=1)[0].strip()
    if head and head != rest.strip() and len(head.split()) <= 8 and head[0].isupper():
        return f"({label}) {head}"
    return f"({label})"


def _labels(block: Block) -> list[str]:
    return leading_labels(block.text)


def _is_regulation(blocks: list[Block]) -> bool:
    starts = {labels[0] for b in blocks if b.kind in ("paragraph", "heading") and (labels := _labels(b))}
    return "a" in starts and "b" in starts


def _split_labelled_tables(blocks: list[Block]) -> list[Block]:
    """A table whose rows start with paragraph labels ("| (iii) For an IHE claim … |", as in 7 CFR 273.18) is a
    run of paragraphs: each labelled row, with the unlabelled rows after it, becomes a table block of its own;
    rows before the first labelled one (column headings) stay a block that follows its lead-in sentence."""
    out: list[Block] = []
    for block in blocks:
        rows = block.text.split("\n") if block.kind == "table" else []
        if not any(leading_labels(row) for row in rows):
            out.append(block)
            continue
        groups: list[list[str]] = [[]]
        for row in rows:
            if leading_labels(row) and groups[-1]:
                groups.append([])
            groups[-1].append(row)
        out.extend(Block("table", "\n".join(g), page=block.page) for g in groups if g)
    return out


def _derived(text: str, path: tuple[str, ...], base: int, page: int | None) -> Block:
    """The heading of a labelled paragraph at `path` (one label per level) under a real heading of level `base`."""
    return Block("heading", _label_title(text, path[-1]), level=base + len(path), page=page)


def _with_label_headings(blocks: list[Block]) -> list[tuple[Block, bool]]:
    """Insert a derived heading before every labelled paragraph of a regulation, at the level its label
    sequence gives it (see rag.ingest.legal_labels), so that each paragraph's heading path is its true location:
    "(b) Exemptions" > "(5)" > "(i)". Labels are read per section, i.e. between real headings; a heading that
    starts with a label (a manual's "<h3>(c) Verification</h3>", a PDF line "(c) Verification") is one of
    the section's labelled paragraphs, placed by the same sequence, and keeps its own words."""
    if not _is_regulation(blocks):
        return [(b, False) for b in blocks]
    out: list[tuple[Block, bool]] = []
    section: list[Block] = []
    base = 1

    def flush() -> None:
        placements = resolve_labels([_labels(b) for b in section])
        for block, place in zip(section, placements, strict=True):
            if block.kind == "heading":  # a labelled heading: at the level its label gives it, or a paragraph
                if not place.placed:
                    out.append((Block("paragraph", block.text, page=block.page), False))
                    continue
                # Its words at its first label's level; labels run in after it ("(b) X—(1) Y") as usual.
                out.append((Block("heading", block.text, level=base + place.depth, page=block.page), False))
                for (_, start), path in zip(label_spans(block.text)[1:], place.run_in, strict=False):
                    out.append((_derived(block.text[start:], path, base, block.page), True))
                continue
            if place.path and place.placed:
                out.append((_derived(block.text, place.path, base, block.page), True))
                # Labels run in after the first ("(b) Heading—(1) Text", "(3) Boarders. (i) Text") open deeper
                # levels: the paragraph goes in the deepest, whose text it holds (the parents' is a heading),
                # and "(2)" or "(ii)" next is read beneath them.
                for (_, start), path in zip(label_spans(block.text)[1:], place.run_in, strict=False):
                    out.append((_derived(block.text[start:], path, base, block.page), True))
            out.append((block, False))
        section.clear()

    for block in _split_labelled_tables(blocks):
        if block.kind == "heading" and not _labels(block):
            flush()
            base = block.level
            out.append((block, False))
        else:
            section.append(block)
    flush()
    return out


def _build_tree(blocks: list[Block]) -> _Section:
    root = _Section(heading=None, level=0, path=[])
    stack = [root]
    for block, derived in _with_label_headings(blocks):
        if block.kind == "heading":
            while len(stack) > 1 and stack[-1].level >= block.level:
                stack.pop()
            parent = stack[-1]
            node = _Section(block.text, block.level, [*parent.path, block.text], [*parent.derived_path, derived])
            parent.children.append(node)
            stack.append(node)
        else:
            stack[-1].content.append(block)
    return root


@dataclass(slots=True)
class _Piece:
    """A run of blocks that must stay together (a lead-in with its list or table), under one section."""

    section: _Section
    blocks: list[Block]

    def words(self) -> int:
        return sum(_words(b) for b in self.blocks)


def _pieces(section: _Section) -> list[_Piece]:
    pieces: list[_Piece] = []
    for block in section.content:
        if pieces and block.kind in ("list", "table") and pieces[-1].blocks[-1].kind == "paragraph":
            pieces[-1].blocks.append(block)  # a list or table stays with the sentence that introduces it
        else:
            pieces.append(_Piece(section, [block]))
    return pieces


def _flatten(section: _Section) -> list[_Piece]:
    out = _pieces(section)
    for child in section.children:
        out.extend(_flatten(child))
    return out


class Chunker:
    """Splits documents into section chunks of at most about `max_words` words, with paragraph sub-chunks."""

    def __init__(self, max_words: int = 450) -> None:
        if max_words < 50:
            raise ValueError("max_words must be at least 50")
        self.max_words = max_words

    def chunk(self, doc: SourceDocument) -> list[Chunk]:
        root = _build_tree(doc.blocks)
        groups: list[list[_Piece]] = []
        self._pack(root, groups)
        content_hash = doc.content_hash  # computed once: it serialises the whole document
        return [self._make_chunk(doc, content_hash, i, group) for i, group in enumerate(g for g in groups if g)]

    def _pack(self, section: _Section, groups: list[list[_Piece]]) -> None:
        if section.words() <= self.max_words:
            groups.append(_flatten(section))
            return
        current: list[_Piece] = []
        size = 0

        def flush() -> None:
            nonlocal current, size
            if current:
                groups.append(current)
            current, size = [], 0

        for piece in _pieces(section):
            if size and size + piece.words() > self.max_words:
                flush()
            current.append(piece)
            size += piece.words()
        for child in section.children:
            words = child.words()
            if words > self.max_words:
                flush()
                self._pack(child, groups)
                continue
            if size and size + words > self.max_words:
                flush()
            current.extend(_flatten(child))
            size += words
        flush()

    def _make_chunk(self, doc: SourceDocument, content_hash: str, ordinal: int, pieces: list[_Piece]) -> Chunk:
        chunk_id = f"{doc.doc_id}::{ordinal}"
        paths = [p.section.path for p in pieces]
        common = paths[0]
        for path in paths[1:]:
            n = 0
            while n < min(len(common), len(path)) and common[n] == path[n]:
                n += 1
            common = common[:n]
        subs: list[SubChunk] = []
        text_parts: list[str] = []
        shown: list[str] = list(common)
        for piece in pieces:
            path = piece.section.path
            if path != shown:
                # Name the sub-sections this text falls under, except labels the paragraph itself starts with.
                new = list(self._new_headings(shown, path, piece.section))
                if new:
                    text_parts.append(" > ".join(new))
                shown = path
            for block in piece.blocks:
                subs.append(SubChunk(sub_id=f"{chunk_id}.{len(subs)}", chunk_id=chunk_id, ordinal=len(subs),
                                     kind=block.kind, text=block.text, heading_path=list(path), page=block.page))
                text_parts.append(block.text)
        return Chunk(
            chunk_id=chunk_id,
            doc_id=doc.doc_id,
            ordinal=ordinal,
            title=doc.title,
            heading_path=list(common),
            subchunks=subs,
            text="\n\n".join(text_parts),
            url=doc.url,
            page=subs[0].page if subs else None,
            updated=doc.updated,
            content_hash=content_hash,
            tags=list(doc.tags),
            groups=list(doc.groups),
        )

    @staticmethod
    def _new_headings(shown: list[str], path: list[str], section: _Section) -> list[str]:
        """The headings of `path` not shown yet, without those made from labels: a labelled paragraph's
        text (its own, or its parents' run in before it) is in the chunk already."""
        n = 0
        while n < min(len(shown), len(path)) and shown[n] == path[n]:
            n += 1
        return [h for h, derived in zip(path[n:], section.derived_path[n:], strict=True) if not derived]
