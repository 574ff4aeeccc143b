"""Store layout 3: in sentence blocks a paragraph's head stored once and `<chunk>.<n>` paragraph ids stored as n, and
postings in 4 bytes, read back as the same arrays as layout 2's, so scores are unchanged."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from rag.search.section_index import Posting
from rag.search.sentence_blocks import Candidates, StoredBlock, bm25_block_scores, build_block


def _layout_2(block: StoredBlock, heads: list[list[int]], bodies: list[list[int]], subs: str) -> StoredBlock:
    """The same block as layout 2 wrote it: every sentence's head and body, full paragraph ids."""
    ids = [t for h, b in zip(heads, bodies, strict=True) for t in (*h, *b)]
    dtype = np.uint16 if not ids or max(ids) <= 0xFFFF else np.int32
    return dataclasses.replace(block, tokens=np.array(ids, dtype=dtype).tobytes(), subs=subs, shared_heads=0)


def test_shared_heads_and_short_ids_read_back_as_layout_2_arrays() -> None:
    rng = random.Random(3)
    for n in range(300):
        blocks, old, chunk_ids = [], [], []
        for b in range(rng.randint(1, 5)):
            chunk_id = f"doc::{b}"
            heads, bodies, sub_ids = [], [], []
            for p in range(rng.randint(1, 4)):
                head = [rng.randint(0, 30) + (70_000 if n % 3 == 0 and b == 1 else 0)
                        for _ in range(rng.randint(0, 5))]
                for _ in range(rng.randint(1, 4)):
                    heads.append(head)
                    bodies.append([rng.randint(0, 30) for _ in range(rng.randint(0, 8))])
                    sub_ids.append(f"{chunk_id}.{p}" if p != 2 else f"other-{b}-{p}")
            vectors = np.random.default_rng(n).normal(size=(len(heads), 4)).astype(np.float32)
            block = build_block(sub_ids, heads, bodies, vectors, chunk_id)
            assert block.shared_heads == 1
            blocks.append(block)
            old.append(_layout_2(block, heads, bodies, build_block(sub_ids, heads, bodies, vectors).subs))
            chunk_ids.append(chunk_id)
        new_arrays, old_arrays = Candidates.join(blocks, 4, chunk_ids), Candidates.join(old, 4, chunk_ids)
        assert new_arrays.subs == old_arrays.subs
        for field in ("tokens", "head_lens", "body_lens", "paragraph_of_sentence", "vectors"):
            assert np.array_equal(getattr(new_arrays, field), getattr(old_arrays, field)), field
        terms = [*rng.sample(range(31), 5), 70_001]
        df = {t: rng.randint(1, 40) for t in range(31)} | {70_001: 3}
        assert np.array_equal(bm25_block_scores(terms, new_arrays, df, 500, 12.0),
                              bm25_block_scores(terms, old_arrays, df, 500, 12.0))


def test_heads_stored_once_per_paragraph_take_fewer_bytes() -> None:
    vectors = np.zeros((3, 4), dtype=np.float32)
    block = build_block(["c.0", "c.0", "c.1"], [[1, 2], [1, 2], [3]], [[4], [5], [6]], vectors, "c")
    assert block.subs == "[0, 1]" and len(block.tokens) == 2 * 6  # 1 2 4 5 3 6
    differing = build_block(["c.0", "c.0"], [[1], [2]], [[4], [5]], vectors[:2], "c")
    assert differing.shared_heads == 0 and len(differing.tokens) == 2 * 4  # kept per sentence when heads differ
    assert Candidates.join([differing], None, ["c"]).tokens.tolist() == [1, 4, 2, 5]


def test_postings_take_half_the_bytes_and_read_back_the_same() -> None:
    narrow = Posting(np.array([70_000, 70_003, 70_900], np.int32), np.array([0, 2, 255], np.uint16),
                     np.array([1, 0, 7], np.uint16))
    wide = Posting(np.array([5, 6], np.int32), np.array([3, 300], np.uint16), np.array([0, 1], np.uint16))
    first, offsets, counts = narrow.encode()
    assert (first, len(offsets), len(counts)) == (70_000, 2 * 3, 2 * 3)  # 4 bytes a posting (layout 2: 8)
    assert len(wide.encode()[2]) == 4 * 2  # a count past 255: 16 bits each
    for parts in ([narrow], [narrow, wide], [wide, narrow, narrow], []):
        joined = Posting.join([p.encode() for p in parts])
        for field in ("rows", "head", "body"):
            expected = np.concatenate([getattr(p, field) for p in parts]) if parts else np.zeros(0)
            assert np.array_equal(getattr(joined, field), expected), field
    with pytest.raises(ValueError, match="65,536 sections"):
        Posting(np.array([1, 70_000], np.int32), np.zeros(2, np.uint16), np.zeros(2, np.uint16)).encode()
