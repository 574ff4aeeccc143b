"""The embedded knowledge store: one SQLite file with documents, chunks, sub-chunks, and the search indexes
built from them at ingest (section postings for BM25, section vectors, one sentence block per section).

Layout 2 (issue 21), per document: the postings of each term (which sections, how often in head and body), the
section vectors as one float32 block, and per section its sentences' term ids and float16 vectors. Search reads
a few rows per query term and per candidate section, and scores them with numpy; the statistics BM25 needs are
stored, not counted at open. Section vectors are searched exactly with numpy from an in-memory matrix that is
reloaded only when the file changed (our own writes, or another process's, seen via `data_version`).
Layout 3 stores what repeats once: a paragraph's head terms once (not per sentence), paragraph ids and heading
paths only where they differ from their section's, postings in 4 bytes (at 100k chunks: 1,237 MB in layout 2,
958 MB in layout 3); every array read back is layout 2's, so search results are the same.
Layout 4 adds each section vector's int8 codes (`section_codes`, 26 MB at 100k chunks), which the exact vector
search scans first (rag/search/vector_scan.py): a quarter of the bytes per question, the same top k.
A store of layout 1 or 2 is rebuilt into the current layout on first open, a layout-3 store gets its codes added
in place (rag/search/store_migration.py): nothing is embedded again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import groupby
from operator import itemgetter
from pathlib import Path

import numpy as np

from rag.documents import Chunk, SourceDocument, SubChunk
from rag.search.blas import single_threaded_blas
from rag.search.bm25 import idf, query_stems, stemmed
from rag.search.paragraph_features import paragraph_features, policy_term_ids
from rag.search.section_index import Posting, SectionStats, Tokenizer, bm25_scores, top_rows
from rag.search.sentence_blocks import Candidates, StoredBlock, bm25_block_scores, build_block
from rag.search.sentences import Sentence, SentenceEvidence, chunk_sentences, rank_sentence_arrays
from rag.search.store import ChunkVectors, EmbeddingMismatch, Filters, StoredDocument
from rag.search.terms import question_terms
from rag.search.vector_scan import SectionCodes, top_k
from rag.search.word_links import QuestionLinks, WordLinks

SCHEMA_VERSION = 4  # bump when the tables change; an older file is migrated (store_migration.py) or refused
MIGRATES_FROM = (1, 2, 3)

# layout 4, per document: its sections' vectors as int8 codes (row order of section_vectors) and float32
# (scale, weight) pairs (rag/search/vector_scan.py)
CODES_TABLE = """CREATE TABLE IF NOT EXISTS section_codes (
    doc INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    codes BLOB NOT NULL,
    scales BLOB NOT NULL
)"""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL UNIQUE,
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
    text TEXT,   -- NULL when `parts` rebuilds it from the sub-chunks' texts: the text is stored once
    parts TEXT,  -- JSON: the chunk's text as sub-chunk ordinals and the strings between them (headings, breaks)
    page INTEGER
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
-- layout 3: a paragraph's section by row id, its id only when not the Chunker's `<chunk id>.<ordinal>`, its heading
-- path only where it differs from its section's (as [components kept, *components added]); no index on text ids
CREATE TABLE IF NOT EXISTS subchunks (
    id INTEGER PRIMARY KEY,
    chunk INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    sub_id TEXT,
    ordinal INTEGER NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    heading TEXT,
    page INTEGER
);
CREATE INDEX IF NOT EXISTS subchunks_chunk ON subchunks(chunk);
-- per document: its sections' row ids, chunk ids (newline-separated), token counts and vectors (float32)
CREATE TABLE IF NOT EXISTS section_vectors (
    doc INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
    rows BLOB NOT NULL,
    chunk_ids TEXT NOT NULL,
    lengths BLOB NOT NULL,
    vectors BLOB NOT NULL
);
-- per term and document: the sections holding the term (as offsets from `first`), with its count in head (title +
-- headings) and body (rag/search/section_index.py)
CREATE TABLE IF NOT EXISTS section_postings (
    term TEXT NOT NULL,
    doc INTEGER NOT NULL,
    first INTEGER NOT NULL,
    rows BLOB NOT NULL,
    counts BLOB NOT NULL,
    PRIMARY KEY (term, doc)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS section_postings_doc ON section_postings(doc);
-- the sentences' stems (Snowball), with their sentence frequency
CREATE TABLE IF NOT EXISTS vocabulary (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL);
-- per section: its sentences (rag/search/sentence_blocks.py)
CREATE TABLE IF NOT EXISTS sentence_blocks (
    chunk INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    subs TEXT NOT NULL,
    meta BLOB NOT NULL,
    tokens BLOB NOT NULL,
    vectors BLOB NOT NULL,
    scales BLOB NOT NULL,
    paragraph_norms BLOB NOT NULL,
    shared_heads INTEGER NOT NULL
);
""" + CODES_TABLE + ";\n"

# A word in the title or heading path says far more about what a section is about than one in its body
# (doc2dial first turns: weight 8 beat 1, 2 and 4; see benchmarks/RESULTS.md).
_SECTION_WEIGHTS = (8.0, 1.0)
_STATS = ("sections", "section_tokens", "sentences", "sentence_tokens")
_MMAP_BYTES = 1 << 31


def fts_query(text: str) -> str:
    """The question's topic words as an FTS5 OR-query, each quoted: what the section BM25 scores (as FTS5 would)."""
    return " OR ".join(f'"{t}"' for t in question_terms(text)[:64])


@dataclass(slots=True)
class _LinkCache:
    """What the word links of `source` need from the store as it was when `sections` was read: each chunk's place in
    their scope, the term id of each word they point to, and each question word's links as term ids and weights."""

    sections: _Sections
    source: WordLinks
    in_scope: dict[str, bool] = field(default_factory=dict)
    term_ids: dict[str, int] | None = None
    arrays: dict[str, tuple[np.ndarray, np.ndarray] | None] = field(default_factory=dict)

    def arrays_of(self, stem: str) -> tuple[np.ndarray, np.ndarray] | None:
        if stem not in self.arrays:
            ids = self.term_ids or {}
            pairs = sorted((ids[p], w) for p, w in self.source.links.get(stem, {}).items() if p in ids)
            self.arrays[stem] = (np.array([i for i, _ in pairs], dtype=np.int64),
                                 np.array([w for _, w in pairs])) if pairs else None
        return self.arrays[stem]


@dataclass(slots=True)
class _Sections:
    """Every section in row-id order, as loaded at open: what vector and lexical search need in memory."""

    rows: np.ndarray  # int64 row ids, ascending
    ids: list[str]
    lengths: np.ndarray  # tokens per section (FTS5's tokenizer)
    matrix: np.ndarray  # float32 vectors
    codes: SectionCodes  # the same vectors as int8 codes, scanned first
    doc_of: np.ndarray  # index into `docs` per section
    docs: list[tuple[frozenset[str], frozenset[str]]]  # (tags, groups) of each document, lowercased
    stats: SectionStats


@dataclass(frozen=True, slots=True)
class CandidateSentences:
    """The candidate sections' stored sentences as flat arrays, with what BM25 over them needs: the query terms'
    ids in the vocabulary and their document frequencies, the store's sentence count and mean sentence length."""

    sentences: Candidates
    chunk_ids: list[str]  # the section of each block, in the order of `sentences`
    dim: int
    term_ids: dict[str, int]  # query stem -> vocabulary id (stems the store has never seen are absent)
    df: dict[int, int]
    n_docs: int
    avg_len: float


class SQLiteKnowledgeStore:
    """KnowledgeStore on one SQLite file; safe to reopen and safe against a crash mid-ingest."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        single_threaded_blas()  # rag/search/blas.py: small products, one core each
        if str(path) != ":memory:":
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a data dir that cannot be created: one line, not a traceback
                raise RuntimeError(f"cannot create the folder of the knowledge store {path}: "
                                   f"{exc.strerror or exc}") from exc
        try:
            version, has_tables = _layout(self.path) if str(path) != ":memory:" else (0, False)
            if has_tables and version in MIGRATES_FROM:
                from rag.search.store_migration import migrate

                migrate(self.path, version)
            elif has_tables and version != SCHEMA_VERSION:
                raise RuntimeError(
                    f"the knowledge store {path} has layout version {version}, this navibot needs "
                    f"{SCHEMA_VERSION}: ingest the documents again into a new store file")
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # Reads through a memory map, not a read() call and a copy per 4 KB page: the first search after opening
            # reads every section vector (130 MB at 100k chunks; 98 -> 51 ms) and each search a few MB of
            # postings and sentence blocks (3.3 -> 2.7 ms). SQLite caps it at its own limit (2 GB by default).
            self._db.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self._tokenizer = Tokenizer(self._db)
        except sqlite3.DatabaseError as exc:
            raise RuntimeError(f"cannot open the knowledge store {path}: {exc}") from exc
        self._lock = threading.RLock()
        self._sections: _Sections | None = None
        self._row_of: dict[str, int] = {}
        self._stats: dict[str, int] = {}
        self._mask_cache: dict[Filters, np.ndarray] = {}
        # The last candidates' sentences as joined, with the sections they were read under: a follow-up ranks the
        # same candidates twice (rag/search/retrieve.py FOLLOW_UP_WEIGHT), and the second read is then free.
        self._joined: tuple[_Sections, list[int], Candidates, list[str]] | None = None
        self._links_cache: _LinkCache | None = None  # rag/search/word_links.py, for the sections read last
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
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self.write_document((doc.doc_id, doc.title, doc.url, doc.source_path, doc.content_hash, doc.updated,
                             json.dumps(doc.tags), json.dumps(doc.groups), json.dumps(doc.metadata, default=str),
                             now), chunks, vectors)

    def write_document(self, row: tuple[object, ...], chunks: list[Chunk], vectors: ChunkVectors) -> None:
        """Insert or replace a document from its `documents` row (doc_id, title, url, source_path, content_hash,
        updated, tags, groups, metadata as JSON, ingested_at), in one transaction. Migration copies rows with it."""
        sentences = [sentence for chunk in chunks for sentence in chunk_sentences(chunk)]
        if len(chunks) != len(vectors.chunks) or len(sentences) != len(vectors.sentences):
            raise ValueError("one vector per chunk and one per sentence are required")
        chunk_vecs = np.asarray(vectors.chunks, dtype=np.float32)
        sentence_vecs = np.asarray(vectors.sentences, dtype=np.float32)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                stats = self._read_stats()
                self._delete(str(row[0]), stats)
                doc = self._db.execute(
                    "INSERT INTO documents(doc_id, title, url, source_path, content_hash, updated, tags, groups,"
                    " metadata, ingested_at) VALUES (?,?,?,?,?,?,?,?,?,?)", row).lastrowid
                sections: list[tuple[int, str, str]] = []
                for chunk in chunks:
                    parts = text_parts(chunk)
                    cur = self._db.execute(
                        "INSERT INTO chunks(chunk_id, doc_id, ordinal, heading_path, text, parts, page)"
                        " VALUES (?,?,?,?,?,?,?)",
                        (chunk.chunk_id, chunk.doc_id, chunk.ordinal, json.dumps(chunk.heading_path),
                         chunk.text if parts is None else None, None if parts is None else json.dumps(parts),
                         chunk.page))
                    assert cur.lastrowid is not None
                    sections.append((cur.lastrowid, chunk.heading_text, chunk.text))
                    self._db.executemany(
                        "INSERT INTO subchunks(chunk, sub_id, ordinal, kind, text, heading, page)"
                        " VALUES (?,?,?,?,?,?,?)",
                        [(cur.lastrowid, None if sub.sub_id == f"{chunk.chunk_id}.{sub.ordinal}" else sub.sub_id,
                          sub.ordinal, sub.kind, sub.text, stored_heading(chunk.heading_path, sub.heading_path),
                          sub.page) for sub in chunk.subchunks])
                postings, lengths = self._tokenizer.sections(sections)
                self._db.executemany("INSERT INTO section_postings(term, doc, first, rows, counts) VALUES (?,?,?,?,?)",
                                     [(term, doc, *p.encode()) for term, p in postings.items()])
                rows = [r for r, _, _ in sections]
                self._db.execute(
                    "INSERT INTO section_vectors(doc, rows, chunk_ids, lengths, vectors) VALUES (?,?,?,?,?)",
                    (doc, np.array(rows, dtype=np.int64).tobytes(), "\n".join(c.chunk_id for c in chunks),
                     np.array([lengths[r] for r in rows], dtype=np.int64).tobytes(), chunk_vecs.tobytes()))
                self._db.execute("INSERT INTO section_codes(doc, codes, scales) VALUES (?,?,?)",
                                 (doc, *SectionCodes.of(chunk_vecs.reshape(len(rows), -1)).encode()))
                stats["sections"] += len(rows)
                stats["section_tokens"] += sum(lengths.values())
                self._write_sentences(chunks, rows, sentences, sentence_vecs, stats)
                self._write_stats(stats)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLITE_FULL already rolled it back: a ROLLBACK would hide the cause
                    self._db.execute("ROLLBACK")
                raise
            self._writes += 1

    def _write_sentences(self, chunks: list[Chunk], rows: list[int], sentences: list[Sentence], vectors: np.ndarray,
                         stats: dict[str, int]) -> None:
        heads: dict[str, list[str]] = {}  # a paragraph's sentences share its head: stemmed once
        stems = [(heads[s.head] if s.head in heads else heads.setdefault(s.head, stemmed(s.head)), stemmed(s.text))
                 for s in sentences]
        df: Counter[str] = Counter()
        for head, body in stems:
            df.update(set(head) | set(body))
        ids = self._term_ids(list(df))
        self._db.executemany("UPDATE vocabulary SET df = df + ? WHERE id = ?", [(n, ids[t]) for t, n in df.items()])
        by_chunk: dict[str, list[int]] = {}
        for i, sentence in enumerate(sentences):
            by_chunk.setdefault(sentence.chunk_id, []).append(i)
        blocks = []
        for chunk, row in zip(chunks, rows, strict=True):
            picked = by_chunk.get(chunk.chunk_id, [])
            if not picked:
                continue
            block = build_block([sentences[i].sub_id for i in picked], [[ids[t] for t in stems[i][0]] for i in picked],
                                [[ids[t] for t in stems[i][1]] for i in picked], vectors[picked], chunk.chunk_id)
            blocks.append((row, *block.row()))
        self._db.executemany("INSERT INTO sentence_blocks(chunk, subs, meta, tokens, vectors, scales,"
                             " paragraph_norms, shared_heads) VALUES (?,?,?,?,?,?,?,?)", blocks)
        stats["sentences"] += len(sentences)
        stats["sentence_tokens"] += sum(len(h) + len(b) for h, b in stems)

    def _term_ids(self, terms: list[str]) -> dict[str, int]:
        """Vocabulary ids of `terms`, adding the new ones (df 0); ids are never reused."""
        self._db.executemany("INSERT OR IGNORE INTO vocabulary(term, df) VALUES (?, 0)", [(t,) for t in terms])
        return self._lookup(terms)

    def _lookup(self, terms: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for start in range(0, len(terms), 500):
            part = terms[start:start + 500]
            found.update(self._db.execute(
                f"SELECT term, id FROM vocabulary WHERE term IN ({','.join('?' * len(part))})", part).fetchall())
        return found

    def _read_stats(self) -> dict[str, int]:
        row = self._db.execute("SELECT value FROM meta WHERE key='stats'").fetchone()
        stored = json.loads(row[0]) if row else {}
        return {key: int(stored.get(key, 0)) for key in _STATS}

    def _write_stats(self, stats: dict[str, int]) -> None:
        self._db.execute("INSERT INTO meta(key, value) VALUES('stats', ?)"
                         " ON CONFLICT(key) DO UPDATE SET value = excluded.value", (json.dumps(stats),))

    def _delete(self, doc_id: str, stats: dict[str, int]) -> None:
        found = self._db.execute("SELECT id FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
        if found is None:
            return
        doc = found[0]
        lengths = self._db.execute("SELECT lengths FROM section_vectors WHERE doc=?", (doc,)).fetchone()
        if lengths is not None:
            counts = np.frombuffer(lengths[0], dtype=np.int64)
            stats["sections"] -= len(counts)
            stats["section_tokens"] -= int(counts.sum())
        gone: Counter[int] = Counter()
        blocks = [StoredBlock(*row) for row in self._db.execute(
            "SELECT subs, meta, tokens, vectors, scales, paragraph_norms, shared_heads FROM sentence_blocks"
            " WHERE chunk IN (SELECT id FROM chunks WHERE doc_id=?)", (doc_id,))]
        if blocks:
            sentences = Candidates.join(blocks, None)
            stats["sentences"] -= len(sentences)
            stats["sentence_tokens"] -= int((sentences.head_lens + sentences.body_lens).sum())
            for terms in sentences.sentence_terms():
                gone.update(terms)
        if gone:
            self._db.executemany("UPDATE vocabulary SET df = df - ? WHERE id = ?", [(n, t) for t, n in gone.items()])
        self._db.execute("DELETE FROM sentence_blocks WHERE chunk IN (SELECT id FROM chunks WHERE doc_id=?)",
                         (doc_id,))
        self._db.execute("DELETE FROM section_postings WHERE doc=?", (doc,))
        self._db.execute("DELETE FROM section_vectors WHERE doc=?", (doc,))
        self._db.execute("DELETE FROM section_codes WHERE doc=?", (doc,))
        self._db.execute("DELETE FROM subchunks WHERE chunk IN (SELECT id FROM chunks WHERE doc_id=?)", (doc_id,))
        self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        self._db.execute("DELETE FROM documents WHERE id=?", (doc,))

    def delete_documents(self, doc_ids: list[str]) -> int:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                removed = 0
                stats = self._read_stats()
                for doc_id in doc_ids:
                    exists = self._db.execute("SELECT 1 FROM documents WHERE doc_id=?", (doc_id,)).fetchone()
                    if exists:
                        self._delete(doc_id, stats)
                        removed += 1
                self._write_stats(stats)
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

    def _refresh(self) -> _Sections:
        """The in-memory sections, reloaded when the file changed: one row per document, its tags and groups
        parsed once (not once per chunk), and the statistics read from `meta` (not counted)."""
        version = (self._db.execute("PRAGMA data_version").fetchone()[0], self._writes)
        if self._sections is not None and version == self._loaded_version:
            return self._sections
        rows = self._db.execute(
            "SELECT v.rows, v.chunk_ids, v.lengths, v.vectors, c.codes, c.scales, d.tags, d.groups"
            " FROM section_vectors v JOIN documents d ON d.id = v.doc LEFT JOIN section_codes c ON c.doc = v.doc"
            " ORDER BY v.doc").fetchall()
        docs = [(frozenset(t.lower() for t in json.loads(tags)), frozenset(g.lower() for g in json.loads(groups)))
                for *_, tags, groups in rows]
        row_ids = [np.frombuffer(r[0], dtype=np.int64) for r in rows]
        all_rows = np.concatenate(row_ids) if rows else np.zeros(0, dtype=np.int64)
        # Row-id order (the order chunks were written): documents in id order already are, unless rows were
        # renumbered; then sort (copying a 100k-chunk matrix costs ~50 ms at open).
        ascending = bool(np.all(all_rows[1:] > all_rows[:-1]))
        order = np.arange(len(all_rows)) if ascending else np.argsort(all_rows, kind="stable")
        ids = [cid for r in rows for cid in r[1].split("\n")]
        vectors = [np.frombuffer(r[3], dtype=np.float32) for r in rows]
        dim = max((len(v) // len(r) for v, r in zip(vectors, row_ids, strict=True) if len(r)), default=0)
        matrix = (np.concatenate(vectors).reshape(len(all_rows), dim) if len(all_rows)
                  else np.zeros((0, 0), dtype=np.float32))
        lengths = (np.concatenate([np.frombuffer(r[2], dtype=np.int64) for r in rows]) if rows
                   else np.zeros(0, dtype=np.int64))
        doc_of = np.repeat(np.arange(len(rows)), [len(r) for r in row_ids])
        # a document without codes (none written: never so since layout 4) gets them here, in memory
        codes = SectionCodes.joined([
            SectionCodes.decode(r[4], r[5], dim) if r[4] is not None else SectionCodes.of(v.reshape(len(ri), dim))
            for r, v, ri in zip(rows, vectors, row_ids, strict=True) if len(ri)])
        if not ascending:
            matrix, lengths, doc_of, all_rows, ids = (matrix[order], lengths[order], doc_of[order], all_rows[order],
                                                      [ids[i] for i in order])
            codes = codes.take(order)
        self._stats = self._read_stats()
        self._sections = _Sections(
            rows=all_rows, ids=ids, lengths=lengths, matrix=matrix, codes=codes, doc_of=doc_of, docs=docs,
            stats=SectionStats.of(all_rows, lengths, self._stats["sections"], self._stats["section_tokens"]))
        # Python ints in one pass (int() per row was 85 ms at 100k); a row's id is found by its position instead
        self._row_of = dict(zip(ids, all_rows.tolist(), strict=True))
        self._mask_cache.clear()
        self._loaded_version = version
        return self._sections

    def _mask(self, filters: Filters) -> np.ndarray | None:
        """Which sections the filters allow, or None when they allow all: every chat question carries its chat's
        groups, and while no document is restricted those allow everything, at no cost."""
        if not filters.tags and not filters.groups:
            return None
        sections = self._refresh()  # clears the cache when the file changed
        mask = self._mask_cache.get(filters)
        if mask is None:
            allowed = np.array([(not filters.tags or bool(filters.tags & tags)) and
                                (not filters.groups or bool(filters.groups & groups))
                                for tags, groups in sections.docs], dtype=bool)
            mask = allowed[sections.doc_of] if len(allowed) else np.zeros(0, dtype=bool)
            self._mask_cache[filters] = mask
        return None if bool(mask.all()) else mask

    def vector_search(self, vector: np.ndarray, limit: int, filters: Filters) -> list[tuple[str, float]]:
        with self._lock:
            sections = self._refresh()
            matrix = sections.matrix
            if len(matrix) == 0:
                return []
            self._check_dims(matrix.shape[1], len(vector))
            top, scores = top_k(matrix, sections.codes, vector, limit, self._mask(filters))
            return [(sections.ids[i], float(s)) for i, s in zip(top.tolist(), scores.tolist(), strict=True)
                    if np.isfinite(s)]

    @staticmethod
    def _check_dims(stored: int, query: int) -> None:
        if stored != query:
            raise EmbeddingMismatch(
                f"query vector has {query} dims but the store holds {stored}-dim vectors; "
                "re-ingest with the configured embedding model")

    def lexical_search(self, query: str, limit: int, filters: Filters) -> list[tuple[str, float]]:
        """Sections by FTS5's BM25 over title + headings (weight 8) and body (1), from the stored postings: the
        scores FTS5 gave for the same OR-query, every matching section considered (filters applied exactly)."""
        words = question_terms(query)[:64]
        if not words:
            return []
        with self._lock:
            sections = self._refresh()
            phrases = [t for t in (self._tokenizer.word(w) for w in words) if t and " " not in t]
            if not phrases or not len(sections.rows):
                return []
            distinct = list(dict.fromkeys(phrases))
            found = self._db.execute(
                "SELECT term, first, rows, counts FROM section_postings"
                f" WHERE term IN ({','.join('?' * len(distinct))}) ORDER BY term, doc", distinct).fetchall()
            postings: dict[str, list[Posting]] = {t: [] for t in distinct}
            for term, rows in groupby(found, key=itemgetter(0)):  # a term's rows, one per document holding it
                postings[term] = [Posting.join(list(rows))]
            scores, matched = bm25_scores([postings[t] for t in phrases], sections.stats, _SECTION_WEIGHTS)
            mask = self._mask(filters)
            top = top_rows(scores, matched if mask is None else matched & mask, limit)
            return [(sections.ids[i], float(scores[i])) for i in top]

    def sentence_rankings(self, query: str, vector: np.ndarray | None,
                          chunk_ids: list[str]) -> tuple[list[str], list[str]]:
        evidence = self.sentence_evidence(query, vector, chunk_ids)
        return evidence.chunks_lexical, evidence.chunks_vector

    def candidate_sentences(self, terms: list[str], chunk_ids: list[str]) -> CandidateSentences | None:
        """The stored sentences of the given sections, read in one query and joined, with the BM25 statistics of
        `terms`; None when none of them has a sentence. What `sentence_evidence` scores (and what
        benchmarks/paragraph_ltr.py reads its features from)."""
        with self._lock:
            sections = self._refresh()
            wanted = sorted({self._row_of[c] for c in chunk_ids if c in self._row_of})
            joined = self._joined  # the same sections read again, unchanged since: reused (a store write reloads)
            reused = joined if joined is not None and joined[0] is sections and joined[1] == wanted else None
            blocks = self._db.execute(
                "SELECT chunk, subs, meta, tokens, vectors, scales, paragraph_norms, shared_heads FROM sentence_blocks"
                f" WHERE chunk IN ({','.join('?' * len(wanted))}) ORDER BY chunk", wanted).fetchall() \
                if wanted and reused is None else []
            ids = self._lookup(terms) if terms else {}
            df = dict(self._db.execute(f"SELECT id, df FROM vocabulary WHERE id IN ({','.join('?' * len(ids))})",
                                       list(ids.values())).fetchall()) if ids else {}
            n_docs, n_tokens = self._stats["sentences"], self._stats["sentence_tokens"]
        dim = sections.matrix.shape[1]
        if reused is not None:
            sentences, owners = reused[2], reused[3]
        else:
            if not blocks:
                return None
            owners = [sections.ids[sections.stats.position[row[0]]] for row in blocks]
            sentences = Candidates.join([StoredBlock(*row[1:]) for row in blocks], dim, owners)
            self._joined = (sections, wanted, sentences, owners)  # read-only from here on
        return CandidateSentences(sentences, owners, dim, ids, df, n_docs, n_tokens / n_docs if n_docs else 0.0)

    def sentence_evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str],
                          links: QuestionLinks | None = None) -> SentenceEvidence:
        """`links`: the question's learned word links (rag/search/word_links.py), a column of the paragraph ranking."""
        terms = query_stems(query)
        # The Retriever passes the question on the first line and the glossary's terms after it: the learned
        # paragraph ranking counts the question's own words apart (rag/search/paragraph_features.py).
        first, _, expansion = query.partition("\n")
        own = query_stems(first)
        found = self.candidate_sentences(list(dict.fromkeys(terms + own)), chunk_ids) if chunk_ids else None
        if found is None:
            return SentenceEvidence([], [], [], [], {})
        sentences, ids = found.sentences, found.term_ids
        scores = bm25_block_scores([ids[t] for t in terms if t in ids], sentences, found.df, found.n_docs,
                                   found.avg_len)
        sims = paragraph_sims = None
        if vector is not None:
            self._check_dims(found.dim, len(vector))
            direction = np.asarray(vector, dtype=np.float32)
            sims = sentences.vectors @ direction
            paragraph_sims = sentences.paragraph_sims(sims)
        idfs = {i: idf(found.n_docs, found.df[i]) for i in ids.values() if found.df.get(i, 0) > 0}
        # the glossary's policy terms, each counted whole by the learned ranking
        link_ids, linked = self._link_arrays(links, found.chunk_ids, sentences.chunk_of_paragraph)
        features = paragraph_features(sentences, scores, paragraph_sims, [ids[t] for t in own if t in ids], idfs,
                                      policy_term_ids(expansion, ids), link_ids, linked)
        return rank_sentence_arrays(found.chunk_ids, sentences.chunk_of_sentence,
                                    sentences.subs, sentences.paragraph_of_sentence, sentences.chunk_of_paragraph,
                                    scores, sims, paragraph_sims, features)

    def _link_arrays(self, links: QuestionLinks | None, owners: Sequence[str], chunk_of_paragraph: np.ndarray
                     ) -> tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray | None]:
        """Per question word, its linked words' term ids (sorted) and weights, and per candidate paragraph whether
        its section is in the links' scope; nothing when no candidate section is. Both are kept until the store
        changes: a turn only looks them up (a lookup per turn cost ~5 ms at 10k chunks)."""
        if links is None:
            return [], None
        with self._lock:
            sections = self._refresh()
            cache = self._links_cache
            if cache is None or cache.sections is not sections or cache.source is not links.source:
                cache = self._links_cache = _LinkCache(sections, links.source)
            missing = sorted({c for c in owners if c not in cache.in_scope})
            for start in range(0, len(missing), 500):
                part = missing[start:start + 500]
                for chunk_id, path in self._db.execute(
                        f"SELECT chunk_id, heading_path FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})",
                        part):
                    cache.in_scope[chunk_id] = links.source.covers(json.loads(path))
            in_scope = np.array([cache.in_scope.get(c, False) for c in owners], dtype=bool)
            if not in_scope.any():
                return [], None
            if cache.term_ids is None:  # every word the links point to, once
                cache.term_ids = self._lookup(sorted({p for ps in links.source.links.values() for p in ps}))
            arrays = [cache.arrays_of(stem) for stem in links.stems]
        return [a for a in arrays if a is not None], in_scope[chunk_of_paragraph]

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        if not chunk_ids:
            return []
        marks = ",".join("?" * len(chunk_ids))
        with self._lock:
            rows = self._db.execute(
                "SELECT c.chunk_id, c.doc_id, c.ordinal, c.heading_path, c.text, c.page, d.title, d.url, d.updated,"
                f" d.content_hash, d.tags, d.groups, c.parts FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"
                f" WHERE c.chunk_id IN ({marks})", chunk_ids).fetchall()
            subs = self._db.execute(
                "SELECT s.sub_id, c.chunk_id, s.ordinal, s.kind, s.text, s.heading, s.page, c.heading_path"
                f" FROM subchunks s JOIN chunks c ON c.id = s.chunk WHERE c.chunk_id IN ({marks})"
                " ORDER BY s.chunk, s.ordinal, s.id", chunk_ids).fetchall()
        by_chunk: dict[str, list[SubChunk]] = {}
        for sub_id, chunk_id, ordinal, kind, text, heading, page, chunk_path in subs:
            by_chunk.setdefault(chunk_id, []).append(
                SubChunk(sub_id or f"{chunk_id}.{ordinal}", chunk_id, ordinal, kind, text,
                         full_heading(json.loads(chunk_path), heading), page))
        chunks = {
            r[0]: Chunk(chunk_id=r[0], doc_id=r[1], ordinal=r[2], heading_path=json.loads(r[3]),
                        text=r[4] if r[12] is None else joined_parts(json.loads(r[12]), by_chunk.get(r[0], [])),
                        page=r[5],
                        title=r[6], url=r[7], updated=r[8], content_hash=r[9], tags=json.loads(r[10]),
                        groups=json.loads(r[11]), subchunks=by_chunk.get(r[0], []))
            for r in rows
        }
        return [chunks[c] for c in chunk_ids if c in chunks]

    def section_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every section's chunk id and vector (read-only), as searched: to export them, e.g. to a baseline."""
        with self._lock:
            sections = self._refresh()
            return list(sections.ids), sections.matrix

    def sentence_df(self) -> dict[str, int]:
        """Stem -> number of stored sentences holding it (for checks and tests)."""
        with self._lock:
            return dict(self._db.execute("SELECT term, df FROM vocabulary WHERE df > 0").fetchall())

    def generation(self) -> tuple[int, int]:
        """Changes whenever the file does (this store's writes or another process's): what is derived from the
        store, such as the spelling lexicon (rag/search/spelling.py), is rebuilt only then. A few µs."""
        with self._lock:
            return self._db.execute("PRAGMA data_version").fetchone()[0], self._writes

    def close(self) -> None:
        with self._lock:
            self._db.close()


def text_parts(chunk: Chunk) -> list[str | int] | None:
    """The chunk's text as its sub-chunks (by ordinal) and the strings between them, or None when it is not made
    of them (then the text is stored as is). The Chunker joins the sub-chunks' texts with the sub-headings they
    fall under: stored whole, every paragraph was on disk twice (a fifth of the file)."""
    ordinals = [sub.ordinal for sub in chunk.subchunks]
    if len(set(ordinals)) != len(ordinals):
        return None
    parts: list[str | int] = []
    position = 0
    for sub in chunk.subchunks:
        at = chunk.text.find(sub.text, position)
        if at < 0 or not sub.text:
            return None
        if at > position:
            parts.append(chunk.text[position:at])
        parts.append(sub.ordinal)
        position = at + len(sub.text)
    if position < len(chunk.text):
        parts.append(chunk.text[position:])
    return parts if joined_parts(parts, chunk.subchunks) == chunk.text else None


def stored_heading(section: list[str], paragraph: list[str]) -> str | None:
    """A paragraph's heading path as stored: None when it is its section's (most are), else [the number of the
    section's components it starts with, *the rest]. Stored whole, heading paths were a quarter of the
    paragraphs table."""
    if paragraph == section:
        return None
    kept = 0
    while kept < min(len(section), len(paragraph)) and section[kept] == paragraph[kept]:
        kept += 1
    return json.dumps([kept, *paragraph[kept:]])


def full_heading(section: list[str], stored: str | None) -> list[str]:
    if stored is None:
        return list(section)
    kept, *rest = json.loads(stored)
    return [*section[:kept], *rest]


def joined_parts(parts: list[str | int], subs: list[SubChunk]) -> str:
    texts = {sub.ordinal: sub.text for sub in subs}
    return "".join(p if isinstance(p, str) else texts[p] for p in parts)


def _layout(path: Path) -> tuple[int, bool]:
    """The file's layout version and whether it has any table (a new file has none)."""
    if not path.exists():
        return 0, False
    db = sqlite3.connect(str(path))
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        has_tables = db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None
    finally:
        db.close()
    return int(version), has_tables
