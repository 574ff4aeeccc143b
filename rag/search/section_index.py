"""BM25 over sections from stored postings: the scores SQLite FTS5's bm25() gives, without scoring every match.

FTS5 computes BM25 for every row an OR-query matches; a common word ("household") matches most sections of a
large store, so a search scored tens of thousands of rows one by one in C (77% of search time at 100k chunks).
Here each term's postings (section rows, head and body frequencies, section length) are stored per document at
ingest and scored with numpy, as bm25s does. Tokens come from FTS5's own tokenizer (porter, unicode61,
remove_diacritics 2) run on a temporary table, and the formula is FTS5's, so the scores are the same; the
statistics (rows, tokens) are kept in the store instead of counted at open.

Layout 3 stores a document's postings of a term in half the bytes: its sections as 16-bit offsets from the
document's first section row (a document's sections are written together, so their rows are consecutive), and the
head and body counts interleaved in one column, 8 bits each when all fit (the column's length tells), else 16.
"""

from __future__ import annotations

import math
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

TOKENIZER = "porter unicode61 remove_diacritics 2"
K1, B = 1.2, 0.75  # FTS5's bm25() constants


@dataclass(frozen=True, slots=True)
class Posting:
    """One term's occurrences in one document's sections: parallel arrays, one entry per section."""

    rows: np.ndarray  # int32 section (chunk) row ids
    head: np.ndarray  # uint16 occurrences in the title and heading path
    body: np.ndarray  # uint16 occurrences in the text

    @classmethod
    def join(cls, stored: Sequence[tuple[Any, ...]]) -> Posting:
        """One term's postings from the rows of several documents, each ending with (first row, offsets, counts)
        as `encode` gave them: one buffer per column (a search at 100k chunks reads a term's row of each of
        hundreds of documents, so each column is gathered in one pass in C)."""
        if not stored:
            return cls(np.zeros(0, np.int32), np.zeros(0, np.uint16), np.zeros(0, np.uint16))
        *_, firsts, offset_parts, count_parts = zip(*stored, strict=True)
        offset_bytes = np.fromiter(map(len, offset_parts), dtype=np.intp, count=len(stored))
        rows = (np.frombuffer(b"".join(offset_parts), dtype=np.uint16).astype(np.int32)
                + np.repeat(np.array(firsts, dtype=np.int32), offset_bytes // 2))
        # a part's counts take as many bytes as its offsets (8 bits each) or twice as many: equal sums, all 8-bit
        if sum(map(len, count_parts)) == int(offset_bytes.sum()):
            pairs = np.frombuffer(b"".join(count_parts), dtype=np.uint8).reshape(-1, 2)
        else:
            pairs = np.concatenate([np.frombuffer(counts, dtype=np.uint8 if len(counts) == len(offsets)
                                                  else np.uint16).reshape(-1, 2).astype(np.uint16)
                                    for offsets, counts in zip(offset_parts, count_parts, strict=True)])
        return cls(rows, pairs[:, 0].astype(np.uint16), pairs[:, 1].astype(np.uint16))

    def encode(self) -> tuple[int, bytes, bytes]:
        """(first row, each row's offset from it as uint16, head and body counts interleaved as uint8 or uint16)."""
        first = int(self.rows.min()) if len(self.rows) else 0
        offsets = self.rows.astype(np.int64) - first
        if len(offsets) and int(offsets.max()) > 0xFFFF:
            raise ValueError("a document of more than 65,536 sections cannot be indexed: split it into several")
        pairs = np.column_stack([self.head, self.body])
        wide = bool(len(pairs)) and int(pairs.max()) > 0xFF
        return first, offsets.astype(np.uint16).tobytes(), pairs.astype(np.uint16 if wide else np.uint8).tobytes()


class Tokenizer:
    """FTS5's tokenizer on a temporary table of the connection: the same stems as a MATCH query would use."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.navibot_tok USING fts5(head, body,"
                   f" tokenize='{TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.navibot_tok_v USING fts5vocab(temp, navibot_tok, instance)")
        self._words: dict[str, str | None] = {}

    def sections(self, rows: Sequence[tuple[int, str, str]]) -> tuple[dict[str, Posting], dict[int, int]]:
        """(row id, head, body) of one document's sections -> postings by term, and each row's token count."""
        self._db.executemany("INSERT INTO temp.navibot_tok(rowid, head, body) VALUES (?,?,?)", rows)
        try:
            counts = self._db.execute(
                "SELECT term, doc, col, COUNT(*) FROM temp.navibot_tok_v GROUP BY term, doc, col").fetchall()
        finally:
            self._db.execute("DELETE FROM temp.navibot_tok")
        if any(row > 0x7FFFFFFF for row, _, _ in rows):
            raise ValueError("section row ids past 2**31 cannot be indexed: copy the store into a new file")
        lengths: dict[int, int] = {row: 0 for row, _, _ in rows}
        by_term: dict[str, dict[int, list[int]]] = defaultdict(dict)
        for term, row, col, n in counts:
            freqs = by_term[term].setdefault(row, [0, 0])
            freqs[0 if col == "head" else 1] += n
            lengths[row] += n
        postings = {}
        for term, by_row in by_term.items():
            ordered = sorted(by_row)
            postings[term] = Posting(np.array(ordered, dtype=np.int32),
                                     np.array([by_row[r][0] for r in ordered], dtype=np.uint16),
                                     np.array([by_row[r][1] for r in ordered], dtype=np.uint16))
        return postings, lengths

    def word(self, word: str) -> str | None:
        """The indexed form of one query word (None when the tokenizer keeps nothing of it); cached."""
        if word not in self._words:
            self._db.execute("INSERT INTO temp.navibot_tok(rowid, head, body) VALUES (1, ?, '')", (word,))
            try:
                found = self._db.execute("SELECT term FROM temp.navibot_tok_v ORDER BY offset").fetchall()
            finally:
                self._db.execute("DELETE FROM temp.navibot_tok")
            if len(self._words) > 50_000:
                self._words.clear()
            self._words[word] = " ".join(t for (t,) in found) or None
        return self._words[word]


@dataclass(frozen=True, slots=True)
class SectionStats:
    """What BM25 needs about every section, computed once per load: where each row id sits in the in-memory
    arrays, and each section's length normalisation (FTS5's `k1 * (1 - b + b * D / avgdl)`)."""

    n_rows: int
    position: np.ndarray  # row id -> index into the in-memory arrays, -1 for none
    norm: np.ndarray  # float64 per section

    @classmethod
    def of(cls, row_ids: np.ndarray, lengths: np.ndarray, n_rows: int, n_tokens: int) -> SectionStats:
        position = np.full(int(row_ids.max()) + 1 if len(row_ids) else 0, -1, dtype=np.int64)
        position[row_ids] = np.arange(len(row_ids))
        avgdl = float(n_tokens) / float(n_rows) if n_rows else 1.0
        return cls(n_rows, position, K1 * (1 - B + B * lengths.astype(np.float64) / avgdl))


def bm25_scores(phrases: Sequence[Sequence[Posting]], stats: SectionStats,
                weights: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """FTS5's bm25() for an OR-query of single-term phrases, over all sections at once.

    `phrases`: each phrase's postings (all documents). Returns (score of each section, whether it matched any
    phrase), indexed like the in-memory arrays. A phrase listed twice counts twice, as in FTS5. The same float64
    arithmetic, term by term, as fts5_aux.c."""
    scores = np.zeros(len(stats.norm), dtype=np.float64)
    matched = np.zeros(len(stats.norm), dtype=bool)
    if stats.n_rows == 0 or not len(stats.norm):
        return scores, matched
    for postings in phrases:
        if not postings:
            continue
        rows = np.concatenate([p.rows for p in postings]) if len(postings) > 1 else postings[0].rows
        hits = len(rows)
        if hits and int(rows.max()) < len(stats.position):  # the usual case: one gather
            where = stats.position[rows]
        else:
            inside = rows < len(stats.position)
            where = np.where(inside, stats.position[np.where(inside, rows, 0)], -1)
        idf = math.log((stats.n_rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        head = np.concatenate([p.head for p in postings]) if len(postings) > 1 else postings[0].head
        body = np.concatenate([p.body for p in postings]) if len(postings) > 1 else postings[0].body
        known = where >= 0  # postings of a section written after the arrays were loaded are skipped
        if not bool(known.all()):
            where, head, body = where[known], head[known], body[known]
        freq = (weights[0] * head.astype(np.float64) + weights[1] * body.astype(np.float64))
        scores[where] += idf * ((freq * (K1 + 1.0)) / (freq + stats.norm[where]))
        matched[where] = True
    return scores, matched


def top_rows(scores: np.ndarray, allowed: np.ndarray, limit: int) -> np.ndarray:
    """Positions of the `limit` best allowed sections, best first; ties by position (row id order)."""
    candidates = np.flatnonzero(allowed)
    if not len(candidates) or limit <= 0:
        return candidates[:0]
    if len(candidates) > limit:
        values = scores[candidates]
        cut = np.partition(-values, limit - 1)[limit - 1]
        candidates = candidates[-values <= cut]  # every tie at the cut, so the tie order below is stable
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:limit]
