"""Per-paragraph features of the candidate sections' sentences, for the learned paragraph ranking
(rag/search/paragraph_ranker.py).

Read from arrays the sentence step already holds (each sentence's term ids, BM25 and vector similarity): numpy
over the candidates' tokens, nothing embedded or fetched again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rag.search.bm25 import query_stems
from rag.search.sentence_blocks import Candidates

# Column order of `paragraph_features`.
FEATURES = ("bm25_best", "bm25_sum", "coverage", "proximity", "vector_mean", "ordinal", "length", "one_sentence",
            "glossary", "links")
PROXIMITY_WINDOW = 3  # two query words at most this many positions apart (same sentence) count as a phrase


def paragraph_features(sentences: Candidates, scores: np.ndarray, paragraph_sims: np.ndarray | None,
                       term_ids: Sequence[int], idfs: Mapping[int, float],
                       policy_terms: Sequence[Sequence[int]] = (),
                       links: Sequence[tuple[np.ndarray, np.ndarray]] = (),
                       linked: np.ndarray | None = None) -> np.ndarray:
    """One row per paragraph of `sentences.subs`, columns as FEATURES: its best and its summed sentence BM25 (a
    paragraph whose sentences share out the query's words), the idf-weighted share of the query's terms its
    text holds, how often two query words stand close together in it, the similarity of its mean sentence
    vector (0 without a query vector), its place in its section (legal text states the general rule first), its
    length in words (log) and whether it is one sentence (a lead-in or a list item, as the store splits).
    `term_ids`: the question's own terms (not the glossary's), `idfs` their idf. Last, the share of the glossary's
    policy terms (`policy_terms`, each as its words' term ids) whose every word its text holds: the glossary names a
    rule in the words of the paragraph that states it ("considered an application for recertification"), words
    that bag-of-words BM25 also credits, one by one, to each sibling that uses any of them. Then the learned word
    links (rag/search/word_links.py): `links` holds, per question word that has any, its linked words' term ids
    (sorted) and weights; a paragraph scores the sum over those question words of the strongest link its text
    holds, if `linked` (one flag per paragraph: its section is in the text the links were learned on) allows."""
    n_paragraphs = len(sentences.subs)
    out = np.zeros((n_paragraphs, len(FEATURES)))
    if n_paragraphs == 0 or len(sentences) == 0:
        return out
    owner = sentences.paragraph_of_sentence
    scores = np.asarray(scores, dtype=np.float64)
    best = np.full(n_paragraphs, -np.inf)
    np.maximum.at(best, owner, scores)
    out[:, 0] = np.where(np.isfinite(best), best, 0.0)
    out[:, 1] = np.bincount(owner, weights=scores, minlength=n_paragraphs)
    terms = np.unique(np.fromiter((t for t in term_ids if idfs.get(t, 0.0) > 0), dtype=np.int64))
    if len(terms):
        body, body_sentence = _in_bodies(sentences, terms)
        # each (paragraph, query term) once, as one integer key
        keys = np.unique(owner[body_sentence] * len(terms) + np.searchsorted(terms, sentences.tokens[body]))
        if len(keys):
            weights = np.fromiter((idfs[int(t)] for t in terms), dtype=np.float64, count=len(terms))
            covered = np.bincount(keys // len(terms), weights=weights[keys % len(terms)], minlength=n_paragraphs)
            out[:, 2] = covered / weights.sum()
        if len(body) > 1:
            close = ((body[1:] - body[:-1]) <= PROXIMITY_WINDOW) & (body_sentence[1:] == body_sentence[:-1]) & (
                sentences.tokens[body[1:]] != sentences.tokens[body[:-1]])
            out[:, 3] = np.log1p(np.bincount(owner[body_sentence[1:][close]], minlength=n_paragraphs))
    if paragraph_sims is not None and len(paragraph_sims) == n_paragraphs:
        out[:, 4] = paragraph_sims
    sections = sentences.chunk_of_paragraph
    first = np.r_[0, np.flatnonzero(sections[1:] != sections[:-1]) + 1]
    out[:, 5] = np.log1p(np.arange(n_paragraphs) - np.repeat(first, np.diff(np.r_[first, n_paragraphs])))
    out[:, 6] = np.log1p(np.bincount(owner, weights=sentences.body_lens, minlength=n_paragraphs))
    out[:, 7] = np.bincount(owner, minlength=n_paragraphs) <= 1  # each paragraph has at least one sentence
    if policy_terms:
        out[:, 8] = _policy_share(sentences, policy_terms, n_paragraphs)
    if links and linked is not None and linked.any():
        out[:, 9] = np.where(linked, _link_score(sentences, links, n_paragraphs), 0.0)
    return out


def _link_score(sentences: Candidates, links: Sequence[tuple[np.ndarray, np.ndarray]], n_paragraphs: int) -> np.ndarray:
    """Per paragraph, the sum over the question words of the weight of the strongest linked word its body holds."""
    wanted = np.unique(np.concatenate([ids for ids, _ in links]))
    body, body_sentence = _in_bodies(sentences, wanted)
    out = np.zeros(n_paragraphs)
    if not len(body):
        return out
    weights = np.zeros((len(links), len(wanted)))  # question word x linked word
    for k, (ids, w) in enumerate(links):
        weights[k, np.searchsorted(wanted, ids)] = w
    paragraph = sentences.paragraph_of_sentence[body_sentence]
    order = np.argsort(paragraph, kind="stable")
    paragraph = paragraph[order]
    starts = np.flatnonzero(np.r_[True, paragraph[1:] != paragraph[:-1]])
    held = weights[:, np.searchsorted(wanted, sentences.tokens[body[order]])]  # each word's weight per occurrence
    out[paragraph[starts]] = np.maximum.reduceat(held, starts, axis=1).sum(axis=0)
    return out


def policy_term_ids(expansion: str, ids: Mapping[str, int]) -> list[list[int]]:
    """The glossary's policy terms of a search ("a; b c", rag/search/glossary.py Expansion.text), each as its words'
    term ids; a term with a word no stored sentence uses is held by no paragraph and left out."""
    return [[ids[t] for t in stems] for stems in map(query_stems, expansion.split(";"))
            if stems and all(t in ids for t in stems)]


def _member(tokens: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Whether each token id is one of `wanted` (sorted), by a lookup table over the ids up to the largest wanted:
    one pass over the tokens (np.isin sorts them: ~3 ms for the ~1,000 words a question's links point to in the
    candidates of a 10k-chunk store; its own "table" kind spans the tokens' whole range and was ~10x slower)."""
    if not len(wanted) or not len(tokens):
        return np.zeros(len(tokens), dtype=bool)
    table = np.zeros(int(wanted[-1]) + 2, dtype=bool)  # the last slot stands for every larger id
    table[wanted] = True
    held: np.ndarray = table[np.minimum(tokens, len(table) - 1)]
    return held


def _in_bodies(sentences: Candidates, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The token positions holding one of the term ids `wanted` (sorted) in a sentence's body, not its heading
    (headings are shared by siblings), and the sentence of each."""
    ends = np.cumsum(sentences.head_lens + sentences.body_lens)
    found = np.flatnonzero(_member(sentences.tokens, wanted))
    sentence_of = np.searchsorted(ends, found, side="right")
    starts = ends[sentence_of] - sentences.head_lens[sentence_of] - sentences.body_lens[sentence_of]
    in_body = found - starts >= sentences.head_lens[sentence_of]
    return found[in_body], sentence_of[in_body]


def _policy_share(sentences: Candidates, policy_terms: Sequence[Sequence[int]], n_paragraphs: int) -> np.ndarray:
    """Per paragraph, the share of `policy_terms` all of whose term ids occur in its body."""
    wanted = np.unique(np.fromiter((t for term in policy_terms for t in term), dtype=np.int64))
    body, body_sentence = _in_bodies(sentences, wanted)
    held = np.zeros((n_paragraphs, len(wanted)), dtype=bool)
    held[sentences.paragraph_of_sentence[body_sentence], np.searchsorted(wanted, sentences.tokens[body])] = True
    columns = [np.searchsorted(wanted, np.asarray(term, dtype=np.int64)) for term in policy_terms]
    return np.mean([held[:, c].all(axis=1) for c in columns], axis=0)
