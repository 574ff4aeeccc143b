"""KnowledgeStore on MongoDB: documents and section chunks (with sub-chunks, sentences and vectors) in two
collections, searched with Atlas Vector Search and Atlas Search.

Layout (one chunk document holds everything retrieval and citation need, so a hit costs one read):
- `documents`: {_id: doc_id, title, url, source_path, content_hash, updated, tags, groups, metadata, chunk_count,
  subchunk_count, ingested_at}
- `chunks`: {_id: chunk_id, doc_id, ordinal, title, heading ("Title > heading path", boosted in $search),
  heading_path, text, url, page, updated, content_hash, tags/groups (lowercased: the filter fields),
  labels {tags, groups} (as written), subchunks [{sub_id, ordinal, kind, text, heading_path, page}],
  sentences [{sub_id, head, body (stemmed terms, space-separated), length, vector (float32 bytes)}],
  embedding [floats]}
- `terms`: {_id: stemmed term, df} and `meta`: {_id: "embedder"} and {_id: "sentence_stats", count, length}:
  the whole store's BM25 statistics for ranking candidate sentences, as the SQLite store keeps them.

Writes are not wrapped in a transaction (a plain replica set or Atlas would allow one; mongomock and a standalone
mongod do not): a document is replaced by upserting its chunks, deleting its other chunks, then writing its
`documents` row last. A crash in between leaves the old content hash, so the next ingest redoes the document.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np
from pymongo import DeleteMany, ReplaceOne, UpdateOne
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import OperationFailure, PyMongoError

from rag.documents import Chunk, SourceDocument, SubChunk
from rag.mongo import pipelines
from rag.mongo.config import MongoConfig, MongoUnavailable
from rag.mongo.connection import MongoConnection
from rag.mongo.indexes import (
    CHUNKS,
    DOCUMENTS,
    META,
    TERMS,
    SearchIndexError,
    ensure_knowledge_indexes,
    search_index_states,
)
from rag.mongo.pipelines import SearchOptions
from rag.search.bm25 import bm25_scores_joined, query_stems, stemmed
from rag.search.sentences import SentenceEvidence, chunk_sentences, rank_sentences
from rag.search.store import ChunkVectors, EmbeddingMismatch, Filters, StoredDocument
from rag.search.word_links import QuestionLinks

log = logging.getLogger(__name__)
T = TypeVar("T")

_CHUNK_FIELDS = {"sentences": 0, "embedding": 0}  # what get_chunks does not need to read


def _lower(values: list[str]) -> list[str]:
    return sorted({v.lower() for v in values})


def chunk_document(doc: SourceDocument, chunk: Chunk, vector: np.ndarray,
                   sentences: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "_id": chunk.chunk_id, "doc_id": doc.doc_id, "ordinal": chunk.ordinal, "title": chunk.title,
        "heading": chunk.heading_text, "heading_path": chunk.heading_path, "text": chunk.text, "url": chunk.url,
        "page": chunk.page, "updated": chunk.updated, "content_hash": doc.content_hash,
        "tags": _lower(doc.tags), "groups": _lower(doc.groups), "labels": {"tags": doc.tags, "groups": doc.groups},
        "subchunks": [{"sub_id": s.sub_id, "ordinal": s.ordinal, "kind": s.kind, "text": s.text,
                       "heading_path": s.heading_path, "page": s.page} for s in chunk.subchunks],
        "sentences": sentences,
        "embedding": [float(x) for x in vector],
    }


def chunk_from_document(row: dict[str, Any]) -> Chunk:
    labels = row.get("labels") or {}
    return Chunk(
        chunk_id=row["_id"], doc_id=row["doc_id"], ordinal=row["ordinal"], title=row["title"],
        heading_path=list(row["heading_path"]), text=row["text"], url=row.get("url"), page=row.get("page"),
        updated=row.get("updated"), content_hash=row.get("content_hash", ""),
        tags=list(labels.get("tags", row.get("tags", []))), groups=list(labels.get("groups", row.get("groups", []))),
        subchunks=[SubChunk(s["sub_id"], row["_id"], s["ordinal"], s["kind"], s["text"], list(s["heading_path"]),
                            s.get("page")) for s in row.get("subchunks", [])])


def _sentence_terms(chunk_rows: list[dict[str, Any]]) -> tuple[Counter[str], int, int]:
    """Document frequencies (a term counts once per sentence), sentence count and total length of chunks."""
    df: Counter[str] = Counter()
    count = length = 0
    for row in chunk_rows:
        for s in row.get("sentences", []):
            df.update(set(s["head"].split()) | set(s["body"].split()))
            count += 1
            length += s["length"]
    return df, count, length


class SearchUnavailable(RuntimeError):
    """The deployment cannot run the search stages, or its search indexes are not there yet."""


class AsyncMongoKnowledge:
    """The store's logic, as coroutines on an async database handle (pymongo's AsyncDatabase or a test fake)."""

    def __init__(self, db: AsyncDatabase[dict[str, Any]], options: SearchOptions,
                 server_version: tuple[int, ...] = (8, 1), host: str = "test") -> None:
        self.db = db
        self.host = host
        self._indexes_seen = False  # the search indexes were found queryable once
        self.options = options
        # $rankFusion exists from MongoDB 8.0; below that it is not even tried. Tried once otherwise: remembered.
        self.rank_fusion: bool | None = None if options.rank_fusion and server_version >= (8, 0) else False
        self._embedder: dict[str, Any] | None = None

    async def prepare(self) -> None:
        await ensure_knowledge_indexes(self.db)

    # -- writing -------------------------------------------------------------------------------------------

    async def check_embedder(self, name: str, dim: int) -> None:
        stored = await self.db[META].find_one({"_id": "embedder"})
        wanted = {"name": name, "dim": dim}
        changed = stored is not None and {"name": stored.get("name"), "dim": stored.get("dim")} != wanted
        if changed and await self.db[CHUNKS].find_one({}, {"_id": 1}) is not None:  # an empty store may switch
            assert stored is not None
            raise EmbeddingMismatch(
                f"the MongoDB knowledge store (database {self.db.name}) was built with embedding model "
                f"{stored.get('name')} ({stored.get('dim')} dims) but {name} ({dim} dims) is configured now; "
                "ingest the documents into a new database (NAVIBOT_MONGODB_DATABASE) after changing the model, "
                "and run `navibot db init` there")
        if stored is None or stored.get("name") != name or stored.get("dim") != dim:
            await self.db[META].replace_one({"_id": "embedder"}, {"_id": "embedder", **wanted}, upsert=True)
        self._embedder = wanted

    async def replace_document(self, doc: SourceDocument, chunks: list[Chunk], vectors: ChunkVectors) -> None:
        sentences = [s for chunk in chunks for s in chunk_sentences(chunk)]
        if len(chunks) != len(vectors.chunks) or len(sentences) != len(vectors.sentences):
            raise ValueError("one vector per chunk and one per sentence are required")
        sentence_vecs = np.asarray(vectors.sentences, dtype=np.float32)
        by_chunk: dict[str, list[dict[str, Any]]] = {c.chunk_id: [] for c in chunks}
        for sentence, vec in zip(sentences, sentence_vecs, strict=True):
            head, body = stemmed(sentence.head), stemmed(sentence.text)
            # Terms as one space-separated string: a third smaller in BSON than an array of strings, and every
            # question reads the sentences of all its candidate sections.
            by_chunk[sentence.chunk_id].append({"sub_id": sentence.sub_id, "head": " ".join(head),
                                                "body": " ".join(body), "length": len(head) + len(body),
                                                "vector": vec.tobytes()})
        rows = [chunk_document(doc, chunk, vec, by_chunk[chunk.chunk_id])
                for chunk, vec in zip(chunks, np.asarray(vectors.chunks, dtype=np.float32), strict=True)]
        old = await self.db[CHUNKS].find({"doc_id": doc.doc_id}, {"sentences.head": 1, "sentences.body": 1,
                                                                   "sentences.length": 1}).to_list(None)
        if rows:
            await self.db[CHUNKS].bulk_write([ReplaceOne({"_id": r["_id"]}, r, upsert=True) for r in rows],
                                             ordered=False)
        await self.db[CHUNKS].delete_many({"doc_id": doc.doc_id, "_id": {"$nin": [r["_id"] for r in rows]}})
        await self._update_stats(old, rows)
        await self.db[DOCUMENTS].replace_one({"_id": doc.doc_id}, {
            "_id": doc.doc_id, "title": doc.title, "url": doc.url, "source_path": doc.source_path,
            "content_hash": doc.content_hash, "updated": doc.updated, "tags": doc.tags, "groups": doc.groups,
            "metadata": {str(k): str(v) if not isinstance(v, (int, float, bool, str)) else v
                         for k, v in doc.metadata.items()},
            "chunk_count": len(chunks), "subchunk_count": sum(len(c.subchunks) for c in chunks),
            "ingested_at": datetime.now(UTC)}, upsert=True)

    async def _update_stats(self, removed: list[dict[str, Any]], added: list[dict[str, Any]]) -> None:
        gone, gone_count, gone_length = _sentence_terms(removed)
        new, new_count, new_length = _sentence_terms(added)
        delta = Counter(new)
        delta.subtract(gone)
        ops: list[Any] = [UpdateOne({"_id": t}, {"$inc": {"df": n}}, upsert=True) for t, n in delta.items() if n]
        fallen = [t for t, n in delta.items() if n < 0]
        if fallen:  # only terms that lost sentences can reach 0: found by _id, no scan of the collection
            ops.append(DeleteMany({"_id": {"$in": fallen}, "df": {"$lte": 0}}))
        if ops:
            await self.db[TERMS].bulk_write(ops, ordered=True)
        if new_count != gone_count or new_length != gone_length:
            await self.db[META].update_one(
                {"_id": "sentence_stats"},
                {"$inc": {"count": new_count - gone_count, "length": new_length - gone_length}}, upsert=True)

    async def delete_documents(self, doc_ids: list[str]) -> int:
        removed = 0
        for doc_id in doc_ids:
            if await self.db[DOCUMENTS].find_one({"_id": doc_id}, {"_id": 1}) is None:
                continue
            old = await self.db[CHUNKS].find({"doc_id": doc_id}, {"sentences.head": 1, "sentences.body": 1,
                                                                   "sentences.length": 1}).to_list(None)
            await self.db[CHUNKS].delete_many({"doc_id": doc_id})
            await self._update_stats(old, [])
            await self.db[DOCUMENTS].delete_one({"_id": doc_id})
            removed += 1
        return removed

    # -- reading -------------------------------------------------------------------------------------------

    async def document_hashes(self) -> dict[str, str]:
        rows = await self.db[DOCUMENTS].find({}, {"content_hash": 1}).to_list(None)
        return {r["_id"]: r["content_hash"] for r in rows}

    async def documents(self) -> list[StoredDocument]:
        rows = await self.db[DOCUMENTS].find(
            {}, {"title": 1, "content_hash": 1, "source_path": 1, "chunk_count": 1, "groups": 1, "url": 1, "updated": 1}
        ).sort("_id", 1).to_list(None)
        return [StoredDocument(r["_id"], r["title"], r["content_hash"], r.get("source_path"), r.get("chunk_count", 0),
                               tuple(r.get("groups") or ("all",)), r.get("url"), r.get("updated")) for r in rows]

    async def counts(self) -> dict[str, int]:
        subchunks = await (await self.db[DOCUMENTS].aggregate(
            [{"$group": {"_id": None, "n": {"$sum": "$subchunk_count"}}}])).to_list(None)
        return {"documents": await self.db[DOCUMENTS].count_documents({}),
                "chunks": await self.db[CHUNKS].count_documents({}),
                "subchunks": int(subchunks[0]["n"]) if subchunks else 0}

    async def _check_dims(self, query_dim: int) -> None:
        if self._embedder is None:
            self._embedder = await self.db[META].find_one({"_id": "embedder"}) or {}
        stored = self._embedder.get("dim")
        if stored is not None and stored != query_dim:
            raise EmbeddingMismatch(f"query vector has {query_dim} dims but the store holds {stored}-dim vectors; "
                                    "re-ingest with the configured embedding model")

    async def _aggregate(self, pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
        cursor = await self.db[CHUNKS].aggregate(pipeline)
        return list(await cursor.to_list(None))

    async def _search(self, pipeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run a search pipeline; a server that cannot search, or no results because the search indexes do not
        exist yet (Atlas then answers with nothing rather than an error), become one plain SearchUnavailable."""
        try:
            rows = await self._aggregate(pipeline)
        except OperationFailure as exc:
            raise SearchUnavailable(
                f"MongoDB at {self.host} cannot search: {(exc.details or {}).get('errmsg') or exc}; the backend "
                "needs MongoDB Atlas or the mongodb/mongodb-atlas-local image, prepared with `navibot db init`"
            ) from exc
        if not rows and not self._indexes_seen:
            await self._check_search_indexes()
        return rows

    async def _check_search_indexes(self) -> None:
        names = [self.options.vector_index, self.options.search_index]
        try:
            states = {s.name: s for s in await search_index_states(self.db[CHUNKS])}
        except SearchIndexError as exc:
            raise SearchUnavailable(str(exc)) from exc
        if all((s := states.get(n)) is not None and s.queryable for n in names):
            self._indexes_seen = True
            return
        raise SearchUnavailable(f"the search indexes {', '.join(names)} of MongoDB database {self.db.name} are "
                                "missing or not queryable yet: run `navibot db init` (or `navibot db status` to see "
                                "their state)")

    async def vector_search(self, vector: np.ndarray, limit: int, filters: Filters) -> list[tuple[str, float]]:
        await self._check_dims(len(vector))
        rows = await self._search(pipelines.vector_pipeline(_floats(vector), limit, filters, self.options))
        # Atlas reports cosine similarity as (1 + cos) / 2; the protocol speaks cosine.
        return [(str(r["_id"]), 2.0 * float(r["score"]) - 1.0) for r in rows]

    async def lexical_search(self, query: str, limit: int, filters: Filters) -> list[tuple[str, float]]:
        text = pipelines.search_query(query)
        if not text:
            return []
        rows = await self._search(pipelines.lexical_pipeline(text, limit, filters, self.options))
        return [(str(r["_id"]), float(r["score"])) for r in rows]

    async def candidate_rankings(self, query: str, vector: np.ndarray | None, limit: int,
                                 filters: Filters) -> tuple[list[str], list[str]]:
        """Section ids by vector and by full text: one $rankFusion round trip when the server has the stage,
        else both searches at once on the event loop."""
        text = pipelines.search_query(query)
        if vector is not None and text and self.rank_fusion is not False:
            await self._check_dims(len(vector))
            try:
                rows = await self._aggregate(
                    pipelines.rank_fusion_pipeline(_floats(vector), text, limit, filters, self.options))
            except OperationFailure as exc:
                if self.rank_fusion:  # it worked before: a real failure, not a missing stage
                    raise SearchUnavailable(f"MongoDB at {self.host} cannot search: "
                                            f"{(exc.details or {}).get('errmsg') or exc}") from exc
                self.rank_fusion = False
                log.info("$rankFusion is not available on this server (%s); searching twice and fusing in the app",
                         (exc.details or {}).get("errmsg", exc))
            else:
                if not rows and not self._indexes_seen:
                    await self._check_search_indexes()
                ranks = pipelines.ranks_from_details(rows)
                if rows and not ranks[pipelines.VECTOR] and not ranks[pipelines.LEXICAL]:
                    # scoreDetails in a shape this code does not know: searching twice gives the same ranks
                    log.warning("$rankFusion scoreDetails not understood (%.200r); searching twice instead",
                                rows[0].get("details"))
                    self.rank_fusion = False
                else:
                    self.rank_fusion = True
                    return ranks[pipelines.VECTOR], ranks[pipelines.LEXICAL]
        by_vector, by_lexical = await asyncio.gather(
            self.vector_search(vector, limit, filters) if vector is not None else _nothing(),
            self.lexical_search(query, limit, filters))
        return [cid for cid, _ in by_vector], [cid for cid, _ in by_lexical]

    async def sentence_rankings(self, query: str, vector: np.ndarray | None,
                                chunk_ids: list[str]) -> tuple[list[str], list[str]]:
        evidence = await self.sentence_evidence(query, vector, chunk_ids)
        return evidence.chunks_lexical, evidence.chunks_vector

    async def sentence_evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str],
                                links: QuestionLinks | None = None) -> SentenceEvidence:
        # `links` feed the learned paragraph ranking's features, which this store does not compute (its candidate
        # paragraphs keep the fused order; rag/search/paragraph_ranker.py)
        if not chunk_ids:
            return SentenceEvidence([], [], [], [], {})
        terms = query_stems(query)
        found = await self.db[CHUNKS].find({"_id": {"$in": chunk_ids}}, {"sentences": 1}).to_list(None)
        by_id = {r["_id"]: r for r in found}
        rows = [(cid, s) for cid in chunk_ids if cid in by_id for s in by_id[cid].get("sentences", [])]
        if not rows:
            return SentenceEvidence([], [], [], [], {})
        stats = await self.db[META].find_one({"_id": "sentence_stats"}) or {}
        n_docs = int(stats.get("count", 0))
        avg_len = float(stats.get("length", 0)) / n_docs if n_docs else 0.0
        df = ({r["_id"]: int(r["df"]) for r in await self.db[TERMS].find({"_id": {"$in": terms}}).to_list(None)}
              if terms else {})
        scores = bm25_scores_joined(terms, [(s["head"], s["body"]) for _, s in rows], df, n_docs, avg_len)
        matrix = None
        if vector is not None:
            matrix = np.frombuffer(b"".join(s["vector"] for _, s in rows), dtype=np.float32).reshape(len(rows), -1)
            if matrix.shape[1] != len(vector):
                raise EmbeddingMismatch(f"query vector has {len(vector)} dims but the store holds "
                                        f"{matrix.shape[1]}-dim vectors; re-ingest with the configured model")
        return rank_sentences([(cid, s["sub_id"]) for cid, s in rows], scores, matrix, vector)

    async def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        if not chunk_ids:
            return []
        rows = await self.db[CHUNKS].find({"_id": {"$in": chunk_ids}}, _CHUNK_FIELDS).to_list(None)
        chunks = {r["_id"]: chunk_from_document(r) for r in rows}
        return [chunks[c] for c in chunk_ids if c in chunks]


async def _nothing() -> list[tuple[str, float]]:
    return []


def _floats(vector: np.ndarray) -> list[float]:
    return [float(x) for x in np.asarray(vector, dtype=np.float32)]


class MongoKnowledgeStore:
    """The synchronous KnowledgeStore the rest of the bot uses: each call runs on the connection's loop."""

    def __init__(self, connection: MongoConnection, options: SearchOptions | None = None) -> None:
        self.connection = connection
        self.options = options or SearchOptions()
        self.aio = AsyncMongoKnowledge(connection.db, self.options, connection.server_version, connection.host)
        self._closed = False
        try:
            self._run(self.aio.prepare())
        except BaseException:
            connection.close()
            raise

    @classmethod
    def open(cls, config: MongoConfig, options: SearchOptions | None = None) -> MongoKnowledgeStore:
        return cls(MongoConnection.shared(config), options)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        """A driver error (server lost, timed out, a refused command) becomes MongoUnavailable, one plain line
        naming the host for the command line; the turn handler turns it into an apology with a trace id."""
        try:
            return self.connection.run(coro)
        except PyMongoError as exc:
            raise MongoUnavailable(f"MongoDB at {self.connection.host} failed: {exc}") from exc

    def document_hashes(self) -> dict[str, str]:
        return self._run(self.aio.document_hashes())

    def documents(self) -> list[StoredDocument]:
        return self._run(self.aio.documents())

    def replace_document(self, doc: SourceDocument, chunks: list[Chunk], vectors: ChunkVectors) -> None:
        self._run(self.aio.replace_document(doc, chunks, vectors))

    def delete_documents(self, doc_ids: list[str]) -> int:
        return self._run(self.aio.delete_documents(doc_ids))

    def check_embedder(self, name: str, dim: int) -> None:
        self._run(self.aio.check_embedder(name, dim))

    def vector_search(self, vector: np.ndarray, limit: int, filters: Filters) -> list[tuple[str, float]]:
        return self._run(self.aio.vector_search(vector, limit, filters))

    def lexical_search(self, query: str, limit: int, filters: Filters) -> list[tuple[str, float]]:
        return self._run(self.aio.lexical_search(query, limit, filters))

    def candidate_rankings(self, query: str, vector: np.ndarray | None, limit: int,
                           filters: Filters) -> tuple[list[str], list[str]]:
        return self._run(self.aio.candidate_rankings(query, vector, limit, filters))

    def sentence_rankings(self, query: str, vector: np.ndarray | None,
                          chunk_ids: list[str]) -> tuple[list[str], list[str]]:
        return self._run(self.aio.sentence_rankings(query, vector, chunk_ids))

    def sentence_evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str],
                          links: QuestionLinks | None = None) -> SentenceEvidence:
        return self._run(self.aio.sentence_evidence(query, vector, chunk_ids, links))

    def get_chunks(self, chunk_ids: list[str]) -> list[Chunk]:
        return self._run(self.aio.get_chunks(chunk_ids))

    def counts(self) -> dict[str, int]:
        return self._run(self.aio.counts())

    def close(self) -> None:
        if not self._closed:  # a shared connection counts its users: close it once
            self._closed = True
            self.connection.close()
