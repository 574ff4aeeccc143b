"""Sentences: the finest retrieval unit. A question usually paraphrases one sentence of the page that answers
it, so sentence-level evidence re-ranks the candidate sections (quotes stay whole paragraphs)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.models import Chunk

_BOUNDARY = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Sentence:
    chunk_id: str
    sub_id: str
    head: str  # "Title > heading > sub-heading" of the paragraph the sentence is in
    text: str

    @property
    def index_text(self) -> str:
        return f"{self.head}\n{self.text}"


def split_sentences(text: str) -> list[str]:
    """Split after ., ! or ? followed by whitespace; good enough for ranking (never used for quoting)."""
    return [part for part in (p.strip() for p in _BOUNDARY.split(text)) if part]


def chunk_sentences(chunk: Chunk) -> list[Sentence]:
    return [
        Sentence(chunk.chunk_id, sub.sub_id, " > ".join([chunk.title, *sub.heading_path]), sentence)
        for sub in chunk.subchunks
        for sentence in split_sentences(sub.text)
    ]
