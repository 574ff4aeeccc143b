"""How well the retrieved sections cover the question: below a calibrated threshold the bot says it does not
know rather than quote something loosely related (calibration in benchmarks/RESULTS.md)."""

from __future__ import annotations

import logging

from rag.answer.answerability import unanswerable_reason
from rag.documents import SearchHit
from rag.search.bm25 import query_stems, stemmed

log = logging.getLogger(__name__)

SECTIONS_CHECKED = 3
MIN_WORDS_FOUND = 2


def evidence(question: str, standalone: str, hits: list[SearchHit]) -> float:
    """Coverage of the standalone question, or of the question as asked when that is better: a follow-up
    rewritten with earlier questions has more words than any one section covers, yet its own words may all be
    there. A question of fewer than two topic words cannot vouch for itself. A question that asks for a fact the
    sections cannot hold (a phone number, this year's figure, how to get into another program) has none."""
    # The question as asked, and the standalone one only when it is not the thread's questions with this one
    # appended (then an earlier turn's request would count again).
    for text in [question] + ([standalone] if question.strip() not in standalone else []):
        reason = unanswerable_reason(text, hits)
        if reason:
            log.info("no evidence: the question %s", reason)
            return 0.0
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
        found = len(terms & set(stemmed(hit.chunk.index_text)))
        # One shared word is chance ("capital" of France in a page on capital gains): at least two, when the
        # question has two.
        if found >= min(MIN_WORDS_FOUND, len(terms)):
            best = max(best, found / len(terms))
    return best
