"""The knowledge store protocol: what ingestion and retrieval need, whatever database sits behind it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rag.documents import Chunk, SourceDocument
from rag.search.sentences import SentenceEvidence
from rag.search.word_links import QuestionLinks


@dataclass(frozen=True, slots=True)
class ChunkVectors:
    """The vectors of one document's chunks: one per chunk (its full indexed text), and one per sentence
    (in the order of `rag.search.sentences.chunk_sentences`, chunk after chunk)."""

    chunks: np.ndarray
    sentences: np.ndarray


EVERYONE = "all"  # the access group of public documents, which every chat sees


def is_public(groups: Iterable[str]) -> bool:
    """Visible to every chat: one of the groups is `all` (group names are compared without regard to case)."""
    return any(g.lower() == EVERYONE for g in groups)


@dataclass(frozen=True, slots=True)
class StoredDocument:
    doc_id: str
    title: str
    content_hash: str
    source_path: str | None
    chunk_count: int
    groups: tuple[str, ...] = ("all",)  # who may see it (access control)
    url: str | None = None
    updated: str | None = None  # the source's own date (front matter, Last-Modified), as ingested


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrict retrieval to documents with any of `tags` (none = all) that any of `groups` may see."""

    tags: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tags: list[str] | None = None, groups: list[str] | None = None) -> Filters:
        """`groups` are the groups of whoever asks; everyone may also see documents of the group `all`."""
        allowed = frozenset(g.lower() for g in groups or [])
        return cls(frozenset(t.lower() for t in tags or []), allowed | {"all"} if allowed else allowed)

    def allows(self, tags: list[str], groups: list[str]) -> bool:
        if self.tags and not self.tags.intersection(t.lower() for t in tags):
            return False
        return not (self.groups and not self.groups.intersection(g.lower() for g in groups))


class EmbeddingMismatch(RuntimeError):
    """The store was built with another embedding model than the one configured now."""


class KnowledgeStore(Protocol):
    """Documents, their section chunks (with vectors) and sub-chunks; vector and lexical search."""

    def document_hashes(self) -> dict[str, str]:
        """doc_id → content hash of every stored document (to skip unchanged ones on re-ingest)."""
        ...

    def documents(self) -> list[StoredDocument]: ...

    def replace_document(self, doc: SourceDocument, chunks: list[Chunk], vectors: ChunkVectors) -> None:
        """Insert or replace a document and all its chunks atomically (old chunks removed in the same step)."""
        ...

    def delete_documents(self, doc_ids: list[str]) -> int: ...

    def check_embedder(self, name: str, dim: int) -> None:
        """Record the model on first use; raise EmbeddingMismatch if the store was built with another."""
        ...

    def vector_search(self, vector: np.ndarray, limit: int, filters: Filters) -> list[tuple[str, float]]:
        """Sections by cosine similarity to the question: (chunk_id, similarity), best first."""
        ...

    def lexical_search(self, query: str, limit: int, filters: Filters) -> list[tuple[str, float]]:
        """Sections by BM25 (title and headings weighted above the body): (chunk_id, score), best first."""
        ...

    def sentence_rankings(self, query: str, vector: np.ndarray | None,
                          chunk_ids: list[str]) -> tuple[list[str], list[str]]:
        """Rank the given candidate chunks by their best sentence: (by BM25, by vector), best first.

        BM25 uses statistics of the whole store; without a vector the second list is empty.
        """
        ...

    def sentence_evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str],
                          links: QuestionLinks | None = None) -> SentenceEvidence:
        """sentence_rankings, plus the candidates' paragraphs ranked by their sentences (rag.search.sentences);
        `links`, the question's learned word links, feed the paragraph features of a store that computes them."""
        ...

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        """The chunks with their sub-chunks, in the order asked (unknown ids skipped)."""
        ...

    def counts(self) -> dict[str, int]: ...

    def close(self) -> None: ...
