"""How well the retrieved sections cover the question: below a calibrated threshold the bot says it does not
know rather than quote something loosely related (calibration in benchmarks/RESULTS.md)."""

from __future__ import annotations

from rag.bm25 import query_stems, stemmed
from rag.models import SearchHit

SECTIONS_CHECKED = 3


def evidence(question: str, standalone: str, hits: list[SearchHit]) -> float:
    """Coverage of the standalone question, or of the question as asked when that is better: a follow-up
    rewritten with earlier questions has more words than any one section covers, yet its own words may all be
    there. A question of fewer than two topic words cannot vouch for itself."""
    own = coverage(question, hits) if len(set(query_stems(question))) >= 2 else 0.0
    return max(own, coverage(standalone, hits)) if standalone != question else coverage(question, hits)


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
