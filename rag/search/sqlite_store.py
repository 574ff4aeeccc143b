"""The embedded knowledge store: one SQLite file with documents, chunks, sub-chunks, sentences, FTS5 indexes
and vectors.

Section vectors are float32 blobs in the chunks table, searched exactly with numpy from an in-memory matrix that
is reloaded only when the file changed (our own writes, or another process's, seen via `data_version`). Sentence
vectors stay on disk: they are read only for the few candidate sections of a question.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from rag.documents import Chunk, SourceDocument, SubChunk
from rag.search.bm25 import bm25_scores_joined, query_stems, stemmed
from rag.search.sentences import SentenceEvidence, chunk_sentences, rank_sentences
from rag.search.store import ChunkVectors, EmbeddingMismatch, Filters, StoredDocument
from rag.search.terms import question_terms

SCHEMA_VERSION = 1  # bump when the tables change; an older file is refused with a clear message

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    url TEXT,
    source_path TEXT,
    content_hash TEXT NOT NULL,
    updated TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    groups TEXT NOT NULL DEFAULT '["all"]',
    metadata TEXT NOT NULL DEFAULT '{}',
    ingested_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    heading_path TEXT NOT NULL,
    text TEXT NOT NULL,
    page INTEGER,
    embedding BLOB NOT NULL  -- of title + heading path + text
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS subchunks (
    id INTEGER PRIMARY KEY,
    sub_id TEXT NOT NULL UNIQUE,
    chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    heading_path TEXT NOT NULL,
    page INTEGER
);
CREATE INDEX IF NOT EXISTS subchunks_chunk ON subchunks(chunk_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    head, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS sentences (
    id INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
    sub_id TEXT NOT NULL,
    head_terms TEXT NOT NULL,  -- stemmed tokens of the paragraph's title and heading path, space-separated
    body_terms TEXT NOT NULL,  -- stemmed tokens of the sentence
    length INTEGER NOT NULL,   -- tokens in both, for BM25's length normalisation
    embedding BLOB NOT NULL    -- of the heading path + the sentence
);
CREATE INDEX IF NOT EXISTS sentences_chunk ON sentences(chunk_id);
CREATE TABLE IF NOT EXISTS sentence_df (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
"""

# A word in the title or heading path says far more about what a section is about than one in its body
# (doc2dial first turns: weight 8 beat 1, 2 and 4; see benchmarks/RESULTS.md).
_SECTION_WEIGHTS = (8.0, 1.0)


def fts_query(text: str) -> str:
    """An FTS5 OR-query of the question's topic words, each quoted so that no word is read as syntax."""
    return " OR ".join(f'"{t}"' for t in question_terms(text)[:64])


class SQLiteKnowledgeStore:
    """KnowledgeStore on one SQLite file; safe to reopen and safe against a crash mid-ingest."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a data dir that cannot be created: one line, not a traceback
                raise RuntimeError(f"cannot create the folder of the knowledge store {path}: "
                                   f"{exc.strerror or exc}") from exc
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA synchronous=NORMAL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            has_tables = self._db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None
            if has_tables and version != SCHEMA_VERSION:
                raise RuntimeError(
                    f"the knowledge store {path} has layout version {version}, this navibot needs "
                    f"{SCHEMA_VERSION}: ingest the documents again into a new store file")
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise RuntimeError(f"cannot open the knowledge store {path}: {exc}") from exc
        self._lock = threading.RLock()
        self._matrix: np.ndarray | None = None
        self._sentence_stats: tuple[int, float] = (0, 0.0)  # sentence count and mean length in tokens
        self._matrix_ids: list[str] = []
        self._matrix_meta: list[tuple[frozenset[str], frozenset[str]]] = []
        self._mask_cache: dict[Filters, np.ndarray] = {}
        self._loaded_version: tuple[int, int] | None = None
        self._writes = 0

    # -- writing -------------------------------------------------------------------------------------------

    def check_embedder(self, name: str, dim: int) -> None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key='embedder'").fetchone()
            wanted = json.dumps({"name": name, "dim": dim})
            if row is None:
                self._db.execute("INSERT INTO meta(key, value) VALUES('embedder', ?)", (wanted,))
                return
            stored = json.loads(row[0])
            if stored != {"name": name, "dim": dim}:
                has_chunks = self._db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None
                if not has_chunks:  # an empty store can switch models freely
                    self._db.execute("UPDATE meta SET value=? WHERE key='embedder'", (wanted,))
                    return
                raise EmbeddingMismatch(
                    f"the knowledge store {self.path} was built with embedding model {stored['name']} "
                    f"({stored['dim']} dims) but {name} ({dim} dims) is configured now; re-ingest the documents "
                    f"into a new store (or delete {self.path}) after changing the embedding model")

    def replace_document(self, doc: SourceDocument, chunks: list[Chunk], vectors: ChunkVectors) -> None:
        sentences = [sentence for chunk in chunks for sentence in chunk_sentences(chunk)]
        if len(chunks) != len(vectors.chunks) or len(sentences) != len(vectors.sentences):
            raise ValueError("one vector per chunk and one per sentence are required")
        now = datetime.now(UTC).isoformat(timespec="seconds")
        chunk_vecs = np.asarray(vectors.chunks, dtype=np.float32)
        sentence_vecs = np.asarray(vectors.sentences, dtype=np.float32)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._delete(doc.doc_id)
                self._db.execute(
                    "INSERT INTO documents(doc_id, title, url, source_path, content_hash, updated, tags, groups,"
                    " metadata, ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (doc.doc_id, doc.title, doc.url, doc.source_path, doc.content_hash, doc.updated,
                     json.dumps(doc.tags), json.dumps(doc.groups), json.dumps(doc.metadata, default=str), now),
                )
                for chunk, vec in zip(chunks, chunk_vecs, strict=True):
                    cur = self._db.execute(
                        "INSERT INTO chunks(chunk_id, doc_id, ordinal, heading_path, text, page, embedding)"
                        " VALUES (?,?,?,?,?,?,?)",
                        (chunk.chunk_id, chunk.doc_id, chunk.ordinal, json.dumps(chunk.heading_path), chunk.text,
                         chunk.page, vec.tobytes()),
                    )
                    self._db.execute("INSERT INTO chunks_fts(rowid, head, body) VALUES (?,?,?)",
                                     (cur.lastrowid, chunk.heading_text, chunk.text))
                    self._db.executemany(
                        "INSERT INTO subchunks(sub_id, chunk_id, ordinal, kind, text, heading_path, page)"
                        " VALUES (?,?,?,?,?,?,?)",
                        [(sub.sub_id, sub.chunk_id, sub.ordinal, sub.kind, sub.text, json.dumps(sub.heading_path),
                          sub.page) for sub in chunk.subchunks])
                rows: list[tuple[str, str, str, str, int, bytes]] = []
                df: Counter[str] = Counter()
                for sentence, vec in zip(sentences, sentence_vecs, strict=True):
                    head, body = stemmed(sentence.head), stemmed(sentence.text)
                    df.update(set(head) | set(body))
                    rows.append((sentence.chunk_id, sentence.sub_id, " ".join(head), " ".join(body),
                                 len(head) + len(body), vec.tobytes()))
                self._db.executemany("INSERT INTO sentences(chunk_id, sub_id, head_terms, body_terms, length,"
                                     " embedding) VALUES (?,?,?,?,?,?)", rows)
                self._db.executemany("INSERT INTO sentence_df(term, df) VALUES (?, ?)"
                                     " ON CONFLICT(term) DO UPDATE SET df = df + excluded.df", df.items())
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLITE_FULL already rolled it back: a ROLLBACK would hide the cause
                    self._db.execute("ROLLBACK")
                raise
            self._writes += 1

    def _delete(self, doc_id: str) -> None:
        self._db.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE doc_id=?)", (doc_id,))
        gone: Counter[str] = Counter()
        for head, body in self._db.execute(
                "SELECT head_terms, body_terms FROM sentences WHERE chunk_id IN"
                " (SELECT chunk_id FROM chunks WHERE doc_id=?)", (doc_id,)):
            gone.update(set(head.split()) | set(body.split()))
        if gone:
            self._db.executemany("UPDATE sentence_df SET df = df - ? WHERE term = ?",
                                 [(n, term) for term, n in gone.items()])
            self._db.execute("DELETE FROM sentence_df WHERE df <= 0")
        self._db.execute(
            "DELETE FROM sentences WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE doc_id=?)", (doc_id,))
        self._db.execute(
            "DELETE FROM subchunks WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE doc_id=?)", (doc_id,))
        self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        self._db.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))

    def delete_documents(self, doc_ids: list[str]) -> int:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                removed = 0
                for doc_id in doc_ids:
                    exists = self._db.execute("SELECT 1 FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
                    if exists:
                        self._delete(doc_id)
                        removed += 1
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLITE_FULL already rolled it back: a ROLLBACK would hide the cause
                    self._db.execute("ROLLBACK")
                raise
            self._writes += 1
            return removed

    # -- reading -------------------------------------------------------------------------------------------

    def document_hashes(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute("SELECT doc_id, content_hash FROM documents").fetchall())

    def documents(self) -> list[StoredDocument]:
        with self._lock:
            rows = self._db.execute(
                "SELECT d.doc_id, d.title, d.content_hash, d.source_path, COUNT(c.id), d.groups, d.url, d.updated"
                " FROM documents d LEFT JOIN chunks c ON c.doc_id = d.doc_id GROUP BY d.doc_id ORDER BY d.doc_id"
            ).fetchall()
        return [StoredDocument(doc_id, title, digest, source, count, tuple(json.loads(groups)), url, updated)
                for doc_id, title, digest, source, count, groups, url, updated in rows]

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {
                "documents": self._db.execute("SELECT COUNT(*) FROM documents").fetchone()[0],
                "chunks": self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0],
                "subchunks": self._db.execute("SELECT COUNT(*) FROM subchunks").fetchone()[0],
            }

    def _refresh_matrix(self) -> None:
        version = (self._db.execute("PRAGMA data_version").fetchone()[0], self._writes)
        if self._matrix is not None and version == self._loaded_version:
            return
        rows = self._db.execute(
            "SELECT c.chunk_id, c.embedding, d.tags, d.groups FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"
            " ORDER BY c.id").fetchall()
        self._matrix_ids = [r[0] for r in rows]
        self._matrix_meta = [(frozenset(t.lower() for t in json.loads(r[2])),
                              frozenset(g.lower() for g in json.loads(r[3]))) for r in rows]
        self._matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                        if rows else np.zeros((0, 0), dtype=np.float32))
        n, avg_len = self._db.execute("SELECT COUNT(*), COALESCE(AVG(length), 0) FROM sentences").fetchone()
        self._sentence_stats = (n, float(avg_len))
        self._mask_cache.clear()
        self._loaded_version = version

    def _mask(self, filters: Filters) -> np.ndarray | None:
        if not filters.tags and not filters.groups:
            return None
        mask = self._mask_cache.get(filters)
        if mask is None:
            mask = np.array([(not filters.tags or bool(filters.tags & tags)) and
                             (not filters.groups or bool(filters.groups & groups))
                             for tags, groups in self._matrix_meta], dtype=bool)
            self._mask_cache[filters] = mask
        return mask

    def _narrows(self, filters: Filters) -> bool:
        """Whether the filters exclude any stored chunk. Every chat question carries the groups of its chat, and
        while no document is restricted those allow everything: searching unfiltered then is 4x faster (the
        lexical search need not over-fetch and check each row). Called under the lock."""
        self._refresh_matrix()
        mask = self._mask(filters)
        return mask is not None and not bool(mask.all())

    def vector_search(self, vector: np.ndarray, limit: int, filters: Filters) -> list[tuple[str, float]]:
        with self._lock:
            self._refresh_matrix()
            matrix = self._matrix
            if matrix is None or len(matrix) == 0:
                return []
            self._check_dims(matrix.shape[1], len(vector))
            scores = matrix @ np.asarray(vector, dtype=np.float32)
            mask = self._mask(filters)
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            n = min(limit, len(scores))
            top = np.argpartition(-scores, n - 1)[:n]
            top = top[np.argsort(-scores[top], kind="stable")]
            return [(self._matrix_ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]

    @staticmethod
    def _check_dims(stored: int, query: int) -> None:
        if stored != query:
            raise EmbeddingMismatch(
                f"query vector has {query} dims but the store holds {stored}-dim vectors; "
                "re-ingest with the configured embedding model")

    def lexical_search(self, query: str, limit: int, filters: Filters) -> list[tuple[str, float]]:
        match = fts_query(query)
        if not match:
            return []
        # Rank inside the FTS index first and join only the rows kept: joining every match before sorting
        # cost 2-3x more on a 10,000-chunk store (benchmarks/RESULTS.md).
        sql = ("WITH top AS (SELECT rowid AS id, bm25(chunks_fts, ?, ?) AS r FROM chunks_fts"
               " WHERE chunks_fts MATCH ? ORDER BY r LIMIT ?)"
               " SELECT c.chunk_id, -top.r, d.tags, d.groups FROM top JOIN chunks c ON c.id = top.id"
               " JOIN documents d ON d.doc_id = c.doc_id ORDER BY top.r")
        with self._lock:
            filtered = self._narrows(filters)
            try:
                rows = self._db.execute(sql, (*_SECTION_WEIGHTS, match, limit * 8 if filtered else limit)).fetchall()
            except sqlite3.OperationalError:
                return []  # a query FTS5 cannot parse is treated as "no lexical match", never a crash
        out = [(cid, float(score)) for cid, score, tags, groups in rows
               if not filtered or filters.allows(json.loads(tags), json.loads(groups))]
        return out[:limit]

    def sentence_rankings(self, query: str, vector: np.ndarray | None,
                          chunk_ids: list[str]) -> tuple[list[str], list[str]]:
        evidence = self.sentence_evidence(query, vector, chunk_ids)
        return evidence.chunks_lexical, evidence.chunks_vector

    def sentence_evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str]) -> SentenceEvidence:
        if not chunk_ids:
            return SentenceEvidence([], [], [], [], {})
        terms = query_stems(query)
        marks = ",".join("?" * len(chunk_ids))
        with self._lock:
            self._refresh_matrix()
            n_docs, avg_len = self._sentence_stats
            rows = self._db.execute(
                f"SELECT chunk_id, sub_id, head_terms, body_terms, embedding FROM sentences"
                f" WHERE chunk_id IN ({marks}) ORDER BY id", chunk_ids).fetchall()
            df = dict(self._db.execute(
                f"SELECT term, df FROM sentence_df WHERE term IN ({','.join('?' * len(terms))})", terms).fetchall()
            ) if terms else {}
        if not rows:
            return SentenceEvidence([], [], [], [], {})
        scores = bm25_scores_joined(terms, [(h, b) for _, _, h, b, _ in rows], df, n_docs, avg_len)
        matrix = None
        if vector is not None:
            matrix = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            self._check_dims(matrix.shape[1], len(vector))
        return rank_sentences([(r[0], r[1]) for r in rows], scores, matrix, vector)

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        if not chunk_ids:
            return []
        marks = ",".join("?" * len(chunk_ids))
        with self._lock:
            rows = self._db.execute(
                "SELECT c.chunk_id, c.doc_id, c.ordinal, c.heading_path, c.text, c.page, d.title, d.url, d.updated,"
                f" d.content_hash, d.tags, d.groups FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"
                f" WHERE c.chunk_id IN ({marks})", chunk_ids).fetchall()
            subs = self._db.execute(
                "SELECT sub_id, chunk_id, ordinal, kind, text, heading_path, page FROM subchunks"
                f" WHERE chunk_id IN ({marks}) ORDER BY chunk_id, ordinal", chunk_ids).fetchall()
        by_chunk: dict[str, list[SubChunk]] = {}
        for sub_id, chunk_id, ordinal, kind, text, path, page in subs:
            by_chunk.setdefault(chunk_id, []).append(
                SubChunk(sub_id, chunk_id, ordinal, kind, text, json.loads(path), page))
        chunks = {
            r[0]: Chunk(chunk_id=r[0], doc_id=r[1], ordinal=r[2], heading_path=json.loads(r[3]), text=r[4], page=r[5],
                        title=r[6], url=r[7], updated=r[8], content_hash=r[9], tags=json.loads(r[10]),
                        groups=json.loads(r[11]), subchunks=by_chunk.get(r[0], []))
            for r in rows
        }
        return [chunks[c] for c in chunk_ids if c in chunks]

    def close(self) -> None:
        with self._lock:
            self._db.close()
