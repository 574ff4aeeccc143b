"""Ingestion: load files, skip unchanged documents, chunk and embed the rest, replace them atomically, prune.

Re-running it on the same folder is cheap (unchanged content hashes are skipped) and keeps the store in sync.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from rag.documents import SourceDocument
from rag.ingest.chunking import Chunker
from rag.ingest.loaders import JSONL, LoadError, iter_files, load_file
from rag.search.embedding import Embedder, EmbeddingUnavailable
from rag.search.sentences import chunk_sentences
from rag.search.store import ChunkVectors, KnowledgeStore, is_public

log = logging.getLogger(__name__)


@dataclass(slots=True)
class IngestSummary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    chunks: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)  # "path: reason", one per failure or skipped line
    kept_restricted: int = 0  # stored restricted documents that stayed so (no groups given for this run)

    @property
    def ingested(self) -> int:
        """Documents now in the store from this run (new, changed or already up to date)."""
        return self.added + self.updated + self.unchanged

    def line(self) -> str:
        return (f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, {self.removed} removed, "
                f"{self.failed} failed; {self.chunks} chunks written in {self.seconds:.1f} s"
                + (f"; {self.kept_restricted} restricted document(s) kept their access groups (pass --groups all "
                   "to make them visible to every chat)" if self.kept_restricted else ""))


class Ingestor:
    def __init__(self, store: KnowledgeStore, embedder: Embedder, chunker: Chunker) -> None:
        self.store = store
        self.embedder = embedder
        self.chunker = chunker

    def ingest_documents(self, docs: Iterable[SourceDocument], summary: IngestSummary,
                         known: dict[str, str] | None = None,
                         restricted: dict[str, tuple[str, ...]] | None = None) -> None:
        """Store documents whose content changed; count the unchanged ones. `restricted` (from
        `restricted_documents()`, when no groups were given for this run): those stored documents keep their groups."""
        self.store.check_embedder(self.embedder.name, self.embedder.dim)
        self._store_changed(docs, summary, self.store.document_hashes() if known is None else known, restricted)

    def restricted_documents(self) -> dict[str, tuple[str, ...]]:
        """Stored documents not visible to every chat, with their groups: read once per run."""
        return {d.doc_id: d.groups for d in self.store.documents()
                if not is_public(d.groups)}

    @staticmethod
    def _keep_restrictions(docs: list[SourceDocument], restricted: dict[str, tuple[str, ...]],
                           summary: IngestSummary) -> None:
        """A routine re-ingest or re-crawl without --groups must not publish a restricted document to every chat:
        a document stored without the group `all` keeps its groups unless this run names groups itself."""
        for doc in docs:
            before = restricted.get(doc.doc_id)
            if before and is_public(doc.groups):
                doc.groups = list(before)
                summary.kept_restricted += 1

    def _store_changed(self, docs: Iterable[SourceDocument], summary: IngestSummary, known: dict[str, str],
                       restricted: dict[str, tuple[str, ...]] | None = None) -> None:
        docs = list(docs)
        if restricted:
            self._keep_restrictions(docs, restricted, summary)
        for doc in docs:
            digest = doc.content_hash
            previous = known.get(doc.doc_id)
            if previous == digest:
                summary.unchanged += 1
                continue
            try:
                chunks = self.chunker.chunk(doc)
                if not chunks:
                    summary.failed += 1
                    summary.problems.append(f"{doc.source_path or doc.doc_id}: no text to index")
                    continue
                sentences = [s.index_text for chunk in chunks for s in chunk_sentences(chunk)]
                vectors = ChunkVectors(chunks=self.embedder.embed_documents([c.index_text for c in chunks]),
                                       sentences=self.embedder.embed_documents(sentences))
                self.store.replace_document(doc, chunks, vectors)  # atomic: the old version stays on failure
            except EmbeddingUnavailable as exc:
                # The model is down (a hosted provider unreachable, say): every other document would wait for the
                # same failure. Stop with one line; what was stored stays, and a re-run skips it.
                stored = summary.added + summary.updated
                raise EmbeddingUnavailable(
                    f"embedding failed on {doc.source_path or doc.doc_id} ({exc}); stopped after storing {stored} "
                    "changed document(s): run the same command again when the model is reachable (documents "
                    "already stored are skipped)") from exc
            except Exception as exc:  # one bad document must not stop the others
                log.debug("could not store %s", doc.doc_id, exc_info=True)  # the summary names it; -v shows why
                summary.failed += 1
                where = doc.source_path or doc.doc_id
                summary.problems.append(f"{where}: not stored ({exc.__class__.__name__}: {exc})")
                continue
            known[doc.doc_id] = digest
            summary.chunks += len(chunks)
            if previous is None:
                summary.added += 1
            else:
                summary.updated += 1

    def ingest_paths(self, roots: list[Path], tags: list[str] | None = None, groups: list[str] | None = None,
                     prune: bool = False, progress: bool | None = None) -> IngestSummary:
        """Ingest files and folders (recursively). Unreadable files are reported and skipped."""
        started = time.perf_counter()
        summary = IngestSummary()
        files: list[tuple[Path, Path]] = []
        for root in roots:
            if not root.exists():
                summary.failed += 1
                summary.problems.append(f"{root}: no such file or folder")
                continue
            files.extend((path, root) for path in iter_files(root))
        show = sys.stderr.isatty() if progress is None else progress
        if files:
            self.store.check_embedder(self.embedder.name, self.embedder.dim)  # once, not once per file
        known = self.store.document_hashes() if files else {}
        # The same file ingested under another id before (named from another folder): replace, never duplicate.
        ids_by_source: dict[str, set[str]] = {}
        restricted: dict[str, tuple[str, ...]] = {}  # kept so when this run gives no groups
        for stored in self.store.documents() if files else []:
            if stored.source_path:
                ids_by_source.setdefault(stored.source_path, set()).add(stored.doc_id)
            if not groups and not is_public(stored.groups):
                restricted[stored.doc_id] = stored.groups
        kept: set[str] = set()  # doc ids that still exist at their source (pruning spares them)
        claimed: dict[str, str] = {}  # doc id → file, to catch two files that map to one id
        for path, root in tqdm(files, desc="ingest", unit="file", disable=not show, leave=False):
            try:
                result = load_file(path, root)
            except LoadError as exc:
                summary.failed += 1
                summary.problems.append(f"{path}: {exc}")
                # The file still exists: whatever it contributed before must survive a prune.
                kept.update(ids_by_source.get(str(path.resolve()), set()))
                continue
            summary.problems.extend(f"{path}: {p}" for p in result.problems)
            docs: list[SourceDocument] = []
            for doc in result.documents:
                if doc.doc_id in claimed and claimed[doc.doc_id] != str(path):
                    summary.failed += 1
                    summary.problems.append(f"{path}: doc_id {doc.doc_id!r} already used by {claimed[doc.doc_id]}")
                    continue
                claimed[doc.doc_id] = str(path)
                if tags:
                    doc.tags = sorted({*doc.tags, *tags})
                if groups:
                    doc.groups = list(groups)
                docs.append(doc)
                kept.add(doc.doc_id)
            self._store_changed(docs, summary, known, restricted)
            if docs and path.suffix.lower() not in JSONL:
                renamed = ids_by_source.get(str(path.resolve()), set()) - {d.doc_id for d in docs}
                if renamed:
                    self.store.delete_documents(sorted(renamed))
                    for old_id in renamed:
                        known.pop(old_id, None)
        if prune:
            summary.removed = self._prune(roots, kept)
        summary.seconds = time.perf_counter() - started
        return summary

    def _prune(self, roots: list[Path], kept: set[str]) -> int:
        """Delete documents that came from under these roots but whose source is gone."""
        prefixes = [str(r.resolve()) for r in roots]
        stale = []
        for doc in self.store.documents():
            if doc.doc_id in kept or not doc.source_path:
                continue
            if any(doc.source_path == p or doc.source_path.startswith(p.rstrip("/") + "/") for p in prefixes):
                stale.append(doc.doc_id)
        return self.store.delete_documents(stale) if stale else 0
