"""On-prem rerank: the real `cohere` SDK (ClientV2) pointed at servers that speak Cohere's v2 rerank API (vLLM,
Infinity) through NAVIBOT_COHERE_BASE_URLS, without a key; and Text Embeddings Inference, which speaks its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.wiring.runtime import Core, build_bot
from rag.answer.moods import MoodBook
from rag.engine import GATE_SECTIONS
from tests.fakes.fake_models import FakeServer, overlap
from tests.fakes.fake_rerankers import FakeInfinity, FakeTei, FakeVllmRerank

STUDENTS = "Can college students get SNAP?"
MOOD = MoodBook().resolve(None)


@pytest.fixture(params=["vllm", "infinity"])
def server(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    fake: FakeServer = FakeVllmRerank() if request.param == "vllm" else FakeInfinity("/v2")
    fake.start()
    yield fake
    assert fake.refused == []
    fake.stop()


def test_an_on_prem_reranker_orders_the_candidates_without_a_key(demo: Core, server: FakeServer,
                                                                  tmp_path: Path) -> None:
    settings = Settings(rerank="cohere", cohere_base_urls=[server.url], cohere_rerank_model="BAAI/bge-reranker-base",
                        rerank_candidates=20)  # no NAVIBOT_COHERE_API_KEYS: a local server wants none
    bot = build_bot(settings, demo.store.path, tmp_path / "c.sqlite3")  # type: ignore[attr-defined]
    try:
        outcome = bot.engine.answer(STUDENTS, [], MOOD)
    finally:
        bot.close()
    [call] = server.calls
    assert call.path == "/v2/rerank" and call.body["model"] == "BAAI/bge-reranker-base"
    assert len(call.body["documents"]) == 20 and call.body["top_n"] == GATE_SECTIONS and call.body["query"] == STUDENTS
    assert outcome.fallbacks == [] and outcome.kind == "answer"
    fused = demo.retriever.search(STUDENTS, k=20)
    expected = sorted(fused, key=lambda h: -overlap(STUDENTS, f"{h.chunk.heading_text}\n\n{h.chunk.text}"[:6000]))
    assert [h.chunk.chunk_id for h in outcome.hits] == [h.chunk.chunk_id for h in expected[:5]]
    assert all(h.rerank_score is not None for h in outcome.hits)


def test_a_reranker_that_is_down_keeps_the_fused_order(demo: Core, tmp_path: Path) -> None:
    with FakeVllmRerank() as server:
        server.status = 503
        settings = Settings(rerank="cohere", cohere_base_urls=[server.url], rerank_candidates=20)
        bot = build_bot(settings, demo.store.path, tmp_path / "c.sqlite3")  # type: ignore[attr-defined]
        try:
            outcome = bot.engine.answer(STUDENTS, [], MOOD)
        finally:
            bot.close()
    fused = demo.retriever.search(STUDENTS, k=20)[:5]
    assert [h.chunk.chunk_id for h in outcome.hits] == [h.chunk.chunk_id for h in fused]
    assert outcome.fallbacks[0].startswith("rerank: cohere rerank failed") and "HTTP 503" in outcome.fallbacks[0]


def test_text_embeddings_inference_reranks_in_its_own_shape(demo: Core, tmp_path: Path) -> None:
    with FakeTei() as first, FakeTei() as second:
        first.status = 503  # the first server is down: the second one ranks
        settings = Settings(rerank="tei", tei_rerank_urls=[first.url, second.url], rerank_candidates=20)
        bot = build_bot(settings, demo.store.path, tmp_path / "c.sqlite3")  # type: ignore[attr-defined]
        try:
            outcome = bot.engine.answer(STUDENTS, [], MOOD)
            labels = [e.label for e in bot.engine.reranker.failover.endpoints]  # type: ignore[union-attr]
        finally:
            bot.close()
        assert first.refused == second.refused == []
        assert labels == [f"tei@{s.url.removeprefix('http://')}" for s in (first, second)]
    [call] = second.calls
    assert call.path == "/rerank" and call.body["query"] == STUDENTS and len(call.body["texts"]) == 20
    assert call.body["truncate"] is True and outcome.fallbacks == []
    fused = demo.retriever.search(STUDENTS, k=20)
    expected = sorted(fused, key=lambda h: -overlap(STUDENTS, f"{h.chunk.heading_text}\n\n{h.chunk.text}"[:6000]))
    assert [h.chunk.chunk_id for h in outcome.hits] == [h.chunk.chunk_id for h in expected[:5]]
    assert Settings(rerank="tei", tei_rerank_urls=["http://tei:80"]).rerank == "tei"
