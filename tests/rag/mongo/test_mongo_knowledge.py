"""The MongoDB knowledge store: pipelines and index definitions against the documented stage shapes, and the
store end to end on the async mongomock facade (which evaluates the Atlas stages in Python; see mongo_fake)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from bot.cli.main import demo_kb_path
from bot.config.settings import Settings
from bot.wiring.choose_models import make_embedder
from rag.ingest.chunking import Chunker
from rag.ingest.ingestor import Ingestor
from rag.mongo import pipelines
from rag.mongo.bridge import AsyncBridge
from rag.mongo.config import describe_hosts, scrub
from rag.mongo.connection import MongoConnection
from rag.mongo.indexes import (
    CHUNKS,
    covers,
    create_or_update,
    search_index_definition,
    search_index_models,
    vector_index_definition,
)
from rag.mongo.knowledge import MongoKnowledgeStore
from rag.mongo.pipelines import SearchOptions
from rag.search.embedding import Embedder
from rag.search.retrieve import Retriever
from rag.search.sqlite_store import SQLiteKnowledgeStore
from rag.search.store import EmbeddingMismatch, Filters
from tests.conftest import write
from tests.fakes.fake_mongo import FakeDatabase, Server

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")


# -- pipelines as data --------------------------------------------------------------------------------------

def test_vector_search_stage_has_the_documented_shape() -> None:
    options = SearchOptions(vector_index="vi", num_candidates_factor=20)
    stage = pipelines.vector_search_stage([0.1, 0.2], 10, Filters.of(["SNAP"], ["Supervisors"]), options)
    assert stage == {"$vectorSearch": {
        "index": "vi", "path": "embedding", "queryVector": [0.1, 0.2], "numCandidates": 200, "limit": 10,
        "filter": {"$and": [{"tags": {"$in": ["snap"]}}, {"groups": {"$in": ["all", "supervisors"]}}]}}}
    exact = pipelines.vector_search_stage([0.1], 5, Filters(), SearchOptions(exact=True))["$vectorSearch"]
    assert exact["exact"] is True and "numCandidates" not in exact and "filter" not in exact  # ENN: no candidates
    capped = pipelines.vector_search_stage([0.1], 1000, Filters(), SearchOptions(num_candidates_factor=50))
    assert capped["$vectorSearch"]["numCandidates"] == pipelines.MAX_NUM_CANDIDATES
    assert pipelines.vector_filter(Filters.of(groups=["nurses"])) == {"groups": {"$in": ["all", "nurses"]}}
    projected = pipelines.vector_pipeline([0.1], 3, Filters(), options)[1]
    assert projected == {"$project": {"_id": 1, "score": {"$meta": "vectorSearchScore"}}}


def test_search_stage_boosts_headings_and_filters_with_in() -> None:
    query = pipelines.search_query("Can college students get SNAP?")
    assert "students" in query and "can" not in query.split()
    stage = pipelines.search_stage(query, Filters.of(["wic"]), SearchOptions(search_index="ti"))["$search"]
    assert stage["index"] == "ti"
    heading, body = stage["compound"]["should"]
    assert heading == {"text": {"query": query, "path": "heading", "score": {"boost": {"value": 8.0}}}}
    assert body == {"text": {"query": query, "path": "text"}}
    assert stage["compound"]["minimumShouldMatch"] == 1
    assert stage["compound"]["filter"] == [{"in": {"path": "tags", "value": ["wic"]}}]
    lexical = pipelines.lexical_pipeline(query, 7, Filters(), SearchOptions())
    assert lexical[1:] == [{"$limit": 7}, {"$project": {"_id": 1, "score": {"$meta": "searchScore"}}}]


def test_rank_fusion_pipeline_and_its_score_details() -> None:
    [fusion, project] = pipelines.rank_fusion_pipeline([0.5], "students snap", 4, Filters(), SearchOptions())
    spec = fusion["$rankFusion"]
    assert set(spec["input"]["pipelines"]) == {"vector", "lexical"}
    assert next(iter(spec["input"]["pipelines"]["vector"][0])) == "$vectorSearch"
    assert spec["input"]["pipelines"]["lexical"][1] == {"$limit": 4}
    assert spec["combination"] == {"weights": {"vector": 1, "lexical": 1}} and spec["scoreDetails"] is True
    assert project == {"$project": {"_id": 1, "details": {"$meta": "scoreDetails"}}}
    as_list = [{"_id": "b", "details": {"value": 0.03, "details": [
                   {"inputPipelineName": "vector", "rank": 2, "weight": 1},
                   {"inputPipelineName": "lexical", "rank": 1, "weight": 1}]}},
               {"_id": "a", "details": {"value": 0.02, "details": [
                   {"inputPipelineName": "vector", "rank": 1, "weight": 1},
                   {"inputPipelineName": "lexical", "rank": 0, "weight": 1}]}}]  # 0: not returned by it
    assert pipelines.ranks_from_details(as_list) == {"vector": ["a", "b"], "lexical": ["b"]}
    as_map = [{"_id": "x", "details": {"value": 0.03, "details": {"vector": {"rank": 1}, "lexical": {"rank": 3.0}}}}]
    assert pipelines.ranks_from_details(as_map) == {"vector": ["x"], "lexical": ["x"]}
    assert pipelines.ranks_from_details([{"_id": "y", "details": {"value": 0.1}}]) == {"vector": [], "lexical": []}


def test_unknown_score_details_fall_back_to_two_searches(embedder: Embedder, kb: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    db = FakeDatabase()
    store = open_store(db)
    try:
        Ingestor(store, embedder, Chunker(450)).ingest_paths([kb])
        retriever = Retriever(store, embedder, candidates=10)
        expected = [h.chunk.chunk_id for h in retriever.search("WIC income", k=3)]
        monkeypatch.setattr(pipelines, "ranks_from_details", lambda rows: {"vector": [], "lexical": []})
        monkeypatch.setattr(store.aio, "rank_fusion", None)
        assert [h.chunk.chunk_id for h in retriever.search("WIC income", k=3)] == expected
        assert store.aio.rank_fusion is False and "scoreDetails not understood" in caplog.text
    finally:
        store.close()


def test_index_definitions() -> None:
    assert vector_index_definition(256) == {"fields": [
        {"type": "vector", "path": "embedding", "numDimensions": 256, "similarity": "cosine"},
        {"type": "filter", "path": "tags"}, {"type": "filter", "path": "groups"},
        {"type": "filter", "path": "doc_id"}]}
    mappings = search_index_definition()["mappings"]
    assert mappings["dynamic"] is False and mappings["fields"]["heading"]["type"] == "string"
    assert mappings["fields"]["tags"] == {"type": "token", "normalizer": "lowercase"}
    vector, text = search_index_models(384, SearchOptions(vector_index="v", search_index="t"))
    assert vector.document["type"] == "vectorSearch" and vector.document["name"] == "v"
    assert text.document["type"] == "search" and text.document["name"] == "t"


def test_server_defaults_in_a_definition_are_no_change() -> None:
    ours = vector_index_definition(256)
    theirs = {"fields": [dict(f, quantization="none") if f["type"] == "vector" else f for f in ours["fields"]]}
    assert covers(ours, theirs) and covers(search_index_definition(), {**search_index_definition(),
                                                                       "analyzer": "lucene.standard"})
    assert not covers(ours, vector_index_definition(384))
    assert not covers(ours, {"fields": ours["fields"][:3]})


def test_connection_messages_never_show_the_password() -> None:
    uri = "mongodb+srv://navi:p%40ss:w0rd@cluster0.abc.mongodb.net/navibot?retryWrites=true"
    assert describe_hosts(uri) == "cluster0.abc.mongodb.net"
    assert describe_hosts("mongodb://a:1,b:2/?replicaSet=rs") == "a:1,b:2"
    assert "w0rd" not in scrub("auth failed for p%40ss:w0rd", uri)


# -- the store end to end on the facade ------------------------------------------------------------------

@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return make_embedder(Settings(_env_file=None))  # type: ignore[call-arg]


def open_store(db: FakeDatabase, options: SearchOptions | None = None) -> MongoKnowledgeStore:
    store = MongoKnowledgeStore(MongoConnection(AsyncBridge(), db), options)
    models = search_index_models(256, store.options)
    store.connection.run(create_or_update(db[CHUNKS], models))  # type: ignore[arg-type]  # the async facade
    db[CHUNKS].build_search_indexes()
    return store


@pytest.fixture
def mongo(embedder: Embedder) -> Iterator[tuple[MongoKnowledgeStore, FakeDatabase]]:
    db = FakeDatabase()
    store = open_store(db)
    yield store, db
    store.close()


def test_demo_kb_stored_like_sqlite_and_sentence_rankings_identical(
        mongo: tuple[MongoKnowledgeStore, FakeDatabase], embedder: Embedder) -> None:
    store, db = mongo
    summary = Ingestor(store, embedder, Chunker(450)).ingest_paths([demo_kb_path()])
    sqlite = SQLiteKnowledgeStore(":memory:")
    Ingestor(sqlite, embedder, Chunker(450)).ingest_paths([demo_kb_path()])
    try:
        assert summary.ingested == 16 and store.counts() == sqlite.counts()
        assert store.documents() == sqlite.documents() and store.document_hashes() == sqlite.document_hashes()
        ids = [d.doc_id for d in sqlite.documents()]
        chunk_ids = [f"{doc}::0" for doc in ids]
        assert store.get_chunks([*chunk_ids, "nope"]) == sqlite.get_chunks(chunk_ids)  # same Chunk objects
        question = "Can a college student working 20 hours a week get SNAP?"
        vector = embedder.embed_query(question)
        # Same BM25 statistics of the whole store, same sentence vectors: the same rankings.
        assert store.sentence_rankings(question, vector, chunk_ids) == sqlite.sentence_rankings(question, vector,
                                                                                              chunk_ids)
        by_vector = store.vector_search(vector, 5, Filters())
        assert [c for c, _ in by_vector] == [c for c, _ in sqlite.vector_search(vector, 5, Filters())]
        assert by_vector[0][1] == pytest.approx(sqlite.vector_search(vector, 1, Filters())[0][1], abs=1e-5)
        stored = db.stored("chunks", {"_id": "demo_kb/snap-students::0"})
        assert stored["tags"] == ["snap"] and stored["groups"] == ["all"] and len(stored["embedding"]) == 256
        assert stored["heading"].startswith("SNAP") and stored["sentences"][0]["sub_id"].startswith(stored["_id"])
        again = Ingestor(store, embedder, Chunker(450)).ingest_paths([demo_kb_path()])
        assert (again.added, again.updated, again.unchanged) == (0, 0, 16)  # unchanged content hashes are skipped
    finally:
        sqlite.close()


def test_replaced_document_loses_old_chunks_and_prune_removes_gone_files(
        mongo: tuple[MongoKnowledgeStore, FakeDatabase], embedder: Embedder, tmp_path: Path) -> None:
    store, db = mongo
    filler = " ".join(["Households should keep their notices and receipts."] * 8)
    page = write(tmp_path / "kb" / "guide.md", f"# Guide\n\n## One\n\nFirst part about SNAP. {filler}\n\n"
                 f"## Two\n\nSecond part about WIC. {filler}\n\n## Three\n\nThird part about LIHEAP. {filler}\n")
    write(tmp_path / "kb" / "other.md", "# Other\n\nSomething about Medicaid.\n")
    ingestor = Ingestor(store, embedder, Chunker(50))
    ingestor.ingest_paths([tmp_path / "kb"])
    guide = next(d for d in store.documents() if d.title == "Guide")
    before = db.raw("chunks").count_documents({"doc_id": guide.doc_id})
    terms_before = db.stored("terms", {"_id": "liheap"})["df"]
    page.write_text("# Guide\n\n## One\n\nFirst part about SNAP only.\n", encoding="utf-8")
    assert ingestor.ingest_paths([tmp_path / "kb"]).updated == 1
    rows = list(db.raw("chunks").find({"doc_id": guide.doc_id}))
    assert len(rows) < before and all("LIHEAP" not in r["text"] for r in rows)
    assert all(r["content_hash"] == store.document_hashes()[guide.doc_id] for r in rows)
    assert terms_before >= 1 and db.raw("terms").find_one({"_id": "liheap"}) is None  # df 0: the term is gone
    (tmp_path / "kb" / "other.md").unlink()
    assert ingestor.ingest_paths([tmp_path / "kb"], prune=True).removed == 1
    assert [d.title for d in store.documents()] == ["Guide"]
    assert db.raw("chunks").count_documents({}) == len(rows)
    stats = db.stored("meta", {"_id": "sentence_stats"})
    assert stats["count"] == sum(len(r["sentences"]) for r in rows)  # the BM25 statistics follow the deletes


def test_embedding_model_is_recorded_and_a_change_refused(mongo: tuple[MongoKnowledgeStore, FakeDatabase],
                                                          embedder: Embedder, kb: Path) -> None:
    store, _ = mongo
    store.check_embedder("other-model", 384)  # an empty store may switch
    Ingestor(store, embedder, Chunker(450)).ingest_paths([kb])
    with pytest.raises(EmbeddingMismatch, match="NAVIBOT_MONGODB_DATABASE"):
        store.check_embedder("other-model", 384)
    with pytest.raises(EmbeddingMismatch, match="384 dims"):
        store.vector_search(np.zeros(384, dtype=np.float32), 3, Filters())


def test_retrieval_with_rank_fusion_filters_and_fallback(embedder: Embedder, kb: Path) -> None:
    results = {}
    for fusion in (True, False):
        db = FakeDatabase(server=Server(rank_fusion=fusion))
        store = open_store(db)
        try:
            Ingestor(store, embedder, Chunker(450)).ingest_paths([kb])
            retriever = Retriever(store, embedder, candidates=10)
            hits = retriever.search("can a student working 20 hours get SNAP?", k=3)
            assert hits[0].chunk.title == "SNAP for college students" and hits[0].vector_rank is not None
            fraud = "trafficking referral desk"
            assert all("Fraud" not in h.chunk.title for h in retriever.search(fraud, k=5, groups=["navigators"]))
            assert retriever.search(fraud, k=1, groups=["supervisors"])[0].chunk.title == "Fraud referral procedures"
            assert all(h.chunk.tags == ["wic"] for h in retriever.search("income limits", k=5, tags=["WIC"]))
            first_stages = [next(iter(p[0])) for p in db.server.pipelines]
            if fusion:
                assert set(first_stages) == {"$rankFusion"}
            else:  # tried once, remembered: afterwards two searches per question, never $rankFusion again
                assert first_stages.count("$rankFusion") == 1 and "$vectorSearch" in first_stages[1:]
                assert store.aio.rank_fusion is False
            results[fusion] = [(h.chunk.chunk_id, h.vector_rank, h.lexical_rank) for h in hits]
        finally:
            store.close()
    assert results[True] == results[False]  # the same ranks, whichever way they were fetched


def test_exact_search_option_reaches_the_stage(embedder: Embedder, kb: Path) -> None:
    db = FakeDatabase(server=Server(rank_fusion=False))
    store = open_store(db, SearchOptions(exact=True, rank_fusion=False))
    try:
        Ingestor(store, embedder, Chunker(450)).ingest_paths([kb])
        Retriever(store, embedder).search("WIC income")
        stage = next(p[0]["$vectorSearch"] for p in db.server.pipelines if "$vectorSearch" in p[0])
        assert stage["exact"] is True and stage["index"] == "navibot_vector"
    finally:
        store.close()


def test_many_threads_share_one_store(embedder: Embedder, kb: Path) -> None:
    """The adapters call from worker threads: every call runs on the bridge's one loop, answers stay the same."""
    db = FakeDatabase()
    store = open_store(db)
    try:
        Ingestor(store, embedder, Chunker(450)).ingest_paths([kb])
        retriever = Retriever(store, embedder, candidates=10)
        questions = ["can a student working 20 hours get SNAP?", "WIC income", "help with heating bills"] * 4
        expected = {q: [h.chunk.chunk_id for h in retriever.search(q, k=3)] for q in set(questions)}
        with ThreadPoolExecutor(max_workers=6) as pool:
            got = list(pool.map(lambda q: (q, [h.chunk.chunk_id for h in retriever.search(q, k=3)]), questions))
        assert all(ids == expected[q] for q, ids in got)
    finally:
        store.close()
