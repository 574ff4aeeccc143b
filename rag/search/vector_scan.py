"""Exact top-k sections by inner product, reading a quarter of the bytes a float32 scan reads.

At 100k sections the float32 scan read 100 MB per question, half of a search, bound by memory bandwidth. The
store keeps each section vector a second time as int8 codes with a per-row scale (26 MB at 100k), written at
ingest. A question is scored against every code by NumKong's int8 dot-product kernel (SIMD), each score with a
bound on how far it can be from the float32 one; only the rows whose bound reaches the k-th best lower bound can
be among the top k (a few hundred of 100k), and those are scored again from their float32 vectors by numpy. The k
best are those of an exact scan: nothing is approximate. Exact scores are summed in float64 and rounded to float32,
so a row scores the same whichever rows are scored with it (numpy's float32 product over the whole matrix could
differ in the last bit with the row's position): copies of one vector tie, and ties go by row order.

The bound: with v = s·c + e (|e_j| <= s/2) and q = t·d + f (|f_j| <= t/2),
|q·v - s·t·(c·d)| = |q·e + f·(s·c)| <= s·|q|_1 / 2 + t·s·|c|_1 / 2.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import numkong
import numpy as np

from rag.search.sentence_blocks import quantize

# Room for rounding, relative to |q|·|v| (an exact score rounded to float32 is within 2^-24 of it).
_SLACK = 1e-4


class _Workspace:
    """The per-row arrays of a scan, allocated once per set of codes and reused: a fresh 800 KB array per step and
    question cost more than the arithmetic in it (100k rows: 6-9 ms a scan with new arrays, 3-4 ms reusing them)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._arrays: list[np.ndarray] = []

    def arrays(self, n: int) -> list[np.ndarray]:
        """[dots (1 x n), coarse, bound, lower]: float64, overwritten by each scan."""
        if not self._arrays or self._arrays[1].shape[0] != n:
            self._arrays = [np.empty((1, n)), np.empty(n), np.empty(n), np.empty(n)]
        return self._arrays


@dataclass(frozen=True, slots=True)
class SectionCodes:
    """int8 codes of section vectors: row i ~ scales[i] * codes[i]; weights[i] = scales[i] * |codes[i]|_1."""

    codes: np.ndarray  # int8 [n, dim]
    scales: np.ndarray  # float32 [n]
    weights: np.ndarray  # float32 [n]
    work: _Workspace = field(default_factory=_Workspace, compare=False, repr=False)

    @classmethod
    def of(cls, matrix: np.ndarray) -> SectionCodes:
        codes, scales = quantize(np.asarray(matrix, dtype=np.float32))
        return cls(codes, scales, scales * np.abs(codes.astype(np.int32)).sum(axis=1, dtype=np.int64)
                   .astype(np.float32) if len(codes) else np.zeros(0, dtype=np.float32))

    @classmethod
    def decode(cls, codes: bytes, scales: bytes, dim: int) -> SectionCodes:
        """From the stored columns (`encode`)."""
        pairs = np.frombuffer(scales, dtype=np.float32).reshape(-1, 2)
        return cls(np.frombuffer(codes, dtype=np.int8).reshape(len(pairs), dim), pairs[:, 0], pairs[:, 1])

    def encode(self) -> tuple[bytes, bytes]:
        """(int8 codes, float32 (scale, weight) pairs) as stored."""
        return self.codes.tobytes(), np.column_stack([self.scales, self.weights]).astype(np.float32).tobytes()

    @classmethod
    def joined(cls, parts: list[SectionCodes]) -> SectionCodes:
        if not parts:
            return cls(np.zeros((0, 0), dtype=np.int8), np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32))
        return cls(np.concatenate([p.codes for p in parts]), np.concatenate([p.scales for p in parts]),
                   np.concatenate([p.weights for p in parts]))

    def take(self, order: np.ndarray) -> SectionCodes:
        return SectionCodes(self.codes[order], self.scales[order], self.weights[order])

    def __len__(self) -> int:
        return len(self.scales)


def top_k(matrix: np.ndarray, codes: SectionCodes | None, query: np.ndarray, limit: int,
          mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(row indices, float32 scores) of the `limit` rows of `matrix` with the highest inner product with `query`,
    best first, ties by row index; only rows `mask` allows (none for a query that is not finite)."""
    query = np.asarray(query, dtype=np.float32)
    allowed = np.flatnonzero(mask) if mask is not None else None
    n_allowed = len(matrix) if allowed is None else len(allowed)
    limit = min(limit, n_allowed)
    if limit <= 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
    peak = float(np.abs(query).max()) if len(query) else 0.0
    if not math.isfinite(peak):
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
    if codes is None or len(codes) != len(matrix) or n_allowed <= limit or peak == 0.0:
        return _best(matrix, np.arange(len(matrix)) if allowed is None else allowed, query, limit)
    step = peak / 127.0
    digits = np.round(query / step).astype(np.int8)
    # room for rounding (the exact scores' and the bound's), relative to |q|·|v| <= |q|·127·s·√dim
    slack = (_SLACK + matrix.shape[1] * 2.0 ** -22) * float(np.linalg.norm(query)) * 127.0 * math.sqrt(matrix.shape[1])
    with codes.work.lock:
        dots, coarse, bound, lower = codes.work.arrays(len(codes))
        numkong.cdist(digits[None], codes.codes, metric="dot", out=dots)  # exact integers
        np.multiply(codes.scales, step, out=coarse)
        np.multiply(coarse, dots[0], out=coarse)
        np.multiply(codes.scales, float(np.abs(query).sum()) / 2 + slack, out=bound)
        np.multiply(codes.weights, step / 2, out=lower)
        np.add(bound, lower, out=bound)
        np.subtract(coarse, bound, out=lower)
        if mask is not None:
            lower[~mask] = -np.inf
        lower.partition(len(lower) - limit)  # in place: the limit-th best lower bound at len - limit
        cut = lower[len(lower) - limit]
        np.add(coarse, bound, out=coarse)  # upper bounds
        reach = coarse >= cut
    if mask is not None:
        reach &= mask
    return _best(matrix, np.flatnonzero(reach), query, limit)


def _best(matrix: np.ndarray, rows: np.ndarray, query: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The `limit` best of `rows` (ascending) by their exact scores, best first, ties by row."""
    scores = (matrix[rows].astype(np.float64) @ query.astype(np.float64)).astype(np.float32)
    if len(rows) > limit:
        keep = np.argpartition(-scores, limit - 1)[:limit]
        cut = scores[keep].min()
        keep = np.flatnonzero(scores >= cut)  # every tie at the cut: the tie order below is by row
        rows, scores = rows[keep], scores[keep]
    order = np.lexsort((rows, -scores))[:limit]
    return rows[order], scores[order]
