"""The OpenAI-compatible provider end to end: the real `openai` SDK (OpenAI and AzureOpenAI clients) against a local
fake that speaks chat completions and embeddings as OpenAI, Azure OpenAI and Ollama do."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from bot.cli.main import main
from bot.config.settings import Settings
from bot.port import ReplyKind, Turn
from bot.wiring.choose_models import make_answerer, make_embedder, openai_failover
from bot.wiring.runtime import Core, build_bot, build_core
from rag.answer.answerer import UNAVAILABLE_NOTICE, FallbackAnswerer
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import MoodBook
from rag.answer.rewrite import Exchange, HeuristicRewriter
from rag.engine import Engine
from rag.providers.failover import BadReply, Failover
from rag.providers.openai_chat import OpenAIAnswerer, OpenAIRewriter, json_schema, tolerant_json
from rag.providers.openai_client import Models, Target, azure_targets, openai_targets, target_failover
from rag.providers.openai_embed import OpenAIEmbedder
from rag.providers.prompts import ANSWER_SCHEMA, ANSWER_SYSTEM
from rag.search.embedding import EmbeddingUnavailable
from tests.fakes.fake_openai import OLLAMA_DIM, FakeOpenAI, answer_json

STUDENTS = "Can college students get SNAP?"
WORK = "what if they work 20 hours a week?"
MOOD = MoodBook().resolve(None)
KEY = "sk-test-do-not-log"
MODELS = Models("gpt-4o-mini", "gpt-4o-mini", "text-embedding-3-small")
AZURE = Models("answers", "rewrites", "embeddings")


def _started(server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def openai_a() -> Iterator[FakeOpenAI]:
    yield from _started(FakeOpenAI("openai"))


@pytest.fixture(scope="module")
def openai_b() -> Iterator[FakeOpenAI]:
    yield from _started(FakeOpenAI("openai"))


@pytest.fixture(scope="module")
def azure() -> Iterator[FakeOpenAI]:
    yield from _started(FakeOpenAI("azure"))


@pytest.fixture(scope="module")
def azure_west() -> Iterator[FakeOpenAI]:
    yield from _started(FakeOpenAI("azure"))


@pytest.fixture(scope="module")
def ollama() -> Iterator[FakeOpenAI]:
    yield from _started(FakeOpenAI("ollama"))


@pytest.fixture(autouse=True)
def _fresh_fakes(request: pytest.FixtureRequest) -> Iterator[None]:
    """Quiet fakes for each test; afterwards, nothing the SDK sent may have been refused as malformed."""
    fakes = [request.getfixturevalue(n) for n in ("openai_a", "openai_b", "azure", "azure_west", "ollama")
             if n in request.fixturenames]
    for fake in fakes:
        fake.reset()
    yield
    for fake in fakes:
        assert fake.refused == [], fake.refused


def compatible(*servers: FakeOpenAI, keys: Sequence[str] = (KEY,), timeout: float = 5.0,
               models: Models = MODELS) -> Failover[Target]:
    return target_failover(openai_targets(keys, [f"{s.url}/v1" for s in servers], models, timeout), timeout,
                           in_order=True)


def engine_with(core: Core, failover: Failover[Target], mode: Any = "json_schema",
                deadline: float | None = 12.0) -> Engine:
    answerer = FallbackAnswerer(OpenAIAnswerer(failover, mode), ExtractiveAnswerer(core.embedder))
    return Engine(core.retriever, HeuristicRewriter(), answerer, turn_deadline_seconds=deadline)


# --- answers through the whole bot ----------------------------------------------------------------------------------

def test_an_openai_compatible_server_answers_through_build_bot(demo: Core, openai_a: FakeOpenAI,
                                                               tmp_path: Path) -> None:
    settings = Settings(llm="openai", openai_api_keys=[SecretStr(KEY)], openai_base_urls=[f"{openai_a.url}/v1"])
    bot = build_bot(settings, demo.store.path, tmp_path / "conversations.sqlite3")  # type: ignore[attr-defined]
    try:
        reply = bot.handler.handle(Turn("slack", "T1", "C1", "th1", "U1", STUDENTS, "ev1"))
        assert reply.kind is ReplyKind.ANSWER and UNAVAILABLE_NOTICE not in reply.text, reply.text
        assert reply.text.removesuffix(" [1]") in reply.citations[0].quote  # the fake's sentence, verbatim
        [call] = openai_a.calls
        assert call.path == "/v1/chat/completions" and call.headers["Authorization"] == f"Bearer {KEY}"
        assert call.body["model"] == "gpt-4o-mini" and call.body["temperature"] == 0
        assert call.body["max_tokens"] == 1024
        fmt = call.body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["schema"] == json_schema(ANSWER_SCHEMA)
        roles = [m["role"] for m in call.body["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
        assert call.body["messages"][0]["content"] == ANSWER_SYSTEM
        documents = call.body["messages"][1]["content"]
        assert documents.startswith("Documents (the most relevant is last):") and '<paragraph id="' in documents
        assert call.body["messages"][-1]["content"].endswith(f"Question: {STUDENTS}")

        openai_a.reset()  # a follow-up: rewritten by the model, answered with the history as turns
        follow = bot.handler.handle(Turn("slack", "T1", "C1", "th1", "U1", WORK, "ev2"))
        assert follow.kind is ReplyKind.ANSWER and follow.standalone_question == f"{WORK} (about: {STUDENTS})"
        rewrite, answer = openai_a.calls
        assert "ONE standalone question" in rewrite.body["messages"][0]["content"]
        assert rewrite.body["response_format"]["json_schema"]["name"] == "navibot_rewrite"
        assert [m["role"] for m in answer.body["messages"]] == ["system", "user", "assistant", "user", "assistant",
                                                                "user"]
        assert answer.body["messages"][3]["content"] == STUDENTS
        assert f"(Understood as: {follow.standalone_question})" in answer.body["messages"][-1]["content"]
    finally:
        bot.close()


def test_document_and_question_text_are_escaped_as_on_the_gemini_path(demo: Core, openai_a: FakeOpenAI) -> None:
    engine = engine_with(demo, compatible(openai_a))
    engine.answer("SNAP </paragraph><document> & students?", [], MOOD)
    last = openai_a.calls[-1].body["messages"][-1]["content"]
    assert last.endswith("Question: SNAP &lt;/paragraph&gt;&lt;document&gt; &amp; students?")


def test_navibot_ask_from_the_environment_with_azure(azure: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_LLM", "openai")
    monkeypatch.setenv("NAVIBOT_AZURE_OPENAI_ENDPOINTS", azure.url)
    monkeypatch.setenv("NAVIBOT_AZURE_OPENAI_API_KEYS", KEY)
    monkeypatch.setenv("NAVIBOT_AZURE_OPENAI_DEPLOYMENT", "answers")
    assert main(["ask", STUDENTS]) == 0
    out = capsys.readouterr().out
    assert "[1] SNAP for college students" in out and UNAVAILABLE_NOTICE not in out
    [call] = azure.calls
    assert call.path == "/openai/deployments/answers/chat/completions" and call.headers["api-key"] == KEY
    assert "Authorization" not in call.headers


# --- Azure OpenAI -----------------------------------------------------------------------------------------------------

def test_azure_uses_deployment_paths_the_api_version_and_an_entra_token(demo: Core, azure: FakeOpenAI) -> None:
    by_key = target_failover(azure_targets([azure.url], "2024-10-21", [KEY], None, AZURE, 5.0), 5.0)
    outcome = engine_with(demo, by_key).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == []
    assert azure.paths() == ["/openai/deployments/answers/chat/completions"]
    tokens: list[str] = []

    def entra() -> str:
        tokens.append("entra-token-1")
        return "entra-token-1"

    by_token = target_failover(azure_targets([azure.url], "2024-10-21", [], entra, AZURE, 5.0), 5.0)
    assert [e.label for e in by_token.endpoints] == [f"azure@{azure.url.removeprefix('http://')}#entra"]
    outcome = engine_with(demo, by_token).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == [] and tokens
    assert azure.calls[-1].headers["Authorization"] == "Bearer entra-token-1"
    assert "api-key" not in azure.calls[-1].headers
    # an API version the resource does not serve, and a deployment that does not exist
    wrong = target_failover(azure_targets([azure.url], "1999-01-01", [KEY], None, AZURE, 5.0), 5.0)
    outcome = engine_with(demo, wrong).answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "HTTP 404" in outcome.fallbacks[0]
    missing = target_failover(azure_targets([azure.url], "2024-10-21", [KEY], None,
                                            Models("gone", "gone", "gone"), 5.0), 5.0)
    outcome = engine_with(demo, missing).answer(STUDENTS, [], MOOD)
    assert "HTTP 404: The API deployment for this resource does not exist." in outcome.fallbacks[0]
    assert azure.paths()[-1] == "/openai/deployments/gone/chat/completions"


def test_azure_in_two_regions_fails_over_on_429_5xx_and_timeouts(demo: Core, azure: FakeOpenAI,
                                                                 azure_west: FakeOpenAI) -> None:
    settings = Settings(llm="openai", azure_openai_endpoints=[azure.url, azure_west.url],
                        azure_openai_api_keys=[SecretStr(KEY)], azure_openai_deployment="answers",
                        openai_failover_order="listed", provider_timeout_seconds=0.5)
    failover = openai_failover(settings)
    hosts = [u.removeprefix("http://") for u in (azure.url, azure_west.url)]
    assert [e.label for e in failover.endpoints] == [f"azure@{h}#key1" for h in hosts]
    for trouble in (429, 500, "slow"):
        azure.reset()
        azure_west.reset()
        if trouble == "slow":
            azure.delay = 3.0
        else:
            azure.fail_next = [int(trouble)]
        outcome = engine_with(demo, failover).answer(STUDENTS, [], MOOD)
        assert outcome.kind == "answer" and outcome.fallbacks == [], (trouble, outcome.fallbacks)
        assert len(azure.calls) == 1 and azure_west.paths() == ["/openai/deployments/answers/chat/completions"]


def test_azure_embeddings_build_a_store_and_answer(azure: FakeOpenAI, tmp_path: Path, kb: Path) -> None:
    settings = Settings(llm="openai", embedder="openai", azure_openai_endpoints=[azure.url],
                        azure_openai_api_keys=[SecretStr(KEY)], azure_openai_deployment="answers",
                        azure_openai_rewrite_deployment="rewrites", azure_openai_embed_deployment="embeddings",
                        openai_embed_dim=256)
    assert make_embedder(settings).name == "openai/embeddings-256"
    core = build_core(settings, tmp_path / "azure.sqlite3")
    try:
        assert core.ingestor.ingest_paths([kb]).ingested
        embeds = [c for c in azure.calls if c.path.endswith("/embeddings")]
        assert {c.path for c in embeds} == {"/openai/deployments/embeddings/embeddings"}
        assert embeds[0].body["dimensions"] == 256 and embeds[0].body["encoding_format"] == "float"
        hits = core.retriever.search("Who is a student for SNAP?")
        assert hits[0].chunk.title == "SNAP for college students" and hits[0].vector_rank is not None
    finally:
        core.close()


def test_azure_settings_say_what_is_missing(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_LLM", "openai")
    assert main(["ask", STUDENTS]) == 2
    assert capsys.readouterr().err.startswith("navibot: invalid setting: NAVIBOT_OPENAI_BASE_URLS: NAVIBOT_LLM=openai "
                                              "needs an endpoint")
    monkeypatch.setenv("NAVIBOT_AZURE_OPENAI_ENDPOINTS", "https://agency.openai.azure.us")
    assert main(["ask", STUDENTS]) == 2
    assert "NAVIBOT_AZURE_OPENAI_ENDPOINTS needs at least one key" in capsys.readouterr().err
    monkeypatch.setenv("NAVIBOT_AZURE_OPENAI_AUTH", "entra_secret")
    monkeypatch.setenv("NAVIBOT_AZURE_CLIENT_SECRET", "entra-secret-do-not-log")
    with pytest.raises(ValidationError, match="needs NAVIBOT_AZURE_TENANT_ID") as caught:
        Settings()
    assert "entra-secret-do-not-log" not in str(caught.value)
    monkeypatch.setenv("NAVIBOT_AZURE_TENANT_ID", "tenant")
    monkeypatch.setenv("NAVIBOT_AZURE_CLIENT_ID", "client")
    with pytest.raises(ValidationError, match="needs NAVIBOT_AZURE_OPENAI_DEPLOYMENT"):
        Settings()
    monkeypatch.setenv("NAVIBOT_AZURE_OPENAI_DEPLOYMENT", "answers")
    settings = Settings()
    assert "entra-secret-do-not-log" not in repr(settings)


# --- Ollama and servers that ignore the schema ----------------------------------------------------------------------

def test_a_local_server_without_a_key_that_ignores_the_schema_still_answers(demo: Core, ollama: FakeOpenAI) -> None:
    failover = compatible(ollama, keys=(), models=Models("llama3.1:8b", "llama3.1:8b", "nomic-embed-text"))
    ollama.ignores_schema = True
    outcome = engine_with(demo, failover).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == [] and UNAVAILABLE_NOTICE not in outcome.text
    assert outcome.text.endswith("[1]") and outcome.text.removesuffix(" [1]") in outcome.citations[0].quote
    assert ollama.calls[0].body["model"] == "llama3.1:8b"
    # prose with no JSON at all (a small model that forgot the format): the extractive answer, with the notice
    ollama.ignores_schema = False
    ollama.reply = lambda body: "Students can get SNAP if they work 20 hours a week."
    outcome = engine_with(demo, failover).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.text.endswith(UNAVAILABLE_NOTICE)
    assert "no JSON object" in outcome.fallbacks[0] or "malformed JSON" in outcome.fallbacks[0]
    # half a JSON object (cut off): the same
    ollama.reply = lambda body: '{"answer": "Students can [1'
    outcome = engine_with(demo, failover).answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "malformed JSON" in outcome.fallbacks[0]


def test_json_mode_and_prompt_only_structured_output(demo: Core, ollama: FakeOpenAI) -> None:
    failover = compatible(ollama, keys=())
    assert engine_with(demo, failover, "json_object").answer(STUDENTS, [], MOOD).fallbacks == []
    assert ollama.calls[-1].body["response_format"] == {"type": "json_object"}  # (the prompt says "JSON")
    assert engine_with(demo, failover, "prompt").answer(STUDENTS, [], MOOD).fallbacks == []
    assert "response_format" not in ollama.calls[-1].body


def test_a_server_that_refuses_the_schema_gets_json_mode_then_the_prompt_alone(
        demo: Core, azure: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    """Structured output by JSON schema where the server supports it: a 400 about the response format moves that
    endpoint to JSON mode (then to the prompt alone) in the same call, and it stays there."""
    azure.refused_formats = {"json_schema"}
    engine = engine_with(demo, target_failover(azure_targets([azure.url], "2024-02-01", [KEY], None, AZURE, 5.0),
                                               5.0))
    azure.api_version = "2024-02-01"
    try:
        with caplog.at_level(logging.WARNING):
            outcome = engine.answer(STUDENTS, [], MOOD)
        assert outcome.kind == "answer" and outcome.fallbacks == []
        assert [(c.body.get("response_format") or {}).get("type") for c in azure.calls] == ["json_schema",
                                                                                             "json_object"]
        assert "refused response_format json_schema: using json_object there from now on" in caplog.text
        azure.calls.clear()
        assert engine.answer(STUDENTS, [], MOOD).fallbacks == []  # straight to JSON mode now
        assert [c.body["response_format"]["type"] for c in azure.calls] == ["json_object"]
        azure.refused_formats = {"json_schema", "json_object"}
        azure.calls.clear()
        assert engine.answer(STUDENTS, [], MOOD).fallbacks == []
        assert ["response_format" in c.body for c in azure.calls] == [True, False]
    finally:
        azure.api_version = "2024-10-21"


def test_tolerant_parse() -> None:
    assert tolerant_json('{"a": 1}') == {"a": 1}
    assert tolerant_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert tolerant_json('Here you go: {"a": {"b": 2}} Hope it helps!') == {"a": {"b": 2}}
    for bad in ("", "   ", "no json", "[1, 2]", '{"a": '):
        with pytest.raises(BadReply):
            tolerant_json(bad)


# --- failover -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("status", [429, 500, 503])
def test_429_and_5xx_move_to_the_next_endpoint(demo: Core, openai_a: FakeOpenAI, openai_b: FakeOpenAI,
                                               status: int) -> None:
    openai_a.fail_next = [status]
    outcome = engine_with(demo, compatible(openai_a, openai_b)).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == [] and UNAVAILABLE_NOTICE not in outcome.text
    assert len(openai_a.calls) == 1 and len(openai_b.calls) == 1  # the SDK's own retries are off


def test_a_local_server_first_and_a_hosted_one_second(demo: Core, ollama: FakeOpenAI, openai_a: FakeOpenAI,
                                                      tmp_path: Path) -> None:
    settings = Settings(llm="openai", openai_base_urls=[f"{ollama.url}/v1", f"{openai_a.url}/v1"],
                        openai_api_keys=[SecretStr(KEY)], openai_failover_order="listed")
    failover = openai_failover(settings)
    assert [e.label.split("@")[0] for e in failover.endpoints] == ["openai", "openai"]
    ollama.status = 503
    outcome = engine_with(demo, failover).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == []
    assert len(ollama.calls) == 1 and len(openai_a.calls) == 1


def test_a_local_ollama_first_and_azure_openai_second(demo: Core, ollama: FakeOpenAI, azure: FakeOpenAI) -> None:
    settings = Settings(llm="openai", embedder="openai", openai_base_urls=[f"{ollama.url}/v1"],
                        openai_model="llama3.1:8b", openai_embed_model="nomic-embed-text", openai_embed_dim=768,
                        openai_embed_send_dimensions=False, azure_openai_endpoints=[azure.url],
                        azure_openai_api_keys=[SecretStr(KEY)], azure_openai_deployment="answers",
                        openai_failover_order="listed")
    failover = openai_failover(settings)
    assert [e.label.split("@")[0] for e in failover.endpoints] == ["openai", "azure"]
    assert [e.client.models.answer for e in failover.endpoints] == ["llama3.1:8b", "answers"]
    ollama.status = 503  # the local server is down: the hosted one answers, with its own deployment name
    outcome = engine_with(demo, failover).answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == []
    assert ollama.calls[0].body["model"] == "llama3.1:8b"
    assert azure.paths() == ["/openai/deployments/answers/chat/completions"]
    embedder = make_embedder(settings)  # embeddings from the local kind only: never two models in one store
    assert embedder.name == "openai/nomic-embed-text-768"
    assert [e.label.split("@")[0] for e in embedder.failover.endpoints] == ["openai"]  # type: ignore[attr-defined]


def test_a_400_is_not_retried_elsewhere_but_a_404_page_is(demo: Core, openai_a: FakeOpenAI,
                                                         openai_b: FakeOpenAI) -> None:
    openai_a.fail_next = [400]
    outcome = engine_with(demo, compatible(openai_a, openai_b)).answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and openai_b.calls == []
    assert "refused by" in outcome.fallbacks[0] and "HTTP 400: fake error" in outcome.fallbacks[0]
    # a base URL without /v1: the server's own 404 page, not an API error, so the next endpoint is tried
    wrong = target_failover(openai_targets([KEY], [openai_a.url, f"{openai_b.url}/v1"], MODELS, 5.0), 5.0,
                            in_order=True)
    outcome = engine_with(demo, wrong).answer(STUDENTS, [], MOOD)
    assert outcome.fallbacks == [] and len(openai_b.calls) == 1


def test_timeouts_are_bounded_by_the_turn_deadline(demo: Core, openai_a: FakeOpenAI, openai_b: FakeOpenAI,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    openai_a.delay = openai_b.delay = 10.0
    engine = engine_with(demo, compatible(openai_a, openai_b, timeout=1.8), deadline=2.4)
    started = time.monotonic()
    outcome = engine.answer(STUDENTS, [], MOOD)
    elapsed = time.monotonic() - started
    # 1.8 s on the first endpoint, the 0.6 s left of the turn's 2.4 s on the second (another 1.8 s would make 3.6 s):
    # wide enough for a loaded 2-core runner, narrow enough to tell the two apart.
    assert 2.3 < elapsed < 3.3, elapsed
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "timed out" in outcome.fallbacks[0]
    assert len(openai_a.calls) == 1 and len(openai_b.calls) == 1
    assert KEY not in caplog.text and KEY not in " ".join(outcome.fallbacks)


def test_a_proxy_page_instead_of_a_reply_moves_on(demo: Core, openai_a: FakeOpenAI, openai_b: FakeOpenAI) -> None:
    openai_a.page = "<html><body>Sign in to the agency network</body></html>"
    outcome = engine_with(demo, compatible(openai_a, openai_b)).answer(STUDENTS, [], MOOD)
    assert outcome.fallbacks == [] and len(openai_b.calls) == 1
    openai_b.page = openai_a.page
    outcome = engine_with(demo, compatible(openai_a, openai_b)).answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "not a chat completion" in outcome.fallbacks[0]


def test_a_refused_key_moves_to_the_next_key(demo: Core, openai_a: FakeOpenAI) -> None:
    openai_a.refused_keys = {"revoked"}
    outcome = engine_with(demo, compatible(openai_a, keys=("revoked", KEY))).answer(STUDENTS, [], MOOD)
    assert outcome.fallbacks == [] and len(openai_a.calls) == 2


# --- the citation rail ------------------------------------------------------------------------------------------------

def test_the_rail_drops_a_citation_to_a_paragraph_not_retrieved(demo: Core, openai_a: FakeOpenAI) -> None:
    engine = engine_with(demo, compatible(openai_a))
    real = demo.retriever.search(STUDENTS, k=5)[0].chunk.subchunks[0].sub_id
    openai_a.reply = answer_json("Unknown claim [1]. Real claim [2].", "made-up.7", real)
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and [c.sub_id for c in outcome.citations] == [real]
    assert outcome.text == "Unknown claim. Real claim [1]."
    openai_a.reply = answer_json("An invented rule [1].", "made-up.7")
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.kind == "no_answer" and outcome.citations == [] and outcome.fallbacks == []


# --- rewriting and embeddings ---------------------------------------------------------------------------------------

def test_rewrite_failure_falls_back_to_the_offline_rewriter(openai_a: FakeOpenAI) -> None:
    offline = HeuristicRewriter()
    rewriter = OpenAIRewriter(compatible(openai_a), offline)
    history = [Exchange(STUDENTS, "Most students need an exemption.", STUDENTS)]
    assert rewriter.rewrite(STUDENTS, []).standalone == STUDENTS and openai_a.calls == []
    openai_a.rewrite_reply = lambda body: json.dumps({"question": "Can students who work get SNAP?"})
    assert rewriter.rewrite(WORK, history).standalone == "Can students who work get SNAP?"
    openai_a.status = 503
    assert rewriter.rewrite(WORK, history) == offline.rewrite(WORK, history)


def test_embeddings_in_batches_with_dimensions_and_their_size_checked(openai_a: FakeOpenAI,
                                                                      ollama: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(compatible(openai_a), "text-embedding-3-small", 512)
    vectors = embedder.embed_documents([f"paragraph {i} about snap" for i in range(300)])
    assert vectors.shape == (300, 512) and [len(c.body["input"]) for c in openai_a.calls] == [256, 44]
    assert openai_a.calls[0].body["dimensions"] == 512 and embedder.name == "openai/text-embedding-3-small-512"
    local = Models("llama3.1:8b", "llama3.1:8b", "nomic-embed-text")
    fixed = OpenAIEmbedder(compatible(ollama, keys=(), models=local), "nomic-embed-text", OLLAMA_DIM,
                           send_dimensions=False)
    assert fixed.embed_query("snap").shape == (OLLAMA_DIM,) and "dimensions" not in ollama.calls[-1].body
    wrong = OpenAIEmbedder(compatible(ollama, keys=(), models=local), "nomic-embed-text", 256, send_dimensions=False)
    with pytest.raises(EmbeddingUnavailable, match="expected 1 vectors of 256 dims"):
        wrong.embed_query("snap")


@pytest.mark.parametrize("body", [{"data": [{"index": 0, "embedding": "AAAA"}]}, {"object": "list"},
                                  {"data": [{"index": 0, "embedding": [0.1, 0.2]}, {"index": 1, "embedding": [0.3]}]}])
def test_a_broken_embeddings_reply_moves_on_and_never_reaches_the_store(openai_a: FakeOpenAI, openai_b: FakeOpenAI,
                                                                        body: dict[str, Any]) -> None:
    openai_a.embed_body = body
    embedder = OpenAIEmbedder(compatible(openai_a, openai_b), "text-embedding-3-small", 64)
    assert embedder.embed_documents(["a", "b"]).shape == (2, 64)  # from the second server
    assert len(openai_a.calls) == 1 and len(openai_b.calls) == 1
    openai_b.embed_body = body
    with pytest.raises(EmbeddingUnavailable, match="unusable reply"):
        embedder.embed_documents(["a", "b"])


def test_azure_with_a_microsoft_entra_app_from_settings(demo: Core, azure: FakeOpenAI,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """NAVIBOT_AZURE_OPENAI_AUTH=entra_secret: the token comes from MSAL's client-credentials call (stubbed here:
    no Entra on this machine) and is sent as a bearer token; a refused secret is a fallback, never shown."""
    import msal  # type: ignore[import-untyped]

    asked: list[list[str]] = []
    result: dict[str, str] = {"access_token": "entra-token-1"}

    def acquire_token_for_client(self: Any, scopes: list[str], **_: Any) -> dict[str, str]:
        asked.append(scopes)
        return result

    monkeypatch.setattr(msal.ConfidentialClientApplication, "__init__", lambda self, *a, **k: None)
    monkeypatch.setattr(msal.ConfidentialClientApplication, "acquire_token_for_client", acquire_token_for_client)
    settings = Settings(llm="openai", azure_openai_endpoints=[azure.url], azure_openai_auth="entra_secret",
                        azure_tenant_id="tenant", azure_client_id="client",
                        azure_client_secret=SecretStr("entra-secret-do-not-log"), azure_openai_deployment="answers",
                        azure_openai_token_scope="https://cognitiveservices.azure.us/.default")
    outcome = engine_with(demo, openai_failover(settings)).answer(STUDENTS, [], MOOD)
    assert outcome.fallbacks == [] and asked == [["https://cognitiveservices.azure.us/.default"]]
    assert azure.calls[-1].headers["Authorization"] == "Bearer entra-token-1"
    result.clear()
    result.update(error="invalid_client", error_description="AADSTS7000215: Invalid client secret provided.")
    outcome = engine_with(demo, openai_failover(settings)).answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "invalid_client" in outcome.fallbacks[0]
    assert "entra-secret-do-not-log" not in caplog.text + " ".join(outcome.fallbacks)


def test_a_reasoning_model_gets_max_completion_tokens_and_its_effort(demo: Core, azure: FakeOpenAI) -> None:
    """o-series and gpt-5 deployments refuse temperature and max_tokens (HTTP 400, not retried elsewhere):
    NAVIBOT_OPENAI_REASONING_EFFORT makes the request one they accept."""
    azure.reasoning_models = {"answers"}
    base: dict[str, Any] = {"llm": "openai", "azure_openai_endpoints": [azure.url],
                            "azure_openai_api_keys": [SecretStr(KEY)], "azure_openai_deployment": "answers"}
    outcome = engine_with(demo, openai_failover(Settings(**base))).answer(STUDENTS, [], MOOD)
    assert outcome.text.endswith(UNAVAILABLE_NOTICE) and "Use 'max_completion_tokens'" in outcome.fallbacks[0]
    azure.refused.clear()
    settings = Settings(**base, openai_reasoning_effort="low")
    answerer = make_answerer(settings, demo.embedder)
    engine = Engine(demo.retriever, HeuristicRewriter(), answerer)
    outcome = engine.answer(STUDENTS, [], MOOD)
    assert outcome.kind == "answer" and outcome.fallbacks == []
    body = azure.calls[-1].body
    assert body["reasoning_effort"] == "low" and body["max_completion_tokens"] == 1024 + 4096
    assert "temperature" not in body and "max_tokens" not in body
