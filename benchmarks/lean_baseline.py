"""The lean alternative issue 21 measures Navibot against: bm25s (sparse BM25 matrices) + exact numpy vectors, fused
by reciprocal rank fusion, over the same chunks and the very vectors exported from a Navibot store.

Built into a folder next to the store (bm25s's saved index + a .npy of the vectors), opened memory-mapped, so its
size, build time and first search after opening are measured as for Navibot. The vectors are exported, not
embedded again: its build time is indexing and writing only (Navibot's includes embedding).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import bm25s  # type: ignore[import-untyped]
import numpy as np
import snowballstemmer

from rag.documents import Chunk
from rag.search.embedding import Embedder
from rag.search.sqlite_store import SQLiteKnowledgeStore

CANDIDATES = 50
RRF_K = 60
_STEMMER = snowballstemmer.stemmer("english")


def _tokens(texts: list[str]) -> list[list[str]]:
    tokenized: list[list[str]] = bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER.stemWords, return_ids=False,
                                               show_progress=False)
    return tokenized


def all_chunks(store: SQLiteKnowledgeStore, ids: list[str]) -> list[Chunk]:
    chunks: list[Chunk] = []
    for start in range(0, len(ids), 500):
        chunks += store.get_chunks(ids[start:start + 500])
    return chunks


def build(store: SQLiteKnowledgeStore, folder: Path) -> float:
    """Index the store's chunks (title, headings and text, as Navibot indexes them) into `folder`; seconds."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    ids, matrix = store.section_vectors()
    texts = [c.index_text for c in all_chunks(store, ids)]
    started = time.perf_counter()
    index = bm25s.BM25()
    index.index(_tokens(texts), show_progress=False)
    index.save(str(folder / "bm25s"), show_progress=False)
    np.save(folder / "vectors.npy", np.ascontiguousarray(matrix, dtype=np.float32))
    (folder / "ids.json").write_text(json.dumps(ids), encoding="utf-8")
    return time.perf_counter() - started


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@dataclass(slots=True)
class LeanBaseline:
    index: bm25s.BM25
    vectors: np.ndarray
    ids: list[str]
    embedder: Embedder

    @classmethod
    def open(cls, folder: Path, embedder: Embedder) -> LeanBaseline:
        return cls(bm25s.BM25.load(str(folder / "bm25s"), mmap=True, show_progress=False),
                   np.load(folder / "vectors.npy", mmap_mode="r"),
                   json.loads((folder / "ids.json").read_text(encoding="utf-8")), embedder)

    def search(self, query: str, k: int = 5) -> list[str]:
        """Top-k chunk ids: BM25 top 50 and vector top 50, fused by RRF (k=60)."""
        rankings: list[list[int]] = []
        tokens = _tokens([query])
        if tokens[0]:
            n = min(CANDIDATES, len(self.ids))
            docs, scores = self.index.retrieve(tokens, k=n, show_progress=False, n_threads=1)
            rankings.append([int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0])
        scores_v = np.asarray(self.vectors @ self.embedder.embed_query(query))
        n = min(CANDIDATES, len(scores_v))
        top = np.argpartition(-scores_v, n - 1)[:n]
        rankings.append(top[np.argsort(-scores_v[top], kind="stable")].tolist())
        fused: dict[int, float] = {}
        for ranking in rankings:
            for rank, doc in enumerate(ranking, start=1):
                fused[doc] = fused.get(doc, 0.0) + 1.0 / (RRF_K + rank)
        return [self.ids[d] for d in sorted(fused, key=lambda d: -fused[d])[:k]]
