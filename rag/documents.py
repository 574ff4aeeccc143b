"""The data that flows through the retrieval core: source documents, section chunks, quotable sub-chunks, hits."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

BlockKind = Literal["heading", "paragraph", "list", "table"]


@dataclass(frozen=True, slots=True)
class Block:
    """One structural unit read from a source: a heading, a paragraph, a whole list or a whole table.

    Loaders turn every format into blocks so that one chunker serves them all. `text` is the source text
    with whitespace normalised only, because sub-chunks built from it are quoted verbatim.
    """

    kind: BlockKind
    text: str
    level: int = 0  # heading level (1 = document title level); 0 for content blocks
    page: int | None = None  # 1-based PDF page the block starts on


@dataclass(slots=True)
class SourceDocument:
    """A document as read from a file, a JSONL line or (later) a web page, before chunking."""

    doc_id: str
    title: str
    blocks: list[Block]
    url: str | None = None
    source_path: str | None = None  # absolute path of the file it came from; used by --prune
    tags: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=lambda: ["all"])
    updated: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Changes whenever anything that ends up in the store changes (text, title, url, tags, groups)."""
        payload = json.dumps(
            {
                "title": self.title,
                "url": self.url,
                "tags": sorted(self.tags),
                "groups": sorted(self.groups),
                "updated": self.updated,
                "metadata": self.metadata,
                "blocks": [(b.kind, b.level, b.page, b.text) for b in self.blocks],
            },
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(slots=True)
class SubChunk:
    """A paragraph, list or table inside a section chunk: the unit that is quoted verbatim as a citation."""

    sub_id: str
    chunk_id: str
    ordinal: int
    kind: BlockKind
    text: str
    heading_path: list[str]
    page: int | None = None


@dataclass(slots=True)
class Chunk:
    """A cohesive section of a document: what is retrieved and given to the answerer."""

    chunk_id: str
    doc_id: str
    ordinal: int
    title: str
    heading_path: list[str]
    subchunks: list[SubChunk]
    text: str = ""  # the sub-chunks in order, with the sub-headings they fall under; what the answerer reads
    url: str | None = None
    page: int | None = None
    updated: str | None = None
    content_hash: str = ""
    tags: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=lambda: ["all"])

    @property
    def heading_text(self) -> str:
        """"Title > heading > sub-heading": what the section is about, in the source's own words."""
        return " > ".join([self.title, *self.heading_path])

    @property
    def index_text(self) -> str:
        """What is embedded and lexically indexed: titles carry topic words that the chunk text lacks."""
        return f"{self.heading_text}\n\n{self.text}"

    @property
    def word_count(self) -> int:
        return sum(len(s.text.split()) for s in self.subchunks)


@dataclass(slots=True)
class SearchHit:
    """A retrieved section chunk with its fused score and the ranks each retriever gave it."""

    chunk: Chunk
    score: float
    vector_rank: int | None = None
    lexical_rank: int | None = None
    rerank_score: float | None = None  # the reranker's relevance score, when one reordered the hits
    # sub_id -> rank (from 0) of each of its paragraphs among all the candidates' paragraphs, as retrieval ranked
    # them (rag/search/retrieve.py); empty when the store gave no paragraph evidence
    paragraph_ranks: dict[str, int] = field(default_factory=dict)

    def as_dict(self, snippet_chars: int = 240) -> dict[str, Any]:
        text = self.chunk.text
        snippet = text if len(text) <= snippet_chars else text[: snippet_chars - 1].rstrip() + "…"
        return {
            "chunk_id": self.chunk.chunk_id,
            "doc_id": self.chunk.doc_id,
            "title": self.chunk.title,
            "heading_path": self.chunk.heading_path,
            "url": self.chunk.url,
            "page": self.chunk.page,
            "score": round(self.score, 6),
            "vector_rank": self.vector_rank,
            "lexical_rank": self.lexical_rank,
            "rerank_score": None if self.rerank_score is None else round(self.rerank_score, 6),
            "snippet": snippet,
            "subchunks": [{"sub_id": s.sub_id, "kind": s.kind, "heading_path": s.heading_path, "page": s.page,
                           "text": s.text} for s in self.chunk.subchunks],
        }
