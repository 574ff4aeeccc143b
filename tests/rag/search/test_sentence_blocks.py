"""Sentence blocks: BM25 over stored term ids gives the joined-stems scores bit for bit; blocks round-trip."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rag.search.bm25 import bm25_scores_joined
from rag.search.sentence_blocks import VECTOR_DTYPE, SentenceBlock, bm25_block_scores, build_block


def test_block_scores_equal_the_joined_stems_scores_bit_for_bit() -> None:
    """Repeated and neighbouring terms, empty heads and bodies, terms missing from the store, several blocks."""
    rng = random.Random(21)
    vocab = [f"w{i}" for i in range(25)] + ["a", "aa", "aaa"]
    ids = {t: i + 7 for i, t in enumerate(vocab)}
    for _ in range(200):
        blocks, fields = [], []
        for b in range(rng.randint(1, 4)):
            sentences = [(rng.choices(vocab, k=rng.randint(0, 6)), rng.choices(vocab, k=rng.randint(0, 30)))
                         for _ in range(rng.randint(1, 12))]
            fields += [(" ".join(h), " ".join(body)) for h, body in sentences]
            blocks.append(build_block([f"s{b}.{i // 3}" for i in range(len(sentences))],
                                      [[ids[t] for t in h] for h, _ in sentences],
                                      [[ids[t] for t in body] for _, body in sentences],
                                      np.zeros((len(sentences), 4))))
        terms = rng.sample(vocab, 6)
        df = {t: rng.randint(0, 40) for t in vocab}
        n_docs, avg_len = rng.randint(40, 200), rng.uniform(5, 30)
        expected = bm25_scores_joined(terms, fields, df, n_docs, avg_len)
        got = bm25_block_scores([ids[t] for t in terms], blocks, {ids[t]: n for t, n in df.items()}, n_docs, avg_len)
        assert np.array_equal(got, expected)


def test_block_round_trips_through_its_stored_form() -> None:
    vectors = np.random.default_rng(3).normal(size=(3, 8)).astype(np.float32)
    block = build_block(["p1", "p1", "p2"], [[1], [1], [2, 3]], [[4, 5], [], [6]], vectors)
    back = SentenceBlock.decode(*block.encode())
    assert back.subs == ["p1", "p2"] and back.owner.tolist() == [0, 0, 1]
    assert back.tokens.tolist() == [1, 4, 5, 1, 2, 3, 6]
    assert back.head_lens.tolist() == [1, 1, 2] and back.body_lens.tolist() == [2, 0, 1]
    assert back.vectors.dtype == VECTOR_DTYPE and back.vectors.shape == (3, 8)
    assert np.allclose(back.vectors, vectors, atol=2e-3)  # float16: half the bytes, ~3 significant digits


def test_a_sentence_too_long_to_index_is_refused_clearly() -> None:
    with pytest.raises(ValueError, match="65,535 words"):
        build_block(["p"], [[]], [[1] * 70_000], np.zeros((1, 4)))
