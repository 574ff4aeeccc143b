"""An in-process stand-in for pymongo's async API over mongomock, for the MongoDB backend's tests.

mongomock is synchronous and knows no Atlas stages: this facade makes its collections awaitable (async cursors
for find and aggregate), translates bulk_write (mongomock's does not accept pymongo 4.20's operations), keeps
search index definitions in memory, and evaluates $vectorSearch (exact cosine, MQL pre-filter), $search (a
compound of `text` clauses with boosts and `in` filters, scored by term counts, not Lucene's BM25) and
$rankFusion (RRF, k = 60, scoreDetails per input pipeline) so that the stores run end to end. The real stages
run only in tests/live.
"""

from __future__ import annotations

from typing import Any

import mongomock
import numpy as np
from pymongo import DeleteMany, DeleteOne, InsertOne, ReplaceOne, UpdateOne
from pymongo.errors import OperationFailure

from rag.search.bm25 import stemmed

_SCAN = mongomock.Collection._iter_documents  # type: ignore[attr-defined]  # private, not in the stubs


def _iter_documents(self: Any, filter: Any) -> Any:  # mongomock's signature
    """mongomock matches every filter by scanning the whole collection; a server finds `{"_id": value}` through
    its _id index. Ingesting the demo knowledge base sends ~3,300 such upserts of term counts (rag/mongo/knowledge.py
    _update_stats), which the scan made quadratic (~1M filter checks, ~5 s per ingest). The same lookup by key
    returns the same document (the one stored, updated in place as before); any other filter is scanned as before."""
    if isinstance(filter, dict) and len(filter) == 1 and type(filter.get("_id")) in (str, int):
        key = filter["_id"]
        return iter([self._store[key]] if key in self._store else [])
    return _SCAN(self, filter)


mongomock.Collection._iter_documents = _iter_documents  # type: ignore[attr-defined]


class FakeCursor:
    def __init__(self, rows: Any) -> None:
        self._rows = rows

    def sort(self, key: Any, direction: int = 1) -> FakeCursor:
        self._rows = self._rows.sort(key, direction)
        return self

    def skip(self, n: int) -> FakeCursor:
        self._rows = self._rows.skip(n)
        return self

    def limit(self, n: int) -> FakeCursor:
        self._rows = self._rows.limit(n)
        return self

    async def to_list(self, length: int | None = None) -> list[dict[str, Any]]:
        rows = list(self._rows)
        return rows if length is None else rows[:length]

    def __aiter__(self) -> Any:
        async def gen() -> Any:
            for row in list(self._rows):
                yield row
        return gen()


class Server:
    """What the fake deployment can do, and a switch to make every call fail like a lost connection."""

    def __init__(self, search: bool = True, rank_fusion: bool = True) -> None:
        self.search = search
        self.rank_fusion = rank_fusion
        self.fail: BaseException | None = None
        self.calls: list[str] = []
        self.commands: list[dict[str, Any]] = []
        self.pipelines: list[list[dict[str, Any]]] = []

    def check(self, op: str) -> None:
        self.calls.append(op)
        if self.fail is not None:
            raise self.fail


class FakeCollection:
    def __init__(self, collection: mongomock.Collection[Any], server: Server,
                 indexes: dict[str, dict[str, Any]]) -> None:
        self._c = collection
        self._server = server
        self._search_indexes = indexes
        self.name = collection.name

    async def find_one(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("find_one")
        return self._c.find_one(*args, **kwargs)

    def find(self, *args: Any, **kwargs: Any) -> FakeCursor:
        self._server.check("find")
        return FakeCursor(self._c.find(*args, **kwargs))

    async def count_documents(self, *args: Any, **kwargs: Any) -> int:
        self._server.check("count_documents")
        return int(self._c.count_documents(*args, **kwargs))

    async def insert_one(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("insert_one")
        return self._c.insert_one(*args, **kwargs)

    async def replace_one(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("replace_one")
        return self._c.replace_one(*args, **kwargs)

    async def update_one(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("update_one")
        return self._c.update_one(*args, **kwargs)

    async def update_many(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("update_many")
        return self._c.update_many(*args, **kwargs)

    async def find_one_and_update(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("find_one_and_update")
        return self._c.find_one_and_update(*args, **kwargs)

    async def delete_one(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("delete_one")
        return self._c.delete_one(*args, **kwargs)

    async def delete_many(self, *args: Any, **kwargs: Any) -> Any:
        self._server.check("delete_many")
        return self._c.delete_many(*args, **kwargs)

    async def create_index(self, keys: Any, **kwargs: Any) -> str:
        self._server.check("create_index")
        try:
            return str(self._c.create_index(keys, **kwargs))
        except OperationFailure as exc:  # the real server says which conflict it is
            if "different options" in str(exc):
                raise OperationFailure(str(exc), code=85, details={"errmsg": str(exc), "code": 85}) from exc
            raise

    async def index_information(self) -> dict[str, Any]:
        return dict(self._c.index_information())

    async def bulk_write(self, operations: list[Any], ordered: bool = True) -> None:
        self._server.check("bulk_write")
        for op in operations:
            if isinstance(op, ReplaceOne):
                self._c.replace_one(op._filter, op._doc, upsert=bool(op._upsert))
            elif isinstance(op, UpdateOne):
                self._c.update_one(op._filter, op._doc, upsert=bool(op._upsert))
            elif isinstance(op, DeleteMany):
                self._c.delete_many(op._filter)
            elif isinstance(op, DeleteOne):
                self._c.delete_one(op._filter)
            elif isinstance(op, InsertOne):
                self._c.insert_one(op._doc)
            else:
                raise TypeError(f"fake bulk_write: {type(op).__name__}")

    # -- Atlas search indexes ------------------------------------------------------------------------------

    def _require_search(self) -> None:
        if not self._server.search:
            raise OperationFailure("Using Atlas Search Database Commands and the $listSearchIndexes aggregation "
                                   "stage requires additional configuration.", code=31082,
                                   details={"errmsg": "search index commands require additional configuration",
                                            "code": 31082})

    async def list_search_indexes(self, name: str | None = None) -> FakeCursor:
        self._server.check("list_search_indexes")
        self._require_search()
        rows = [dict(v) for k, v in self._search_indexes.items() if name is None or k == name]
        for index in self._search_indexes.values():  # mongot builds in the background: one step per look
            if index["status"] == "BUILDING":
                index.update(status="READY", queryable=True)
            elif index["status"] == "PENDING":
                index["status"] = "BUILDING"
        return FakeCursor(rows)

    async def create_search_index(self, model: Any) -> str:
        self._server.check("create_search_index")
        self._require_search()
        spec = model.document
        self._search_indexes[spec["name"]] = {"name": spec["name"], "type": spec.get("type", "search"),
                                              "status": "PENDING", "queryable": False,
                                              "latestDefinition": spec["definition"]}
        return str(spec["name"])

    async def update_search_index(self, name: str, definition: dict[str, Any]) -> None:
        self._server.check("update_search_index")
        self._require_search()
        self._search_indexes[name].update(latestDefinition=definition, status="PENDING")

    def build_search_indexes(self) -> None:
        """What mongot does in the background: every pending index becomes READY and queryable."""
        for index in self._search_indexes.values():
            index.update(status="READY", queryable=True)

    # -- aggregation with the Atlas stages -----------------------------------------------------------------

    async def aggregate(self, pipeline: list[dict[str, Any]]) -> FakeCursor:
        self._server.check("aggregate")
        self._server.pipelines.append(pipeline)
        first = next(iter(pipeline[0])) if pipeline else ""
        if first not in ("$vectorSearch", "$search", "$rankFusion"):
            return FakeCursor(self._c.aggregate(pipeline))
        if first == "$rankFusion" and not self._server.rank_fusion:
            raise OperationFailure("Unrecognized pipeline stage name: '$rankFusion'", code=40324,
                                   details={"errmsg": "Unrecognized pipeline stage name: '$rankFusion'"})
        if not self._server.search:
            raise OperationFailure(f"{first} stage is only allowed on MongoDB Atlas", code=6047401,
                                   details={"errmsg": f"{first} stage is only allowed on MongoDB Atlas"})
        scored = self._run_ranked(pipeline[0])
        rows: list[dict[str, Any]] = []
        rest = pipeline[1:]
        for doc, meta in scored:
            rows.append({**doc, "__meta": meta})
        for stage in rest:
            (name, arg), = stage.items()
            if name == "$limit":
                rows = rows[:arg]
            elif name == "$project":
                rows = [_project(row, arg) for row in rows]
            else:
                raise AssertionError(f"fake aggregate: {name} after a search stage")
        return FakeCursor(rows)

    def _run_ranked(self, stage: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        (name, spec), = stage.items()
        if name == "$vectorSearch":
            return self._vector_search(spec)
        if name == "$search":
            return self._search(spec)
        return self._rank_fusion(spec)

    def _index(self, name: str, kind: str) -> bool:
        """Atlas answers a search on a missing or still-building index with no results, not an error."""
        index = self._search_indexes.get(name)
        return index is not None and index["type"] == kind and bool(index["queryable"])

    def _vector_search(self, spec: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        if not self._index(spec["index"], "vectorSearch"):
            return []
        assert spec.get("exact") is True or spec["numCandidates"] >= spec["limit"]
        query = np.asarray(spec["queryVector"], dtype=np.float64)
        where = spec.get("filter", {})
        hits = []
        for doc in self._c.find(where):
            vec = np.asarray(doc[spec["path"]], dtype=np.float64)
            cos = float(vec @ query / (np.linalg.norm(vec) * np.linalg.norm(query) or 1.0))
            hits.append((doc, {"vectorSearchScore": (1.0 + cos) / 2.0}))
        hits.sort(key=lambda h: -h[1]["vectorSearchScore"])
        return hits[: spec["limit"]]

    def _search(self, spec: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        if not self._index(spec["index"], "search"):
            return []
        compound = spec["compound"]
        hits = []
        for doc in self._c.find({}):
            if not all(_in_filter(doc, f["in"]) for f in compound.get("filter", [])):
                continue
            score = 0.0
            for clause in compound["should"]:
                text = clause["text"]
                field = stemmed(str(doc.get(text["path"], "")))
                boost = text.get("score", {}).get("boost", {}).get("value", 1.0)
                score += boost * sum(field.count(term) for term in set(stemmed(text["query"])))
            if score > 0:
                hits.append((doc, {"searchScore": score}))
        hits.sort(key=lambda h: -h[1]["searchScore"])
        return hits

    def _rank_fusion(self, spec: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        weights = spec.get("combination", {}).get("weights", {})
        fused: dict[Any, dict[str, Any]] = {}
        for name, stages in spec["input"]["pipelines"].items():
            ranked = self._run_ranked(stages[0])
            for stage in stages[1:]:
                (op, arg), = stage.items()
                assert op == "$limit", f"fake $rankFusion: {op} in an input pipeline"
                ranked = ranked[:arg]
            for rank, (doc, _) in enumerate(ranked, start=1):
                entry = fused.setdefault(doc["_id"], {"doc": doc, "value": 0.0, "details": []})
                weight = weights.get(name, 1)
                entry["value"] += weight / (60 + rank)
                entry["details"].append({"inputPipelineName": name, "rank": rank, "weight": weight})
        out = sorted(fused.values(), key=lambda e: -e["value"])
        return [(e["doc"], {"score": e["value"], "scoreDetails": {
            "value": e["value"], "description": "value output by reciprocal rank fusion", "details": e["details"]}})
            for e in out]


def _in_filter(doc: dict[str, Any], spec: dict[str, Any]) -> bool:
    value = doc.get(spec["path"])
    values = value if isinstance(value, list) else [value]
    return bool({str(v).lower() for v in values} & {str(v).lower() for v in spec["value"]})


def _project(row: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, how in spec.items():
        if isinstance(how, dict) and "$meta" in how:
            out[key] = row["__meta"][how["$meta"]]
        elif how in (1, True):
            out[key] = row.get(key)
    if "_id" not in spec:
        out["_id"] = row["_id"]
    return out


class FakeDatabase:
    def __init__(self, name: str = "navibot_test", server: Server | None = None) -> None:
        self.server = server or Server()
        self._db: mongomock.Database[Any] = mongomock.MongoClient(tz_aware=True)[name]
        self.name = name
        self._search_indexes: dict[str, dict[str, dict[str, Any]]] = {}
        self._collections: dict[str, FakeCollection] = {}

    def __getitem__(self, name: str) -> FakeCollection:
        if name not in self._collections:
            self._collections[name] = FakeCollection(self._db[name], self.server,
                                                     self._search_indexes.setdefault(name, {}))
        return self._collections[name]

    def raw(self, name: str) -> mongomock.Collection[Any]:
        """The underlying mongomock collection, for a test to look at what was stored."""
        return self._db[name]

    def stored(self, name: str, query: dict[str, Any] | None = None) -> dict[str, Any]:
        """The one stored document matching `query` (a test failure if there is none)."""
        found = self._db[name].find_one(query or {})
        assert found is not None, f"nothing in {name} matches {query}"
        return dict(found)

    async def list_collection_names(self) -> list[str]:
        self.server.check("list_collection_names")
        return list(self._db.list_collection_names())

    async def create_collection(self, name: str, **kwargs: Any) -> FakeCollection:
        self.server.check("create_collection")
        self._db.create_collection(name, **kwargs)
        return self[name]

    async def command(self, command: dict[str, Any]) -> dict[str, Any]:
        self.server.check("command")
        self.server.commands.append(command)
        if "collMod" in command:  # change a TTL index in place, as the server does
            collection, index = self._db[command["collMod"]], command["index"]
            spec = collection.index_information()[index["name"]]
            collection.drop_index(index["name"])
            collection.create_index(spec["key"], name=index["name"], expireAfterSeconds=index["expireAfterSeconds"])
        return {"ok": 1}
