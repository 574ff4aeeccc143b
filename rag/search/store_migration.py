"""Rebuilds a knowledge store of an older layout into the current one, on first open.

A layout-3 store only lacks the int8 codes of its section vectors (layout 4): they are computed from the stored
float32 vectors and added in place, in one transaction (a crash or an error leaves the file at layout 3, to be
migrated on the next open), about a second per 10k chunks. Older layouts are rebuilt:

Everything the new layout needs is in the old file (texts, chunk and sentence vectors: layout 2's int8 sentence
vectors quantize back to the very same int8 values and scales), so nothing is embedded again: each document is
read from the old file and written with the current store's own write path into a new file next to it, which then
replaces the old one. A crash or an error midway leaves the old file untouched (the
half-built copy is removed on the next try); the two layouts are never mixed in one file.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from rag.documents import Chunk, SubChunk
from rag.search.store import ChunkVectors

log = logging.getLogger(__name__)


def migrate(path: Path, version: int) -> None:
    """Rebuild the layout-`version` store at `path` in the current layout (RuntimeError with a clear message if
    it cannot be read)."""
    from rag.search.sqlite_store import SCHEMA_VERSION, SQLiteKnowledgeStore

    if version == 3:
        add_section_codes(path)
        return
    if version not in (1, 2):
        raise RuntimeError(f"the knowledge store {path} has layout version {version}, which this navibot cannot "
                           "migrate: ingest the documents again into a new store file")
    target = path.with_name(path.name + ".migrating")
    for stale in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        stale.unlink(missing_ok=True)
    old = sqlite3.connect(str(path))
    try:
        docs = old.execute("SELECT doc_id, title, url, source_path, content_hash, updated, tags, groups, metadata,"
                           " ingested_at FROM documents ORDER BY rowid").fetchall()
        message = (f"the knowledge store {path} has layout {version}; rebuilding it in layout {SCHEMA_VERSION} "
                   f"({len(docs)} documents; smaller and faster to search; nothing is embedded again)")
        log.warning(message)
        print(f"navibot: {message}", file=sys.stderr, flush=True)
        new = SQLiteKnowledgeStore(target)
        try:
            embedder = old.execute("SELECT value FROM meta WHERE key='embedder'").fetchone()
            if embedder is not None:
                stored = json.loads(embedder[0])
                new.check_embedder(stored["name"], int(stored["dim"]))
            for row in tqdm(docs, desc="migrating store", unit="doc", disable=not sys.stderr.isatty(), leave=False):
                chunks, vectors = _read_document(old, row) if version == 1 else _read_layout_2(old, row)
                new.write_document(row, chunks, vectors)
        finally:
            new.close()
    except Exception as exc:  # a file it cannot read, or a document it cannot rebuild: the old file stays
        for partial in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
            partial.unlink(missing_ok=True)
        raise RuntimeError(f"cannot migrate the knowledge store {path} ({exc}): ingest the documents again into a "
                           "new store file") from exc
    finally:
        old.close()
    for leftover in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)  # the old file's: checkpointed when its last connection closed
    os.replace(target, path)
    log.warning("the knowledge store %s now has layout %s", path, SCHEMA_VERSION)


def add_section_codes(path: Path) -> None:
    """Layout 3 -> 4 in place: each document's section codes from its float32 section vectors."""
    from rag.search.sqlite_store import CODES_TABLE, SCHEMA_VERSION
    from rag.search.vector_scan import SectionCodes

    db = sqlite3.connect(str(path), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        docs = [doc for (doc,) in db.execute("SELECT doc FROM section_vectors ORDER BY doc")]
        message = (f"the knowledge store {path} has layout 3; adding the int8 codes of its section vectors "
                   f"(layout {SCHEMA_VERSION}: searched faster; {len(docs)} documents, nothing is embedded again)")
        log.warning(message)
        print(f"navibot: {message}", file=sys.stderr, flush=True)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(CODES_TABLE)
            for doc in tqdm(docs, desc="adding section codes", unit="doc", disable=not sys.stderr.isatty(),
                            leave=False):
                rows, vectors = db.execute("SELECT rows, vectors FROM section_vectors WHERE doc=?", (doc,)).fetchone()
                n = len(rows) // 8
                if n:
                    matrix = np.frombuffer(vectors, dtype=np.float32).reshape(n, -1)
                    db.execute("INSERT OR REPLACE INTO section_codes(doc, codes, scales) VALUES (?,?,?)",
                               (doc, *SectionCodes.of(matrix).encode()))
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    except (sqlite3.Error, ValueError) as exc:
        raise RuntimeError(f"cannot migrate the knowledge store {path} ({exc}): ingest the documents again into a "
                           "new store file") from exc
    finally:
        db.close()
    log.warning("the knowledge store %s now has layout %s", path, SCHEMA_VERSION)


def _read_document(old: sqlite3.Connection, doc: tuple[object, ...]) -> tuple[list[Chunk], ChunkVectors]:
    """One layout-1 document's chunks (with sub-chunks) and its chunk and sentence vectors, in written order."""
    doc_id, title, url, _, content_hash, updated, tags, groups = doc[:8]
    rows = old.execute("SELECT chunk_id, ordinal, heading_path, text, page, embedding FROM chunks WHERE doc_id=?"
                       " ORDER BY id", (doc_id,)).fetchall()
    subs: dict[str, list[SubChunk]] = {}
    for sub_id, chunk_id, ordinal, kind, text, heading, page in old.execute(
            "SELECT sub_id, chunk_id, ordinal, kind, text, heading_path, page FROM subchunks WHERE chunk_id IN"
            " (SELECT chunk_id FROM chunks WHERE doc_id=?) ORDER BY id", (doc_id,)):
        subs.setdefault(chunk_id, []).append(SubChunk(sub_id, chunk_id, ordinal, kind, text, json.loads(heading), page))
    chunks = [Chunk(chunk_id=r[0], doc_id=str(doc_id), ordinal=r[1], heading_path=json.loads(r[2]), text=r[3],
                    page=r[4], title=str(title), url=url if url is None else str(url),
                    updated=updated if updated is None else str(updated), content_hash=str(content_hash),
                    tags=json.loads(str(tags)), groups=json.loads(str(groups)), subchunks=subs.get(r[0], []))
              for r in rows]
    sentences = old.execute("SELECT embedding FROM sentences WHERE chunk_id IN (SELECT chunk_id FROM chunks"
                            " WHERE doc_id=?) ORDER BY id", (doc_id,)).fetchall()
    dim = len(rows[0][5]) // 4 if rows else 0
    return chunks, ChunkVectors(
        np.frombuffer(b"".join(r[5] for r in rows), dtype=np.float32).reshape(len(rows), dim),
        np.frombuffer(b"".join(r[0] for r in sentences), dtype=np.float32).reshape(len(sentences), dim))


def _read_layout_2(old: sqlite3.Connection, doc: tuple[object, ...]) -> tuple[list[Chunk], ChunkVectors]:
    """One layout-2 document (paragraph rows with their own ids and heading paths, int8 sentence blocks)."""
    from rag.search.sentence_blocks import dequantize
    from rag.search.sqlite_store import joined_parts

    doc_id, title, url, _, content_hash, updated, tags, groups = doc[:8]
    rows = old.execute("SELECT id, chunk_id, ordinal, heading_path, text, parts, page FROM chunks WHERE doc_id=?"
                       " ORDER BY id", (doc_id,)).fetchall()
    subs: dict[str, list[SubChunk]] = {}
    for sub_id, chunk_id, ordinal, kind, text, heading, page in old.execute(
            "SELECT sub_id, chunk_id, ordinal, kind, text, heading_path, page FROM subchunks WHERE chunk_id IN"
            " (SELECT chunk_id FROM chunks WHERE doc_id=?) ORDER BY chunk_id, ordinal", (doc_id,)):
        subs.setdefault(chunk_id, []).append(SubChunk(sub_id, chunk_id, ordinal, kind, text, json.loads(heading), page))
    chunks = [Chunk(chunk_id=r[1], doc_id=str(doc_id), ordinal=r[2], heading_path=json.loads(r[3]),
                    text=r[4] if r[5] is None else joined_parts(json.loads(r[5]), subs.get(r[1], [])),
                    page=r[6], title=str(title), url=url if url is None else str(url),
                    updated=updated if updated is None else str(updated), content_hash=str(content_hash),
                    tags=json.loads(str(tags)), groups=json.loads(str(groups)), subchunks=subs.get(r[1], []))
              for r in rows]
    stored = old.execute("SELECT v.chunk_ids, v.vectors FROM section_vectors v JOIN documents d ON d.id = v.doc"
                         " WHERE d.doc_id=?", (doc_id,)).fetchone()
    ids = stored[0].split("\n") if stored and rows else []
    dim = len(stored[1]) // 4 // len(ids) if ids else 0
    by_id = dict(zip(ids, np.frombuffer(stored[1], dtype=np.float32).reshape(len(ids), dim), strict=True)) \
        if ids else {}
    blocks = {chunk: (vectors, scales) for chunk, vectors, scales in old.execute(
        "SELECT chunk, vectors, scales FROM sentence_blocks WHERE chunk IN (SELECT id FROM chunks WHERE doc_id=?)",
        (doc_id,))}
    sentence_rows = []
    for r in rows:  # in the order the sentences were written: section after section
        if r[0] in blocks:
            scales = np.frombuffer(blocks[r[0]][1], dtype=np.float32)
            quantized = np.frombuffer(blocks[r[0]][0], dtype=np.int8).reshape(len(scales), dim)
            sentence_rows.append(dequantize(quantized, scales))
    return chunks, ChunkVectors(
        np.array([by_id[r[1]] for r in rows], dtype=np.float32).reshape(len(rows), dim),
        np.concatenate(sentence_rows) if sentence_rows else np.zeros((0, dim), dtype=np.float32))
