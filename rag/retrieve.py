"""Hybrid retrieval: several vector and lexical rankings fused by reciprocal rank fusion.

Four rankings of section chunks are fused, each catching what the others miss:
- vector similarity of the question to the whole section (title + heading path + text),
- vector similarity to the section's title and heading path alone (what the section is about),
- BM25 over sections, with words in the title and headings weighted 8× those in the body,
- BM25 over single paragraphs (a precise paragraph lifts its section even when the section is long).
Measured on doc2dial first turns, each of the four adds recall (see benchmarks/RESULTS.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from rag.embedding import Embedder
from rag.models import SearchHit
from rag.store import EmbeddingMismatch, Filters, KnowledgeStore

log = logging.getLogger(__name__)

# Smaller than the customary 60: with four rankings, agreement at the very top should dominate
# (k = 5 gave the best first-turn recall on doc2dial; 60 cost 0.06 Recall@3).
RRF_K = 5


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None, k: int = RRF_K
) -> list[tuple[str, float]]:
    """Fuse ranked id lists: score(id) = Σ weight / (k + rank), rank starting at 1. Ties keep first-seen order."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])


class Retriever:
    """Finds the section chunks that best match a question, with optional tag and group filters."""

    def __init__(self, store: KnowledgeStore, embedder: Embedder, candidates: int = 50, rrf_k: int = RRF_K) -> None:
        self.store = store
        self.embedder = embedder
        self.candidates = candidates
        self.rrf_k = rrf_k

    def search(self, query: str, k: int = 5, tags: list[str] | None = None,
               groups: list[str] | None = None) -> list[SearchHit]:
        query = query.strip()
        if not query:
            return []
        filters = Filters.of(tags, groups)
        n = max(self.candidates, k)
        by_section = [cid for cid, _ in self.store.lexical_search(query, n, filters, unit="chunk")]
        by_paragraph = [cid for cid, _ in self.store.lexical_search(query, n, filters, unit="paragraph")]
        try:
            vector = self.embedder.embed_query(query)
            by_text = [cid for cid, _ in self.store.vector_search(vector, n, filters, field="text")]
            by_head = [cid for cid, _ in self.store.vector_search(vector, n, filters, field="head")]
        except EmbeddingMismatch:
            raise  # a wrong model gives meaningless neighbours: the admin must re-ingest
        except Exception as exc:  # noqa: BLE001 - a failing embedder must not leave the navigator with nothing
            log.warning("query embedding failed (%s); using lexical search only", exc)
            by_text, by_head = [], []
        fused = reciprocal_rank_fusion([by_text, by_head, by_section, by_paragraph], k=self.rrf_k)[:k]
        vrank = {cid: i for i, cid in enumerate(by_text, start=1)}
        lrank = {cid: i for i, cid in enumerate(by_section, start=1)}
        chunks = {c.chunk_id: c for c in self.store.get_chunks([cid for cid, _ in fused])}
        return [SearchHit(chunks[cid], score, vrank.get(cid), lrank.get(cid)) for cid, score in fused if cid in chunks]
