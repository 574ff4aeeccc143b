"""Re-embed every stored chunk with another embedding model, into a new store, without the original sources.

A store keeps each document's chunks and paragraphs verbatim, which is all an embedder needs: the chunks are read
back through the store protocol (`documents`, `get_chunks`), embedded as ingestion embeds them (a chunk's
`index_text`, then its sentences) and written to the target with `replace_document`, one document at a time and
atomically. The target keeps each document's content hash, so a run that was killed starts again where it stopped
(documents already in the target with the same hash are skipped) and a later `navibot ingest` of the unchanged
sources finds nothing to do.

Not in place: the protocol records one embedding model per store (`check_embedder`) and has no step that swaps it
once every vector is replaced, so a half-done in-place run would mix two models' vectors in one search.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rag.documents import Chunk, SourceDocument
from rag.search.embedding import Embedder
from rag.search.sentences import chunk_sentences
from rag.search.store import ChunkVectors, KnowledgeStore, StoredDocument

Progress = Callable[[int, int], None]  # (documents done, documents in all)


class ReindexError(RuntimeError):
    """The reindex cannot start (same store, a target built with another model); the message says what to do."""


@dataclass(slots=True)
class StoredSource(SourceDocument):
    """A document rebuilt from the store: its blocks are gone (the chunks carry the text), so the content hash is
    the one stored, not one recomputed from nothing."""

    stored_hash: str = ""

    @property
    def content_hash(self) -> str:
        return self.stored_hash


@dataclass(slots=True)
class ReindexSummary:
    documents: int = 0
    reindexed: int = 0
    skipped: int = 0  # already in the target with the same content (an earlier, interrupted run)
    chunks: int = 0
    sentences: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        rate = self.chunks / self.seconds if self.seconds > 0 else 0.0
        return (f"{self.reindexed} re-embedded, {self.skipped} already done, {len(self.problems)} failed of "
                f"{self.documents} documents; {self.chunks} chunks and {self.sentences} sentences in "
                f"{self.seconds:.1f} s ({rate:.0f} chunks/s)")


def source_of(doc: StoredDocument, chunks: list[Chunk]) -> StoredSource:
    """What `replace_document` needs to know of a stored document. Tags come from its chunks (the store keeps them
    there); metadata (front-matter extras) is not read back by the protocol and is left empty."""
    first = chunks[0]
    return StoredSource(doc_id=doc.doc_id, title=doc.title, blocks=[], url=doc.url, source_path=doc.source_path,
                        tags=list(first.tags), groups=list(doc.groups), updated=doc.updated,
                        stored_hash=doc.content_hash)


def stored_chunks(store: KnowledgeStore, doc: StoredDocument) -> list[Chunk]:
    """A document's chunks in order (ids are `{doc_id}::{ordinal}`, as the chunker makes them)."""
    chunks = store.get_chunks([f"{doc.doc_id}::{n}" for n in range(doc.chunk_count)])
    if len(chunks) != doc.chunk_count:
        raise ValueError(f"{len(chunks)} of its {doc.chunk_count} chunks could be read")
    return chunks


def reindex(source: KnowledgeStore, target: KnowledgeStore, embedder: Embedder,
            progress: Progress | None = None) -> ReindexSummary:
    """Copy every document of `source` into `target` with vectors from `embedder`. An embedding failure stops the
    run (the model is down: every other document would fail too); what was written stays, and a re-run resumes."""
    started = time.perf_counter()
    target.check_embedder(embedder.name, embedder.dim)  # EmbeddingMismatch: the target holds another model
    documents = source.documents()
    done = target.document_hashes()
    summary = ReindexSummary(documents=len(documents))
    for number, doc in enumerate(documents, start=1):
        if done.get(doc.doc_id) == doc.content_hash:
            summary.skipped += 1
        else:
            try:
                chunks = stored_chunks(source, doc)
            except ValueError as exc:
                summary.problems.append(f"{doc.source_path or doc.doc_id}: not copied ({exc})")
                chunks = []
            if chunks:
                sentences = [s.index_text for chunk in chunks for s in chunk_sentences(chunk)]
                vectors = ChunkVectors(chunks=embedder.embed_documents([c.index_text for c in chunks]),
                                       sentences=embedder.embed_documents(sentences))
                target.replace_document(source_of(doc, chunks), chunks, vectors)
                summary.reindexed += 1
                summary.chunks += len(chunks)
                summary.sentences += len(sentences)
        if progress is not None:
            progress(number, len(documents))
    summary.seconds = time.perf_counter() - started
    return summary
