"""Index definitions of the MongoDB backend, and creating and polling the search indexes for `navibot db init`.

Regular indexes are created whenever a store opens (cheap when they exist). The two Atlas search indexes are
created or updated by `navibot db init` only: they are built asynchronously by the search engine (mongot), and
a deployment without it (a plain mongod) refuses them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import OperationFailure
from pymongo.operations import SearchIndexModel

from rag.mongo.pipelines import SearchOptions

DOCUMENTS, CHUNKS, TERMS, META = "documents", "chunks", "terms", "meta"


class SearchIndexError(RuntimeError):
    """The search indexes cannot be created or did not become queryable in time."""


def vector_index_definition(dim: int) -> dict[str, Any]:
    return {"fields": [
        {"type": "vector", "path": "embedding", "numDimensions": dim, "similarity": "cosine"},
        {"type": "filter", "path": "tags"},
        {"type": "filter", "path": "groups"},
        {"type": "filter", "path": "doc_id"},
    ]}


def search_index_definition() -> dict[str, Any]:
    """Full text of the heading line ("Title > heading") and the body, English stemming like the SQLite store's
    porter tokenizer; tags, groups and doc id as lowercased tokens for the `in` filter."""
    text = {"type": "string", "analyzer": "lucene.english"}
    token = {"type": "token", "normalizer": "lowercase"}
    return {"mappings": {"dynamic": False, "fields": {
        "heading": text, "text": text, "tags": token, "groups": token, "doc_id": token}}}


def search_index_models(dim: int, options: SearchOptions) -> list[SearchIndexModel]:
    return [SearchIndexModel(definition=vector_index_definition(dim), name=options.vector_index, type="vectorSearch"),
            SearchIndexModel(definition=search_index_definition(), name=options.search_index, type="search")]


async def ensure_knowledge_indexes(db: AsyncDatabase[dict[str, Any]]) -> None:
    await db[CHUNKS].create_index([("doc_id", 1), ("ordinal", 1)], name="chunks_by_document")
    await db[DOCUMENTS].create_index("source_path", name="documents_by_source")


@dataclass(frozen=True, slots=True)
class IndexState:
    name: str
    type: str
    status: str
    queryable: bool


def unsupported_message(exc: OperationFailure) -> str:
    reason = (exc.details or {}).get("errmsg") or str(exc)
    return ("this MongoDB server has no search engine, so the search indexes cannot be created: `navibot db "
            f"init` needs MongoDB Atlas or the mongodb/mongodb-atlas-local image (server said: {reason})")


async def search_index_states(collection: AsyncCollection[dict[str, Any]]) -> list[IndexState]:
    try:
        cursor = await collection.list_search_indexes()
        rows = await cursor.to_list(None)
    except OperationFailure as exc:
        raise SearchIndexError(unsupported_message(exc)) from exc
    return [IndexState(r.get("name", "?"), r.get("type", "search"), str(r.get("status", "UNKNOWN")),
                       bool(r.get("queryable", False))) for r in rows]


def covers(wanted: Any, actual: Any) -> bool:
    """Whether the server's definition says everything ours does: the server may add defaults of its own
    (an analyzer, storedSource), which must not count as a change, or every `db init` would rebuild."""
    if isinstance(wanted, dict):
        return isinstance(actual, dict) and all(k in actual and covers(v, actual[k]) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(actual, list) and len(wanted) == len(actual) and all(
            covers(w, a) for w, a in zip(wanted, actual, strict=True))
    return bool(wanted == actual)


async def create_or_update(collection: AsyncCollection[dict[str, Any]], models: list[SearchIndexModel]) -> list[str]:
    """Create missing indexes and update those whose definition changed; returns what was done, per index."""
    try:
        cursor = await collection.list_search_indexes()
        existing = {r["name"]: r for r in await cursor.to_list(None)}
    except OperationFailure as exc:
        raise SearchIndexError(unsupported_message(exc)) from exc
    done: list[str] = []
    for model in models:
        spec = model.document
        name, definition = spec["name"], spec["definition"]
        current = existing.get(name)
        try:
            if current is None:
                await collection.create_search_index(model)
                done.append(f"{name}: created")
            elif not covers(definition, current.get("latestDefinition")):
                await collection.update_search_index(name, definition)
                done.append(f"{name}: definition updated")
            else:
                done.append(f"{name}: unchanged")
        except OperationFailure as exc:
            reason = (exc.details or {}).get("errmsg") or str(exc)
            raise SearchIndexError(f"cannot create the search index {name}: {reason}") from exc
    return done


async def wait_until_queryable(collection: AsyncCollection[dict[str, Any]], names: list[str], timeout: float,
                               poll: float = 5.0,
                               progress: Callable[[str], None] = lambda line: None) -> list[IndexState]:
    """Poll until every named index is queryable (and not still building a new definition); SearchIndexError on
    a failed build or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        states = {s.name: s for s in await search_index_states(collection)}
        failed = [s for n in names if (s := states.get(n)) and s.status == "FAILED"]
        if failed:
            raise SearchIndexError(f"the search index {failed[0].name} failed to build; see its status in Atlas")
        ready = [n for n in names if (s := states.get(n)) and s.queryable and s.status == "READY"]
        progress("search indexes: " + ", ".join(
            f"{n} {states[n].status.lower() if n in states else 'missing'}" for n in names))
        if len(ready) == len(names):
            return [states[n] for n in names]
        if time.monotonic() >= deadline:
            waiting = ", ".join(n for n in names if n not in ready)
            raise SearchIndexError(f"the search indexes ({waiting}) were not queryable after {timeout:g} s; they "
                                   "keep building on the server: run `navibot db status` later")
        await asyncio.sleep(min(poll, max(deadline - time.monotonic(), 0.01)))
