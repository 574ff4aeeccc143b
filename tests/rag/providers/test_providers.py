"""Gemini and Cohere through their real SDK clients (google-genai, cohere ClientV2) against local fake servers:
answers, rewriting, embeddings, rerank, failover across endpoints, the turn deadline and every fallback; the
settings that switch them on, and the wiring through `build_bot`, the turn handler and `navibot ask`."""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from pydantic import SecretStr, ValidationError

from bot.cli.main import main
from bot.config.settings import Settings
from bot.port import ReplyKind, Turn
from bot.wiring.choose_models import make_answerer, make_embedder
from bot.wiring.runtime import Core, build_bot, build_core
from rag.answer.answerer import UNAVAILABLE_NOTICE, FallbackAnswerer
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import MoodBook
from rag.answer.rewrite import Exchange, HeuristicRewriter
from rag.engine import GATE_SECTIONS, Engine
from rag.providers.cohere import CohereEmbedder, CohereReranker, cohere_failover
from rag.providers.failover import (
    Endpoint,
    Failover,
    ProviderUnavailable,
    RequestRejected,
    Verdict,
)
from rag.providers.gemini import (
    GeminiAnswerer,
    GeminiEmbedder,
    GeminiRewriter,
    gemini_failover,
)
from rag.providers.prompts import numbered_markers
from rag.search.embedding import EmbeddingUnavailable
from rag.search.store import EmbeddingMismatch
from tests.fakes.fake_models import FakeCohere, FakeGemini, FakeServer, WrongEndpoint, overlap

STUDENTS = "Can college students get SNAP?"
WORK = "what if they work 20 hours a week?"
MOOD = MoodBook().resolve(None)
KEY = "test-key-do-not-log"


class InOrder(random.Random):
    """Endpoints in the order configured, so a test knows which one is tried first."""

    def sample(self, population: Sequence[Any], k: int, **_: Any) -> list[Any]:
        return list(population)[:k]


def _started(server: FakeServer) -> Iterator[FakeServer]:
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gemini_a() -> Iterator[FakeServer]:
    yield from _started(FakeGemini())


@pytest.fixture(scope="module")
def gemini_b() -> Iterator[FakeServer]:
    yield from _started(FakeGemini())


@pytest.fixture(scope="module")
def cohere_a() -> Iterator[FakeServer]:
    yield from _started(FakeCohere())


@pytest.fixture(autouse=True)
def _fresh_fakes(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with quiet fakes, and ends with no request refused as malformed (HTTP 400) unless it
    checked that refusal itself (and cleared `refused`): whatever else a test asserts, what the SDKs sent must
    have the shape the real APIs accept."""
    fakes = [request.getfixturevalue(n) for n in ("gemini_a", "gemini_b", "cohere_a") if n in request.fixturenames]
    for fake in fakes:
        fake.reset()
    yield
    for fake in fakes:
        assert fake.refused == [], fake.refused


def gemini_engine(core: Core, servers: Sequence[FakeServer], timeout: float = 5.0,
                  deadline: float | None = 12.0) -> Engine:
    failover = gemini_failover([KEY], [s.url for s in servers], timeout, rng=InOrder())
    answerer = FallbackAnswerer(GeminiAnswerer(failover, "gemini-2.5-flash"), ExtractiveAnswerer(core.embedder))
    return Engine(core.retriever, HeuristicRewriter(), answerer, turn_deadline_seconds=deadline)


def reply_citing(*ids: str, text: str = "Most students need an exemption [1].") -> Any:
    return lambda body: json.dumps({"answer": text, "citations": list(ids)})


# --- settings -----------------------------------------------------------------------------------------------------

def test_a_provider_selected_without_a_key_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_LLM", "gemini")
    assert main(["ask", STUDENTS]) == 2
    err = capsys.readouterr().err
    assert err == ("navibot: invalid setting: NAVIBOT_GEMINI_API_KEYS: NAVIBOT_LLM=gemini needs at "
                   "least one Gemini API key (comma-separated)\n")
    monkeypatch.setenv("NAVIBOT_LLM", "offline")
    monkeypatch.setenv("NAVIBOT_RERANK", "cohere")
    with pytest.raises(ValidationError, match="NAVIBOT_RERANK=cohere needs at least one Cohere API key"):
        Settings()


def test_keys_and_endpoints_are_comma_separated_and_keys_stay_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_LLM", "gemini")
    monkeypatch.setenv("NAVIBOT_GEMINI_API_KEYS", f"{KEY}, second-key")
    monkeypatch.setenv("NAVIBOT_GEMINI_BASE_URLS", "https://eu.example, https://us.example")
    settings = Settings()
    assert [k.get_secret_value() for k in settings.gemini_api_keys] == [KEY, "second-key"]
    assert settings.gemini_base_urls == ["https://eu.example", "https://us.example"]
    assert KEY not in repr(settings) and settings.turn_deadline_seconds == 12.0
    failover = gemini_failover([KEY, "second-key"], settings.gemini_base_urls, 1.0)
    labels = [e.label for e in failover.endpoints]
    assert labels == ["gemini@eu.example#key1", "gemini@eu.example#key2", "gemini@us.example#key1",
                      "gemini@us.example#key2"]
    for wrong in ("eu.example", "http://", "https://eu.example:port", "https://eu.example:70000"):
        monkeypatch.setenv("NAVIBOT_GEMINI_BASE_URLS", wrong)
        with pytest.raises(ValidationError, match="not an http"):
            Settings()
    monkeypatch.setenv("NAVIBOT_GEMINI_BASE_URLS", "navibot:proxy-pass-123@eu.example")  # scheme forgotten
    with pytest.raises(ValidationError, match=r"URL 1 .not repeated") as caught:
        Settings()
    assert "proxy-pass-123" not in str(caught.value)


def test_a_key_that_cannot_be_sent_is_refused_at_start_up_without_showing_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_LLM", "gemini")
    monkeypatch.setenv("NAVIBOT_GEMINI_API_KEYS", f"{KEY},sekr\u00e9t-key")
    assert main(["ask", STUDENTS]) == 2
    err = capsys.readouterr().err
    assert err == ("navibot: invalid setting: NAVIBOT_GEMINI_API_KEYS: key 2 has a space or a "
                   "character that is not plain ASCII\n")
    monkeypatch.setenv("NAVIBOT_RERANK", "cohere")
    monkeypatch.setenv("NAVIBOT_GEMINI_API_KEYS", KEY)
    monkeypatch.setenv("NAVIBOT_COHERE_API_KEYS", "abc def")
    with pytest.raises(ValidationError, match="key 1 has a space") as caught:
        Settings()
    assert "abc def" not in str(caught.value)


def test_a_proxy_password_in_a_base_url_is_never_logged(demo: Core, caplog: pytest.LogCaptureFixture) -> None:
    failover = gemini_failover([KEY], ["http://navibot:proxy-pass-123@127.0.0.1:9/gemini"], 1.0)
    assert [e.label for e in failover.endpoints] == ["gemini@127.0.0.1:9#key1"]
    engine = Engine(demo.retriever, HeuristicRewriter(),
                    FallbackAnswerer(GeminiAnswerer(failover, "gemini-2.5-flash"), ExtractiveAnswerer(demo.embedder)))
    with caplog.at_level(logging.INFO):
        outcome = engine.answer(STUDENTS, [], MOOD)  # nothing listens on port 9: connection refused
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "gemini@127.0.0.1:9#key1" in outcome.fallbacks[0]
    for secret in ("proxy-pass-123", KEY):
        assert secret not in caplog.text and secret not in " ".join(outcome.fallbacks)


# --- generated answers --------------------------------------------------------------------------------------------

def test_gemini_answers_through_build_bot_and_the_turn_handler(demo: Core, gemini_a: FakeGemini,
                                                                tmp_path: Path) -> None:
    settings = Settings(llm="gemini", gemini_api_keys=[SecretStr(KEY)], gemini_base_urls=[gemini_a.url])
    bot = build_bot(settings, demo.store.path, tmp_path / "conversations.sqlite3")  # type: ignore[attr-defined]
    try:
        turn = Turn("slack", "T1", "C1", "th1", "U1", STUDENTS, "ev1")
        reply = bot.handler.handle(turn)
        assert reply.kind is ReplyKind.ANSWER, reply.text
        assert reply.text.endswith("[1]") and UNAVAILABLE_NOTICE not in reply.text
        assert reply.text.removesuffix(" [1]") in reply.citations[0].quote  # the fake's sentence, verbatim
        [call] = gemini_a.calls
        assert call.path == "/v1/models/gemini-2.5-flash:generateContent" and call.headers["x-goog-api-key"] == KEY
        config = call.body["generationConfig"]
        assert config["temperature"] == 0 and config["responseMimeType"] == "application/json"
        schema = config["responseSchema"]
        assert schema["type"] == "OBJECT" and schema["required"] == ["answer", "citations"]
        assert schema["properties"]["answer"]["type"] == "STRING"
        assert schema["properties"]["citations"] == {**schema["properties"]["citations"], "type": "ARRAY",
                                                     "items": {"type": "STRING"}}
        # (the SDK sends this field in snake case; Google's JSON APIs accept both spellings)
        assert list(config["thinkingConfig"].values()) == [0] and config["maxOutputTokens"] == 1024
        system = FakeGemini.system_of(call.body)
        for rule in ("ONLY the documents", "Scope:", "Refusal:", "leave \"citations\" empty", "Greetings and thanks"):
            assert rule in system, rule
        # Every retrieved paragraph is given with its sub-chunk id, the most relevant section LAST.
        documents = call.body["contents"][0]["parts"][0]["text"]
        ranks = [int(r) for r in re.findall(r'<document rank="(\d+)"', documents)]
        assert ranks == sorted(ranks, reverse=True) and ranks[-1] == 1
        hits = bot.engine.retriever.search(STUDENTS, k=bot.engine.top_k)
        expected_ids = [sub.sub_id for hit in reversed(hits) for sub in hit.chunk.subchunks]
        assert re.findall(r'<paragraph id="([^"]+)"', documents) == expected_ids
        assert reply.citations[0].sub_id in expected_ids
        last = [p["text"] for p in call.body["contents"][-1]["parts"]]
        assert last[0].startswith("Answer format for the next question: " + MOOD.instructions)
        assert last[1:] == [f"Question: {STUDENTS}"]  # asked as is: no "understood as"

        # A follow-up: Gemini rewrites it (with the history), then answers with the history as turns.
        gemini_a.reset()
        follow = bot.handler.handle(Turn("slack", "T1", "C1", "th1", "U1", WORK, "ev2"))
        assert follow.kind is ReplyKind.ANSWER
        assert follow.standalone_question == f"{WORK} (about: {STUDENTS})"
        rewrite, answer = gemini_a.calls
        assert rewrite.path == "/v1/models/gemini-2.5-flash-lite:generateContent"
        assert f"Navigator: {STUDENTS}" in FakeGemini.text_of(rewrite.body)
        assert FakeGemini.text_of(rewrite.body).endswith(f"Latest question: {WORK}")
        assert "ONE standalone question" in FakeGemini.system_of(rewrite.body)
        assert rewrite.body["generationConfig"]["temperature"] == 0
        assert list(rewrite.body["generationConfig"]["responseSchema"]["properties"]) == ["question"]
        # documents, history (question and answer as given), then the mood's instruction and the question
        contents = answer.body["contents"]
        assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
        assert contents[2]["parts"] == [{"text": STUDENTS}]
        assert contents[3]["parts"] == [{"text": reply.text}]
        last = [p["text"] for p in contents[4]["parts"]]
        assert last == [last[0], f"Question: {WORK}", f"(Understood as: {follow.standalone_question})"]
        assert last[0].startswith("Answer format for the next question: ")
    finally:
        bot.close()


def test_navibot_ask_with_gemini_from_the_environment(gemini_a: FakeGemini, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_LLM", "gemini")
    monkeypatch.setenv("NAVIBOT_GEMINI_API_KEYS", KEY)
    monkeypatch.setenv("NAVIBOT_GEMINI_BASE_URLS", gemini_a.url)
    assert main(["ask", STUDENTS]) == 0
    out = capsys.readouterr().out
    assert "[1] SNAP for college students" in out and UNAVAILABLE_NOTICE not in out
    assert [c.path for c in gemini_a.calls] == ["/v1/models/gemini-2.5-flash:generateContent"]


def test_429_moves_to_the_next_endpoint(demo: Core, gemini_a: FakeGemini, gemini_b: FakeGemini) -> None:
    gemini_a.fail_next = [429]
    outcome = gemini_engine(demo, [gemini_a, gemini_b]).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == []
    assert len(gemini_a.calls) == 1 and len(gemini_b.calls) == 1
    assert UNAVAILABLE_NOTICE not in outcome.text


def test_a_refused_key_moves_to_the_next_key(demo: Core, gemini_a: FakeGemini,
                                             caplog: pytest.LogCaptureFixture) -> None:
    gemini_a.refused_keys = {"revoked-key"}
    failover = gemini_failover(["revoked-key", KEY], [gemini_a.url], 5.0, rng=InOrder())
    answerer = GeminiAnswerer(failover, "gemini-2.5-flash")
    engine = Engine(demo.retriever, HeuristicRewriter(), FallbackAnswerer(answerer, ExtractiveAnswerer(demo.embedder)))
    with caplog.at_level(logging.DEBUG):
        outcome = engine.answer(STUDENTS, [], MOOD)
        assert outcome.kind == "answer" and outcome.fallbacks == []
        assert [c.headers["x-goog-api-key"] for c in gemini_a.calls] == ["revoked-key", KEY]
        gemini_a.refused_keys = {"revoked-key", KEY}  # both refused: the extractive answer, and the keys unsaid
        outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "HTTP 403 PERMISSION_DENIED" in outcome.fallbacks[0]
    assert "#key1" in caplog.text and "#key2" in caplog.text
    for key in ("revoked-key", KEY):
        assert key not in caplog.text and key not in outcome.fallbacks[0]


def test_endpoints_are_tried_in_a_random_order() -> None:
    failover = Failover("p", [Endpoint("a", "a"), Endpoint("b", "b"), Endpoint("c", "c")], 1.0,
                        lambda exc: (Verdict.NEXT, "x"))
    firsts = {failover.call("op", lambda client, timeout: client) for _ in range(60)}
    assert firsts == {"a", "b", "c"}  # each endpoint leads sometimes: load and failures are spread


def test_503_everywhere_gives_the_extractive_answer_with_a_notice(demo: Core, gemini_a: FakeGemini,
                                                                 gemini_b: FakeGemini,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    gemini_a.status = gemini_b.status = 503
    with caplog.at_level(logging.INFO):
        outcome = gemini_engine(demo, [gemini_a, gemini_b]).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.citations
    assert outcome.text.endswith("\n" + UNAVAILABLE_NOTICE)
    assert len(gemini_a.calls) == 1 and len(gemini_b.calls) == 1  # each endpoint once, no SDK retries
    [fallback] = outcome.fallbacks
    assert fallback.startswith("generate: gemini generate failed:") and "HTTP 503" in fallback
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("fallback in generate:")
    assert KEY not in caplog.text


def test_a_request_refused_with_400_is_not_retried_elsewhere(demo: Core, gemini_a: FakeGemini,
                                                             gemini_b: FakeGemini) -> None:
    gemini_a.status = 400
    outcome = gemini_engine(demo, [gemini_a, gemini_b]).answer(STUDENTS, [], MOOD)
    assert len(gemini_a.calls) == 1 and gemini_b.calls == []
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "refused" in outcome.fallbacks[0]
    assert "HTTP 400 INVALID_ARGUMENT: fake error" in outcome.fallbacks[0]  # the API's reason, for the admin
    failover = gemini_failover([KEY], [gemini_a.url], 5.0)
    with pytest.raises(RequestRejected, match="HTTP 400 INVALID_ARGUMENT"):
        GeminiEmbedder(failover).failover.call("x", lambda client, t: client.models.generate_content(
            model="m", contents="hi"))


def test_a_404_page_from_a_wrong_base_url_moves_to_the_next_endpoint(demo: Core, gemini_a: FakeGemini,
                                                                     cohere_a: FakeCohere) -> None:
    """Unlike the API's own 404 (an unknown model: every endpoint would say so), an HTML page is the endpoint's."""
    wrong = WrongEndpoint().start()
    try:
        failover = gemini_failover([KEY], [wrong.url, gemini_a.url], 5.0, rng=InOrder())
        answerer = FallbackAnswerer(GeminiAnswerer(failover, "gemini-2.5-flash"), ExtractiveAnswerer(demo.embedder))
        reranker = CohereReranker(cohere_failover([KEY], [wrong.url, cohere_a.url], 5.0, rng=InOrder()))
        engine = Engine(demo.retriever, HeuristicRewriter(), answerer, reranker=reranker, rerank_candidates=20)
        outcome = engine.answer(STUDENTS, [], MOOD)
        assert outcome.kind == "answer" and outcome.fallbacks == [] and outcome.hits[0].rerank_score is not None
        assert len(wrong.calls) == 2 and len(gemini_a.calls) == 1 and len(cohere_a.calls) == 1
        gemini_a.status = cohere_a.status = 503
        outcome = engine.answer(STUDENTS, [], MOOD)
        assert "HTTP 404 that is not a Gemini API error (a wrong base URL or a proxy?)" in outcome.fallbacks[-1]
        assert "HTTP 404 that is not a Cohere API error" in outcome.fallbacks[0]
    finally:
        wrong.stop()


def test_the_fakes_refuse_requests_the_real_apis_refuse(gemini_a: FakeGemini, cohere_a: FakeCohere) -> None:
    """The fakes are strict, so a wrong request from the providers' code fails the tests instead of passing."""
    gemini = gemini_failover([KEY], [gemini_a.url], 5.0).endpoints[0].client
    cohere_client = cohere_failover([KEY], [cohere_a.url], 5.0).endpoints[0].client
    wrong: list[Callable[[], object]] = [
        lambda: gemini.models.generate_content(model="m", contents="hi", config=types.GenerateContentConfig(
            response_schema={"type": "OBJECT", "properties": {"a": {"type": "STRING"}}})),  # JSON mime type missing
        lambda: gemini.models.generate_content(model="m", contents="hi", config=types.GenerateContentConfig(
            response_mime_type="application/json", response_schema={"type": "OBJECT", "properties": {},
                                                                     "required": ["answer"]})),
        lambda: gemini.models.embed_content(model="gemini-embedding-001", contents=["x"],
                                            config=types.EmbedContentConfig(task_type="RETRIEVAL_DOC")),
        lambda: cohere_client.embed(model="embed-v4.0", input_type="search_documents", texts=["x"],
                                    embedding_types=["float"]),
        lambda: cohere_client.embed(model="embed-v4.0", input_type="search_query", texts=["x"] * 97,
                                    embedding_types=["float"]),
        lambda: cohere_client.rerank(model="rerank-v3.5", query="q", documents=[], top_n=1),
    ]
    for call in wrong:
        with pytest.raises(Exception) as caught:
            call()
        assert getattr(caught.value, "code", getattr(caught.value, "status_code", None)) == 400
    assert len(gemini_a.refused) == 3 and len(cohere_a.refused) == 3
    assert "response_mime_type" in gemini_a.refused[0] and "task_type" in gemini_a.refused[2]
    assert "input_type" in cohere_a.refused[0] and "at most 96" in cohere_a.refused[1]
    gemini_a.refused.clear()
    cohere_a.refused.clear()


def test_an_unknown_citation_is_dropped_and_none_left_means_no_answer(demo: Core, gemini_a: FakeGemini) -> None:
    engine = gemini_engine(demo, [gemini_a])
    hits = demo.retriever.search(STUDENTS, k=5)
    real = hits[0].chunk.subchunks[0].sub_id
    gemini_a.reply = reply_citing("made-up.7", real, text="Unknown claim [1]. Real claim [2].")
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and [c.sub_id for c in outcome.citations] == [real]
    assert outcome.text == "Unknown claim. Real claim [1]."
    gemini_a.reply = reply_citing("made-up.7")
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.kind == "no_answer" and outcome.citations == [] and outcome.fallbacks == []


def test_grouped_markers_and_bracketed_ids_become_numbered_citations(demo: Core, gemini_a: FakeGemini) -> None:
    engine = gemini_engine(demo, [gemini_a])
    subs = [s.sub_id for s in demo.retriever.search(STUDENTS, k=5)[0].chunk.subchunks[:2]]
    gemini_a.reply = reply_citing(*subs, text="Most students need an exemption [1, 2].")
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.text == "Most students need an exemption [1] [2]." and len(outcome.citations) == 2
    # A paragraph id written in the text instead of its number: never shown, cited even if not listed.
    gemini_a.reply = reply_citing(subs[1], text=f"Most students need an exemption [{subs[0]}] [sic] [1].")
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.text == "Most students need an exemption [1] [sic] [2]."
    assert [c.sub_id for c in outcome.citations] == [subs[0], subs[1]]
    gemini_a.reply = reply_citing("made-up.7", text="An invented rule [made-up.7].")
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.kind == "no_answer"
    # ids made from file names may hold spaces
    assert numbered_markers("A [ my docs/a b::0.1 ]. B [1,3].", ["z"], {"my docs/a b::0.1"}) == (
        "A [2]. B [1][3].", ["z", "my docs/a b::0.1"])


def test_a_reply_without_citations_is_a_no_answer(demo: Core, gemini_a: FakeGemini) -> None:
    gemini_a.reply = reply_citing(text="I could not find this in the knowledge base.")
    outcome = gemini_engine(demo, [gemini_a]).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "no_answer" and outcome.text.startswith("I couldn't find this in the knowledge base.")


def test_malformed_json_is_a_failed_generation(demo: Core, gemini_a: FakeGemini, gemini_b: FakeGemini) -> None:
    gemini_a.reply = lambda body: '{"answer": "Students can [1'  # cut off
    outcome = gemini_engine(demo, [gemini_a, gemini_b]).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == [] and len(gemini_b.calls) == 1
    gemini_b.reply = lambda body: "not json at all"
    outcome = gemini_engine(demo, [gemini_a, gemini_b]).answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "malformed JSON" in outcome.fallbacks[0]


def test_the_turn_deadline_bounds_slow_endpoints(demo: Core, gemini_a: FakeGemini, gemini_b: FakeGemini) -> None:
    gemini_a.delay = gemini_b.delay = 10.0
    engine = gemini_engine(demo, [gemini_a, gemini_b], timeout=1.8, deadline=2.4)
    started = time.monotonic()
    outcome = engine.answer(STUDENTS, [], MOOD)
    elapsed = time.monotonic() - started
    # 1.8 s on the first endpoint, what is left of the 2.4 s on the second (0.6 s, not another 1.8 s: that would
    # be 3.6 s), then the extractive answer. Wide enough for a loaded runner, narrow enough to tell the two apart.
    assert 2.3 < elapsed < 3.3, elapsed
    assert outcome.kind == "answer" and outcome.text.endswith(UNAVAILABLE_NOTICE)
    assert "timed out" in outcome.fallbacks[0]
    assert len(gemini_a.calls) == 1 and len(gemini_b.calls) == 1


def test_turns_in_several_threads_keep_their_own_deadline_and_fallbacks(demo: Core, gemini_a: FakeGemini) -> None:
    """As in the Slack and Teams adapters: turns answered at once in worker threads, sharing the SDK clients.
    Turns whose model hangs fall back when their own deadline passes; the others are not slowed or marked."""
    gemini_a.delays = {"/slow-model:generateContent": 5.0}
    failover = gemini_failover([KEY], [gemini_a.url], 5.0)

    def engine(model: str, deadline: float) -> Engine:
        answerer = FallbackAnswerer(GeminiAnswerer(failover, model), ExtractiveAnswerer(demo.embedder))
        return Engine(demo.retriever, HeuristicRewriter(), answerer, turn_deadline_seconds=deadline)

    slow, fast = engine("slow-model", 1.2), engine("gemini-2.5-flash", 12.0)
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(e.answer, STUDENTS, [], MOOD) for e in (slow, fast) * 3]
        outcomes = [(e, f.result()) for e, f in zip((slow, fast) * 3, futures, strict=True)]
    # In parallel: about 1.2 s (the slow turns' own deadline), where one after the other the three slow turns alone
    # would take 3.6 s; the bound leaves a loaded runner 1.2 s.
    assert time.monotonic() - started < 2.4
    for used, outcome in outcomes:
        if used is slow:
            assert outcome.text.endswith(UNAVAILABLE_NOTICE) and len(outcome.fallbacks) == 1
            assert "timed out" in outcome.fallbacks[0]
        else:
            assert outcome.kind == "answer" and outcome.fallbacks == [] and UNAVAILABLE_NOTICE not in outcome.text
    assert len(gemini_a.calls) == 6


def test_a_slow_rewrite_leaves_the_answer_its_time(demo: Core, gemini_a: FakeGemini, gemini_b: FakeGemini) -> None:
    gemini_a.delay = 5.0  # the rewrite model's endpoint hangs; the answer model's replies at once
    rewriter = GeminiRewriter(gemini_failover([KEY], [gemini_a.url], 5.0), "gemini-2.5-flash-lite",
                              HeuristicRewriter())
    engine = gemini_engine(demo, [gemini_b], deadline=4.0)
    engine.rewriter = rewriter
    history = [Exchange(STUDENTS, "Most students need an exemption.", STUDENTS)]
    started = time.monotonic()
    outcome = engine.answer(WORK, history, MOOD)
    elapsed = time.monotonic() - started
    assert 1.3 < elapsed < 3.0, elapsed  # the rewrite may use 35% of the 4 s (1.4 s), not all of it
    assert outcome.kind == "answer" and UNAVAILABLE_NOTICE not in outcome.text
    assert outcome.standalone == HeuristicRewriter().rewrite(WORK, history).standalone
    [fallback] = outcome.fallbacks
    assert fallback.startswith("rewrite: gemini rewrite failed") and "timed out" in fallback


def test_a_spent_deadline_starts_no_call(demo: Core, gemini_a: FakeGemini) -> None:
    outcome = gemini_engine(demo, [gemini_a], deadline=0.0).answer(STUDENTS, [], MOOD)
    assert gemini_a.calls == [] and "deadline passed" in outcome.fallbacks[0]
    assert outcome.text.endswith(UNAVAILABLE_NOTICE)


# --- rewriting ----------------------------------------------------------------------------------------------------

def test_rewrite_failure_falls_back_to_the_offline_rewriter(gemini_a: FakeGemini) -> None:
    offline = HeuristicRewriter()
    rewriter = GeminiRewriter(gemini_failover([KEY], [gemini_a.url], 5.0), "gemini-2.5-flash-lite", offline)
    history = [Exchange(STUDENTS, "Most students need an exemption.", STUDENTS)]
    assert rewriter.rewrite(STUDENTS, []).standalone == STUDENTS and gemini_a.calls == []  # nothing to rewrite
    gemini_a.rewrite_reply = lambda body: json.dumps({"question": "Can students who work get SNAP?"})
    assert rewriter.rewrite(WORK, history).standalone == "Can students who work get SNAP?"
    gemini_a.status = 503
    assert rewriter.rewrite(WORK, history) == offline.rewrite(WORK, history)
    gemini_a.status, gemini_a.rewrite_reply = None, (lambda body: json.dumps({"question": " "}))
    assert rewriter.rewrite(WORK, history) == offline.rewrite(WORK, history)


# --- embeddings ---------------------------------------------------------------------------------------------------

def test_gemini_embeddings_use_task_types_dimension_and_batches(gemini_a: FakeGemini) -> None:
    embedder = GeminiEmbedder(gemini_failover([KEY], [gemini_a.url], 5.0), dim=256)
    vectors = embedder.embed_documents([f"paragraph {i} about snap" for i in range(250)])
    assert vectors.shape == (250, 256) and abs(float((vectors**2).sum(axis=1).max()) - 1.0) < 1e-5
    assert [len(c.body["requests"]) for c in gemini_a.calls] == [100, 100, 50]
    assert {r["taskType"] for r in gemini_a.calls[0].body["requests"]} == {"RETRIEVAL_DOCUMENT"}
    assert gemini_a.calls[0].body["requests"][0]["outputDimensionality"] == 256
    query = embedder.embed_query("snap students")
    assert query.shape == (256,) and gemini_a.calls[-1].body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    assert embedder.name == "gemini/gemini-embedding-001-256"


def test_cohere_embeddings_use_input_types_and_batches_of_96(cohere_a: FakeCohere) -> None:
    embedder = CohereEmbedder(cohere_failover([KEY], [cohere_a.url], 5.0), dim=512)
    vectors = embedder.embed_documents([f"text {i}" for i in range(200)])
    assert vectors.shape == (200, 512)
    assert [len(c.body["texts"]) for c in cohere_a.calls] == [96, 96, 8]
    body = cohere_a.calls[0].body
    assert body["input_type"] == "search_document" and body["embedding_types"] == ["float"]
    assert body["output_dimension"] == 512 and body["model"] == "embed-v4.0"
    assert cohere_a.calls[0].headers["Authorization"] == f"Bearer {KEY}"
    embedder.embed_query("snap")
    assert cohere_a.calls[-1].body["input_type"] == "search_query"


def test_query_embedding_failure_falls_back_to_lexical_search(cohere_a: FakeCohere, tmp_path: Path,
                                                              kb: Path) -> None:
    settings = Settings(embedder="cohere", cohere_api_keys=[SecretStr(KEY)], cohere_base_urls=[cohere_a.url],
                        cohere_embed_dim=256)
    core = build_core(settings, tmp_path / "cohere.sqlite3")
    try:
        assert core.ingestor.ingest_paths([kb]).ingested
        engine = Engine(core.retriever, HeuristicRewriter(), make_answerer(settings, core.embedder))
        with_vectors = engine.answer("Who is a student for SNAP?", [], MOOD)
        assert with_vectors.kind == "answer" and with_vectors.fallbacks == []
        assert with_vectors.hits[0].vector_rank is not None
        cohere_a.status = 503
        cohere_a.calls.clear()
        lexical = engine.answer("Who is a student for SNAP?", [], MOOD)
        assert len(cohere_a.calls) == 1
        assert lexical.hits and all(h.vector_rank is None for h in lexical.hits)
        assert lexical.hits[0].chunk.title == "SNAP for college students"
        assert [f.split(":")[0] for f in lexical.fallbacks] == ["embed"]
    finally:
        core.close()


def test_a_store_built_with_another_embedder_says_how_to_fix_it(cohere_a: FakeCohere, tmp_path: Path, kb: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "built-offline.sqlite3"
    offline = build_core(Settings(), store)
    offline.ingestor.ingest_paths([kb])
    offline.close()
    settings = Settings(embedder="cohere", cohere_api_keys=[SecretStr(KEY)], cohere_base_urls=[cohere_a.url])
    with pytest.raises(EmbeddingMismatch) as caught:
        build_core(settings, store)
    message = str(caught.value)
    assert "built with embedding model wordllama/l2_supercat-256" in message
    assert "cohere/embed-v4.0-1536" in message and "re-ingest" in message
    assert "set NAVIBOT_EMBEDDER (and its model and dimension settings) back" in message
    monkeypatch.setenv("NAVIBOT_EMBEDDER", "cohere")
    monkeypatch.setenv("NAVIBOT_COHERE_API_KEYS", KEY)
    monkeypatch.setenv("NAVIBOT_COHERE_BASE_URLS", cohere_a.url)
    assert main(["search", "--store", str(store), "students"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("navibot: the knowledge store") and "NAVIBOT_EMBEDDER" in err
    assert cohere_a.calls == []  # refused before any query


def test_gemini_embedder_is_wired_from_settings(gemini_a: FakeGemini, tmp_path: Path, kb: Path) -> None:
    settings = Settings(embedder="gemini", gemini_api_keys=[SecretStr(KEY)], gemini_base_urls=[gemini_a.url],
                        gemini_embed_dim=128)
    assert make_embedder(settings).name == "gemini/gemini-embedding-001-128"
    core = build_core(settings, tmp_path / "gemini.sqlite3")
    try:
        core.ingestor.ingest_paths([kb])
        hits = core.retriever.search("Who is a student for SNAP?")
        assert hits[0].chunk.title == "SNAP for college students" and hits[0].vector_rank is not None
    finally:
        core.close()
    answerer = make_answerer(settings, core.embedder)  # offline answers score sentences with the bundled model
    assert isinstance(answerer, ExtractiveAnswerer) and answerer.embedder.name.startswith("wordllama/")


# --- rerank -------------------------------------------------------------------------------------------------------

def test_cohere_reranks_the_fused_candidates(demo: Core, cohere_a: FakeCohere, tmp_path: Path) -> None:
    settings = Settings(rerank="cohere", cohere_api_keys=[SecretStr(KEY)], cohere_base_urls=[cohere_a.url],
                        rerank_candidates=20)
    bot = build_bot(settings, demo.store.path, tmp_path / "c.sqlite3")  # type: ignore[attr-defined]
    try:
        outcome = bot.engine.answer(STUDENTS, [], MOOD)
        [call] = cohere_a.calls
        assert call.path == "/v2/rerank" and call.body["model"] == "rerank-v3.5"
        # the answer reads the best five, the no-answer gate what the best GATE_SECTIONS are about
        assert len(call.body["documents"]) == 20 and call.body["top_n"] == GATE_SECTIONS
        scores = [h.rerank_score for h in outcome.hits]
        assert None not in scores and scores == sorted(scores, reverse=True)  # type: ignore[type-var]
        fused = demo.retriever.search(STUDENTS, k=20)
        assert call.body["documents"][0].startswith(fused[0].chunk.heading_text + "\n\n")
        expected = sorted(fused, key=lambda h: -fake_rerank_score(STUDENTS, h))[:5]
        assert [h.chunk.chunk_id for h in outcome.hits] == [h.chunk.chunk_id for h in expected]
        assert "rerank" in outcome.timings_ms and outcome.fallbacks == []
    finally:
        bot.close()


def test_a_hanging_cohere_endpoint_is_left_at_the_per_call_timeout(demo: Core, cohere_a: FakeCohere) -> None:
    """The timeout given to the cohere SDK per request (request_options) is the one that applies: the client's
    own is 5 s here, the turn leaves rerank 30% of 2 s, and a query embedding alone gets 0.4 s."""
    cohere_a.delay = 5.0
    reranker = CohereReranker(cohere_failover([KEY], [cohere_a.url], 5.0))
    engine = Engine(demo.retriever, HeuristicRewriter(), ExtractiveAnswerer(demo.embedder), reranker=reranker,
                    rerank_candidates=20, turn_deadline_seconds=2.0)
    started = time.monotonic()
    outcome = engine.answer(STUDENTS, [], MOOD)
    elapsed = time.monotonic() - started
    assert outcome.kind == "answer" and "timed out" in outcome.fallbacks[0]
    # 0.6 s for the rerank; the whole turn's 2 s or the client's 5 s would be a timeout that did not apply.
    assert 0.55 < outcome.timings_ms["rerank"] / 1000 < 1.3 and elapsed < 3.0, (outcome.timings_ms, elapsed)
    embedder = CohereEmbedder(cohere_failover([KEY], [cohere_a.url], 0.4), dim=256)
    started = time.monotonic()
    with pytest.raises(EmbeddingUnavailable, match="timed out"):
        embedder.embed_query("snap")
    assert 0.35 < time.monotonic() - started < 2.0  # 0.4 s, not the fake's 5 s delay


def fake_rerank_score(query: str, hit: Any) -> float:
    """What the fake Cohere scores a candidate (the share of the query's words in the document sent)."""
    return overlap(query, f"{hit.chunk.heading_text}\n\n{hit.chunk.text}"[:6000])


def test_rerank_failure_keeps_the_fused_order(demo: Core, cohere_a: FakeCohere) -> None:
    cohere_a.status = 500
    reranker = CohereReranker(cohere_failover([KEY], [cohere_a.url], 5.0))
    engine = Engine(demo.retriever, HeuristicRewriter(), ExtractiveAnswerer(demo.embedder), reranker=reranker,
                    rerank_candidates=20)
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert len(cohere_a.calls) == 1  # the SDK's own retries are off: one endpoint, one call
    fused = demo.retriever.search(STUDENTS, k=20)[:5]
    assert [h.chunk.chunk_id for h in outcome.hits] == [h.chunk.chunk_id for h in fused]
    assert all(h.rerank_score is None for h in outcome.hits) and outcome.kind == "answer"
    assert outcome.fallbacks[0].startswith("rerank: cohere rerank failed")
    assert "HTTP 500: fake error 500" in outcome.fallbacks[0]
    with pytest.raises(ProviderUnavailable):
        reranker.rerank(STUDENTS, fused, 5)
