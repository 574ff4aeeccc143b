"""A section's sentences as one stored block: term ids, lengths, paragraph of each sentence, and vectors.

Sentence rows (one per sentence, stems as text, float32 vectors) were 61% of a store and were read ~1,300 rows at
a time per question. One block per section holds the same: its sentences' stems as integer ids of the store's
vocabulary, and their vectors as float16 (half the bytes; cfr273-dev and doc2dial figures in benchmarks/RESULTS.md).
BM25 over the candidates is then a few numpy passes instead of a string count per sentence and term.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag.search.bm25 import K1, B, idf

VECTOR_DTYPE = np.float16


@dataclass(frozen=True, slots=True)
class SentenceBlock:
    """The sentences of one section, in reading order."""

    subs: list[str]  # the section's paragraphs (sub_ids) that have sentences, in order
    owner: np.ndarray  # uint16: index into `subs` of each sentence's paragraph
    tokens: np.ndarray  # int32: each sentence's head term ids, then its body term ids, sentence after sentence
    head_lens: np.ndarray  # uint16 per sentence
    body_lens: np.ndarray  # uint16 per sentence
    vectors: np.ndarray  # VECTOR_DTYPE, one row per sentence

    def encode(self) -> tuple[str, bytes, bytes, bytes, bytes, bytes]:
        return (json.dumps(self.subs), self.owner.astype(np.uint16).tobytes(), self.tokens.astype(np.int32).tobytes(),
                self.head_lens.astype(np.uint16).tobytes(), self.body_lens.astype(np.uint16).tobytes(),
                np.ascontiguousarray(self.vectors, dtype=VECTOR_DTYPE).tobytes())

    @classmethod
    def decode(cls, subs: str, owner: bytes, tokens: bytes, head_lens: bytes, body_lens: bytes,
               vectors: bytes) -> SentenceBlock:
        count = len(owner) // 2
        matrix = np.frombuffer(vectors, dtype=VECTOR_DTYPE)
        return cls(json.loads(subs), np.frombuffer(owner, dtype=np.uint16), np.frombuffer(tokens, dtype=np.int32),
                   np.frombuffer(head_lens, dtype=np.uint16), np.frombuffer(body_lens, dtype=np.uint16),
                   matrix.reshape(count, -1) if count else matrix.reshape(0, 0))

    @property
    def lengths(self) -> np.ndarray:
        return self.head_lens.astype(np.int64) + self.body_lens.astype(np.int64)


def build_block(sub_ids: Sequence[str], heads: Sequence[Sequence[int]], bodies: Sequence[Sequence[int]],
                vectors: np.ndarray) -> SentenceBlock:
    """A block from each sentence's paragraph id, head and body term ids, and vector (all in reading order)."""
    subs = list(dict.fromkeys(sub_ids))
    index = {sub: i for i, sub in enumerate(subs)}
    tokens = [t for head, body in zip(heads, bodies, strict=True) for t in (*head, *body)]
    if any(len(h) > 0xFFFF or len(b) > 0xFFFF for h, b in zip(heads, bodies, strict=True)):
        raise ValueError("a sentence of more than 65,535 words cannot be indexed")
    return SentenceBlock(subs, np.array([index[s] for s in sub_ids], dtype=np.uint16),
                         np.array(tokens, dtype=np.int32), np.array([len(h) for h in heads], dtype=np.uint16),
                         np.array([len(b) for b in bodies], dtype=np.uint16), np.asarray(vectors, dtype=VECTOR_DTYPE))


def bm25_block_scores(term_ids: Sequence[int], blocks: Sequence[SentenceBlock], df: dict[int, int], n_docs: int,
                      avg_len: float, weights: tuple[float, float] = (2.0, 1.0)) -> np.ndarray:
    """`rag.search.bm25.bm25_scores_joined` over the blocks' sentences (one score each, in order), bit for bit: the
    same terms in the same order, the same float64 arithmetic, a sentence at a time replaced by numpy arrays."""
    n = sum(len(b.head_lens) for b in blocks)
    scores = np.zeros(n)
    if not term_ids or n == 0 or n_docs == 0:
        return scores
    idfs = {t: idf(n_docs, df.get(t, 0)) for t in term_ids if df.get(t, 0) > 0}
    if not idfs:
        return scores
    avg_len = avg_len or 1.0
    tokens = np.concatenate([b.tokens for b in blocks])
    head_lens = np.concatenate([b.head_lens for b in blocks]).astype(np.int64)
    body_lens = np.concatenate([b.body_lens for b in blocks]).astype(np.int64)
    per_sentence = head_lens + body_lens
    sentence_of = np.repeat(np.arange(n), per_sentence)
    starts = np.cumsum(per_sentence) - per_sentence
    in_head = (np.arange(len(tokens)) - np.repeat(starts, per_sentence)) < np.repeat(head_lens, per_sentence)
    wanted = np.isin(tokens, np.fromiter(idfs, dtype=np.int32, count=len(idfs)))
    tokens, sentence_of, in_head = tokens[wanted], sentence_of[wanted], in_head[wanted]
    norm = K1 * (1 - B + B * per_sentence.astype(np.float64) / avg_len)
    for term, term_idf in idfs.items():
        is_term = tokens == term
        head = np.bincount(sentence_of[is_term & in_head], minlength=n)
        body = np.bincount(sentence_of[is_term & ~in_head], minlength=n)
        freq = weights[0] * head + weights[1] * body
        scores += term_idf * freq * (K1 + 1) / (freq + norm)
    return scores
