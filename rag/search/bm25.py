"""BM25 over a handful of candidate sentences, with the statistics of the whole store.

SQLite's FTS5 ranks whole tables; restricting it to a few hundred candidate sentences was slower than scoring
them here. Terms are stemmed with the English Snowball stemmer; document frequencies and lengths come from the
store, so a sentence scores the same whichever candidates it is compared with.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import snowballstemmer

from rag.search.terms import question_terms, tokens

K1, B = 1.2, 0.75
# A Snowball stemmer keeps its working state on the object: shared by the bot's turn threads it fails now and then
# (IndexError) or, worse, quietly returns another word's stem. One per thread.
_local = threading.local()


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def stemmed(text: str) -> list[str]:
    """Every token of a text, lowercased and stemmed (function words included: they count in the length)."""
    return [stem(t.split("'")[0]) for t in tokens(text) if t.split("'")[0]]


def query_stems(question: str) -> list[str]:
    return list(dict.fromkeys(stem(t) for t in question_terms(question)))


def idf(n_docs: int, df: int) -> float:
    """Okapi IDF, floored just above zero so that very common words never subtract."""
    return max(math.log((n_docs - df + 0.5) / (df + 0.5)), 1e-6)


def bm25_scores(terms: Sequence[str], fields: Sequence[tuple[Sequence[str], Sequence[str]]],
                df: dict[str, int], n_docs: int, avg_len: float,
                weights: tuple[float, float] = (2.0, 1.0)) -> np.ndarray:
    """Score (head tokens, body tokens) pairs: term frequency weighted per field, length over both fields."""
    scores = np.zeros(len(fields))
    if not terms or not fields or n_docs == 0:
        return scores
    idfs = {t: idf(n_docs, df.get(t, 0)) for t in terms if df.get(t, 0) > 0}
    if not idfs:
        return scores
    avg_len = avg_len or 1.0
    for i, (head, body) in enumerate(fields):
        norm = K1 * (1 - B + B * (len(head) + len(body)) / avg_len)
        total = 0.0
        for term, term_idf in idfs.items():
            freq = weights[0] * head.count(term) + weights[1] * body.count(term)
            if freq:
                total += term_idf * freq * (K1 + 1) / (freq + norm)
        scores[i] = total
    return scores


def _padded(joined: str) -> str:
    """" a  b  a " for "a b a": every stem between its own spaces, so str.count finds each one, side by side too."""
    return f" {joined.replace(' ', '  ')} "


def bm25_scores_joined(terms: Sequence[str], fields: Sequence[tuple[str, str]], df: dict[str, int], n_docs: int,
                       avg_len: float, weights: tuple[float, float] = (2.0, 1.0)) -> np.ndarray:
    """`bm25_scores` over space-joined stems, as the stores keep them: the same scores, bit for bit, counted in the
    strings instead of lists split from them (splitting every candidate sentence was a fifth of a search)."""
    scores = np.zeros(len(fields))
    if not terms or not fields or n_docs == 0:
        return scores
    idfs = {f" {t} ": idf(n_docs, df.get(t, 0)) for t in terms if df.get(t, 0) > 0}
    if not idfs:
        return scores
    avg_len = avg_len or 1.0
    for i, (head, body) in enumerate(fields):
        length = (head.count(" ") + 1 if head else 0) + (body.count(" ") + 1 if body else 0)
        norm = K1 * (1 - B + B * length / avg_len)
        padded_head, padded_body = _padded(head), _padded(body)
        total = 0.0
        for term, term_idf in idfs.items():
            freq = weights[0] * padded_head.count(term) + weights[1] * padded_body.count(term)
            if freq:
                total += term_idf * freq * (K1 + 1) / (freq + norm)
        scores[i] = total
    return scores
