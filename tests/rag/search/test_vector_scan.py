"""The int8-first vector scan returns exactly the float32 scan's top k (rows, order and scores), reading every
row's int8 code but only a few rows' float32 vectors."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rag.search import vector_scan
from rag.search.vector_scan import SectionCodes, top_k


def _unit(rows: np.ndarray) -> np.ndarray:
    normalised: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return normalised


def _expected(matrix: np.ndarray, query: np.ndarray, limit: int, mask: np.ndarray | None = None) -> list[int]:
    """The top rows by exact (float64) inner product, ties by row: what a full scan ranks."""
    scores = matrix.astype(np.float64) @ query.astype(np.float64)
    rows = [i for i in np.lexsort((np.arange(len(scores)), -scores)).tolist() if mask is None or mask[i]]
    return rows[:limit]


def _near_duplicates(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Rows in clusters of near-copies (as a store of many state manuals made from one regulation has), some
    exact copies: many scores within the int8 codes' error of each other, and exact ties."""
    centres = rng.normal(size=(n // 40, dim))
    rows = centres[rng.integers(0, len(centres), size=n)] + 0.002 * rng.normal(size=(n, dim))
    rows[1::7] = rows[::7][:len(rows[1::7])]  # exact copies
    return _unit(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_top_k_is_the_float32_scans_rows_order_and_scores(seed: int) -> None:
    rng = np.random.default_rng(seed)
    matrix = _near_duplicates(rng, 4000, 64)
    codes = SectionCodes.of(matrix)
    for trial in range(20):
        query = _unit((matrix[trial * 97] + 0.3 * rng.normal(size=64))[None])[0]
        for limit in (1, 5, 50):
            rows, scores = top_k(matrix, codes, query, limit)
            assert rows.tolist() == _expected(matrix, query, limit)
            np.testing.assert_allclose(scores, (matrix @ query)[rows], rtol=0, atol=1e-6)


def test_only_rows_the_codes_cannot_rule_out_are_scored_in_float32(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    matrix = _unit(rng.normal(size=(20_000, 128)))
    query = _unit((matrix[3] + 0.5 * rng.normal(size=128))[None])[0]
    scored: list[int] = []
    best = vector_scan._best

    def counting(m: np.ndarray, rows: np.ndarray, q: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
        scored.append(len(rows))
        return best(m, rows, q, limit)

    monkeypatch.setattr(vector_scan, "_best", counting)
    rows, _ = top_k(matrix, SectionCodes.of(matrix), query, 50)
    assert rows.tolist() == _expected(matrix, query, 50)
    assert 50 <= scored[0] < 2_000  # a tenth of the rows at most, here
    top_k(matrix, None, query, 50)  # no codes: every row scored
    assert scored[1] == 20_000


def test_filters_keep_only_allowed_rows_even_when_they_score_lower() -> None:
    rng = np.random.default_rng(7)
    matrix = _near_duplicates(rng, 3000, 32)
    codes = SectionCodes.of(matrix)
    query = matrix[11]
    mask = rng.random(3000) < 0.1
    mask[11] = False  # the best row is filtered out
    rows, _ = top_k(matrix, codes, query, 20, mask)
    assert rows.tolist() == _expected(matrix, query, 20, mask)
    few = np.zeros(3000, dtype=bool)
    few[[5, 900, 2999]] = True  # fewer allowed rows than asked for: all of them
    assert sorted(top_k(matrix, codes, query, 20, few)[0].tolist()) == [5, 900, 2999]
    assert top_k(matrix, codes, query, 20, np.zeros(3000, dtype=bool))[0].tolist() == []


def test_a_zero_query_or_wrong_codes_fall_back_to_the_full_scan_and_nan_finds_nothing() -> None:
    rng = np.random.default_rng(3)
    matrix = _unit(rng.normal(size=(500, 16)))
    codes = SectionCodes.of(matrix)
    rows, scores = top_k(matrix, codes, np.zeros(16, dtype=np.float32), 3)
    assert rows.tolist() == [0, 1, 2] and scores.tolist() == [0.0, 0.0, 0.0]
    assert top_k(matrix, codes, np.full(16, np.nan, dtype=np.float32), 3)[0].tolist() == []
    query = matrix[42]
    assert top_k(matrix, SectionCodes.of(matrix[:100]), query, 5)[0].tolist() == _expected(matrix, query, 5)


def test_copies_of_a_vector_tie_and_go_by_row_order_wherever_they_are() -> None:
    rng = np.random.default_rng(8)
    matrix = _unit(rng.normal(size=(5000, 256)))
    copies = [17, 1234, 1235, 4999]
    matrix[copies] = matrix[3]
    for noise in (0.01, 0.03, 0.05):
        query = _unit((matrix[3] + noise * rng.normal(size=256))[None])[0]
        rows, scores = top_k(matrix, SectionCodes.of(matrix), query, 5)
        assert rows.tolist() == [3, *copies] and len(set(scores.tolist())) == 1


def test_threads_scanning_the_same_codes_at_once_each_get_their_own_answer() -> None:
    rng = np.random.default_rng(6)
    matrix = _unit(rng.normal(size=(50_000, 64)))
    codes = SectionCodes.of(matrix)
    queries = [_unit((matrix[i] + 0.2 * rng.normal(size=64))[None])[0] for i in range(24)]
    expected = [_expected(matrix, q, 10) for q in queries]
    with ThreadPoolExecutor(4) as pool:  # the scan's reused arrays are shared by every caller of these codes
        for _ in range(3):
            found = list(pool.map(lambda q: top_k(matrix, codes, q, 10)[0].tolist(), queries))
            assert found == expected


def test_codes_round_trip_through_their_stored_bytes() -> None:
    matrix = _unit(np.random.default_rng(4).normal(size=(30, 8)))
    codes = SectionCodes.of(matrix)
    again = SectionCodes.decode(*codes.encode(), 8)
    assert np.array_equal(again.codes, codes.codes) and np.array_equal(again.scales, codes.scales)
    assert np.array_equal(again.weights, codes.weights)
    assert np.allclose(codes.codes * codes.scales[:, None], matrix, atol=float(codes.scales.max()) / 2 + 1e-7)
    np.testing.assert_allclose(codes.weights, codes.scales * np.abs(codes.codes.astype(np.int64)).sum(axis=1),
                               rtol=1e-6)
