"""Sentence blocks: BM25 over stored term ids gives the joined-stems scores bit for bit; blocks round-trip."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rag.search.bm25 import bm25_scores_joined
from rag.search.sentence_blocks import Candidates, bm25_block_scores, build_block, dequantize, quantize
from rag.search.sentences import SentenceEvidence, rank_sentences


def test_block_scores_equal_the_joined_stems_scores_bit_for_bit() -> None:
    """Repeated and neighbouring terms, empty heads and bodies, terms missing from the store, several blocks."""
    rng = random.Random(21)
    vocab = [f"w{i}" for i in range(25)] + ["a", "aa", "aaa"]
    for n in range(200):
        ids = {t: i + (7 if n % 2 else 65_530) for i, t in enumerate(vocab)}  # half: ids past uint16 in some blocks
        blocks, fields = [], []
        for b in range(rng.randint(1, 4)):
            sentences = [(rng.choices(vocab, k=rng.randint(0, 6)), rng.choices(vocab, k=rng.randint(0, 30)))
                         for _ in range(rng.randint(1, 12))]
            fields += [(" ".join(h), " ".join(body)) for h, body in sentences]
            blocks.append(build_block([f"s{b}.{i // 3}" for i in range(len(sentences))],
                                      [[ids[t] for t in h] for h, _ in sentences],
                                      [[ids[t] for t in body] for _, body in sentences],
                                      np.ones((len(sentences), 4))))
        terms = rng.sample(vocab, 6)
        df = {t: rng.randint(0, 40) for t in vocab}
        n_docs, avg_len = rng.randint(40, 200), rng.uniform(5, 30)
        expected = bm25_scores_joined(terms, fields, df, n_docs, avg_len)
        got = bm25_block_scores([ids[t] for t in terms], Candidates.join(blocks, 4),
                                {ids[t]: n for t, n in df.items()}, n_docs, avg_len)
        assert np.array_equal(got, expected)


def test_blocks_join_into_flat_arrays() -> None:
    vectors = np.random.default_rng(3).normal(size=(4, 8)).astype(np.float32)
    first = build_block(["p1", "p1", "p2"], [[1], [1], [2, 3]], [[4, 5], [], [6]], vectors[:3])
    second = build_block(["q1"], [[]], [[9]], vectors[3:])
    both = Candidates.join([first, second], 8)
    assert both.subs == ["p1", "p2", "q1"]
    assert both.paragraph_of_sentence.tolist() == [0, 0, 1, 2] and both.chunk_of_sentence.tolist() == [0, 0, 0, 1]
    assert both.chunk_of_paragraph.tolist() == [0, 0, 1]
    assert both.tokens.tolist() == [1, 4, 5, 1, 2, 3, 6, 9]
    assert both.head_lens.tolist() == [1, 1, 2, 0] and both.body_lens.tolist() == [2, 0, 1, 1]
    assert [sorted(t) for t in both.sentence_terms()] == [[1, 4, 5], [1], [2, 3, 6], [9]]
    peaks = np.abs(vectors).max(axis=1, keepdims=True)
    assert np.all(np.abs(both.vectors - vectors) <= peaks / 254 + 1e-7)  # int8: within half a step of each row's scale
    query = np.ones(8, dtype=np.float32)
    sums = [both.vectors[:2].sum(axis=0), both.vectors[2], both.vectors[3]]  # the paragraphs' sentences summed
    assert np.allclose(both.paragraph_sims(both.vectors @ query), [s @ query / np.linalg.norm(s) for s in sums],
                       rtol=1e-5)
    assert Candidates.join([first], None).vectors.shape == (0, 0)  # not read when not needed
    assert len(first.tokens) == 2 * 6  # ids that fit in 16 bits are stored in 16 bits; p1's head once
    large = build_block(["r1"], [[70_000]], [[1, 70_001]], vectors[:1])
    assert len(large.tokens) == 4 * 3
    mixed = Candidates.join([first, large, second], 8)
    assert mixed.tokens.tolist() == [1, 4, 5, 1, 2, 3, 6, 70_000, 1, 70_001, 9]


def test_quantized_rows_keep_their_direction() -> None:
    vectors = np.random.default_rng(5).normal(size=(50, 256)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    quantized, scales = quantize(np.vstack([vectors, np.zeros((1, 256), np.float32)]))
    back = dequantize(quantized, scales)
    assert quantized.dtype == np.int8 and np.abs(quantized).max() == 127
    cosines = np.sum(back[:50] * vectors, axis=1) / np.linalg.norm(back[:50], axis=1)
    assert np.all(cosines > 0.999)  # the direction kept to 0.1%
    assert not back[50].any()  # a zero vector stays zero


def test_a_sentence_too_long_to_index_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="65,535 words"):
        build_block(["p"], [[]], [[1] * 70_000], np.zeros((1, 4)))


def _reference(rows: list[tuple[str, str]], scores: np.ndarray, matrix: np.ndarray) -> SentenceEvidence:
    """What rank_sentences computed a sentence at a time before it ran on arrays."""
    query = np.ones(matrix.shape[1], dtype=np.float32)
    order = np.argsort(-scores, kind="stable")
    subs = list(dict.fromkeys(s for _, s in rows))
    best = {s: max(scores[i] for i, r in enumerate(rows) if r[1] == s) for s in subs}
    sums = {s: matrix[[i for i, r in enumerate(rows) if r[1] == s]].sum(axis=0) for s in subs}
    sims = {s: float(sums[s] @ query) / float(np.linalg.norm(sums[s])) for s in subs}
    return SentenceEvidence(
        list(dict.fromkeys(rows[i][0] for i in order if scores[i] > 0)),
        list(dict.fromkeys(rows[i][0] for i in np.argsort(-(matrix @ query), kind="stable"))),
        [s for s in sorted(subs, key=lambda s: -best[s]) if best[s] > 0],
        sorted(subs, key=lambda s: -sims[s]), {s: c for c, s in rows})


def test_ranking_on_arrays_is_the_sentence_by_sentence_ranking() -> None:
    rng = random.Random(4)
    for _ in range(100):
        rows = [(f"c{c}", f"c{c}.{p}") for c in range(rng.randint(1, 5)) for p in range(rng.randint(1, 4))
                for _ in range(rng.randint(1, 3))]
        scores = np.array([rng.choice([0.0, 0.0, rng.random() * 5, 1.5]) for _ in rows])  # ties and zeros
        matrix = np.array([[rng.random() for _ in range(6)] for _ in rows], dtype=np.float32)
        assert rank_sentences(rows, scores, matrix, np.ones(6, dtype=np.float32)) == _reference(rows, scores, matrix)
