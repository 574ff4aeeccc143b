"""How well the retrieved sections cover the question: below a calibrated threshold the bot says it does not
know rather than quote something loosely related (calibration in benchmarks/RESULTS.md)."""

from __future__ import annotations

from rag.bm25 import query_stems, stemmed
from rag.models import SearchHit

SECTIONS_CHECKED = 3


def coverage(question: str, hits: list[SearchHit]) -> float:
    """Best share, over the top sections, of the question's topic words (stemmed) found in the section's title,
    headings or text. Rank-fusion scores cannot say this: they only order candidates."""
    terms = set(query_stems(question))
    if not terms:
        return 0.0
    best = 0.0
    for hit in hits[:SECTIONS_CHECKED]:
        words = set(stemmed(hit.chunk.index_text))
        best = max(best, len(terms & words) / len(terms))
    return best
