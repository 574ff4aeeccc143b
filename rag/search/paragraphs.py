"""Paragraphs (sub-chunks) of the retrieved sections, best first: what a navigator would quote.

Retrieval ranks sections; a long regulation section holds dozens of paragraphs, and the one that answers is
rarely the first. The Retriever ranks every candidate's paragraphs from their stored sentences (rag/search/retrieve.py)
and its hits carry that ranking, used as is. Hits without it are ranked here: each paragraph of the best few
sections by BM25 of the question over its own headings and text (document frequencies over the candidates) and
by vector similarity, the two rankings fused with the section's own rank, so a strong paragraph of the second
section can beat a weak one of the first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from rag.documents import SearchHit, SubChunk
from rag.search.bm25 import bm25_scores, query_stems, stemmed
from rag.search.embedding import Embedder
from rag.search.retrieve import EXPANSION_VECTOR_WEIGHT, reciprocal_rank_fusion

SECTIONS_READ = 5
RRF_K = 5
# The section's rank counts as a third ranking, lighter than the paragraph's own two.
SECTION_WEIGHT = 1.0
HEAD_WEIGHT = 2.0  # BM25 weight of a paragraph's heading words against its body's
EXPANSION_WEIGHT = EXPANSION_VECTOR_WEIGHT  # glossary terms in the query vector, as the Retriever weighs them


@dataclass(frozen=True, slots=True)
class RankedParagraph:
    sub: SubChunk
    section_rank: int  # rank of its section chunk among the hits, from 0
    score: float


def _heading(sub: SubChunk) -> str:
    return " ".join(sub.heading_path)


def rank_paragraphs(query: str, hits: list[SearchHit], embedder: Embedder | None = None,
                    sections: int = SECTIONS_READ, expansion: str = "") -> list[RankedParagraph]:
    """The paragraphs of the top `sections` hits, best first. Hits from the Retriever carry its ranking of
    every candidate paragraph, which is used as is; otherwise (hits from elsewhere) each paragraph is scored here.
    `expansion`: the policy terms the glossary adds to the question (rag/search/glossary.py), searched with it."""
    subs = [(rank, sub) for rank, hit in enumerate(hits[:sections]) for sub in hit.chunk.subchunks
            if sub.text.strip()]
    if not subs:
        return []
    if all(hit.paragraph_ranks for hit in hits[:sections]):
        return _as_retrieved(hits[:sections], subs)
    ids = [sub.sub_id for _, sub in subs]
    terms = query_stems(f"{query} {expansion}")
    fields = [(stemmed(_heading(sub)), stemmed(sub.text)) for _, sub in subs]
    df: dict[str, int] = {}
    for head, body in fields:
        for term in set(head) | set(body):
            df[term] = df.get(term, 0) + 1
    avg_len = sum(len(h) + len(b) for h, b in fields) / len(fields)
    lexical = bm25_scores(terms, fields, df, len(fields), avg_len, weights=(HEAD_WEIGHT, 1.0))
    rankings = [[ids[i] for i in np.argsort(-lexical, kind="stable") if lexical[i] > 0]]
    weights = [1.0]
    if embedder is not None:
        try:
            vectors = embedder.embed_documents([f"{_heading(sub)}\n{sub.text}" for _, sub in subs])
            queries = np.asarray(embedder.embed_queries([query, expansion] if expansion else [query]),
                                 dtype=np.float32)  # the question and its glossary terms in one call
            vector = queries[0] + EXPANSION_WEIGHT * queries[1] if expansion else queries[0]
            sims = vectors @ vector
            rankings.append([ids[i] for i in np.argsort(-sims, kind="stable")])
            weights.append(1.0)
        except Exception:  # noqa: BLE001 - a failing embedder leaves the lexical and section order
            pass
    rankings.append(ids)  # section order, then reading order
    weights.append(SECTION_WEIGHT)
    fused = dict(reciprocal_rank_fusion(rankings, weights, k=RRF_K))
    by_id = {sub.sub_id: (rank, sub) for rank, sub in subs}
    return [RankedParagraph(by_id[i][1], by_id[i][0], fused[i]) for i in sorted(fused, key=lambda x: -fused[x])]


def _as_retrieved(hits: list[SearchHit], subs: list[tuple[int, SubChunk]]) -> list[RankedParagraph]:
    """The paragraphs in the order retrieval ranked them among all the candidates' paragraphs (rag/search/retrieve.py:
    each paragraph's sentences, by BM25 and by their stored vectors, and its section's rank); nothing is embedded
    again. A paragraph without a sentence (none of its words indexed) goes last, in reading order."""
    ranks = {sub_id: rank for hit in hits for sub_id, rank in hit.paragraph_ranks.items()}
    last = len(ranks) + len(subs)
    order = sorted(range(len(subs)), key=lambda i: ranks.get(subs[i][1].sub_id, last + i))
    return [RankedParagraph(subs[i][1], subs[i][0], 1.0 / (1 + position)) for position, i in enumerate(order)]


# A follow-up asks for what the previous answer did not say, yet it is searched with the thread's words, so the
# paragraphs that answer quoted come first again: on the read regulation sets the answer re-quoted one of them for 63
# of 141 follow-ups, 37 of which then cited no gold paragraph, while the gold paragraph was among them for only 14.
# They move READ_PLACES down the paragraph ranking, below what the navigator has not seen; the extractive answerer
# also scores them lower (rag/answer/extractive.py READ_PENALTY). Figures in benchmarks/RESULTS.md (session 17).
READ_PLACES = 3


def read_later(hits: list[SearchHit], read: frozenset[str], places: int = READ_PLACES) -> list[SearchHit]:
    """The hits, with each paragraph in `read` (sub ids the navigator has already been shown) moved `places` down
    the retrieval's paragraph ranking (SearchHit.paragraph_ranks). Unchanged when nothing was read or the hits
    carry no paragraph ranking."""
    ranks = {sub: rank for hit in hits for sub, rank in hit.paragraph_ranks.items()}
    if not read or not read & ranks.keys():
        return hits
    key = {sub: rank + places + 0.5 if sub in read else float(rank) for sub, rank in ranks.items()}
    order = {sub: position for position, sub in enumerate(sorted(key, key=key.__getitem__))}
    return [replace(hit, paragraph_ranks={sub: order[sub] for sub in hit.paragraph_ranks}) for hit in hits]

