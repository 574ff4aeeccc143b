"""Personal data never leaves the process: the question and the history are redacted before the rewrite, the query
embedding, the rerank and the answer, whatever the conversation store keeps. Checked on the request bodies the real
google-genai and cohere clients send to the fake servers; NAVIBOT_REDACT_OUTBOUND=false sends them as typed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.cli.main import main
from bot.config.settings import Settings
from bot.port import ReplyKind, Turn
from bot.wiring.runtime import build_bot, build_core
from rag.redaction import use_case_patterns
from tests.fakes.fake_models import FakeCohere, FakeGemini

PERSONAL = {"ssn": "123-45-6789", "dob": "01/02/1980", "phone": "555-867-5309", "a-number": "A123456789",
            "card": "4111 1111 1111 1111", "case": "CASE-204518", "email": "maria.lopez@example.com"}
FIRST = (f"My client Maria (SSN {PERSONAL['ssn']}, DOB {PERSONAL['dob']}, cell {PERSONAL['phone']}) is a college "
         f"student: can she get SNAP?")
FOLLOW = (f"what if she works 20 hours a week? her A-number is {PERSONAL['a-number']}, card "
          f"{PERSONAL['card']}, case {PERSONAL['case']}, mail {PERSONAL['email']}")


@pytest.fixture(scope="module")
def fakes() -> Iterator[tuple[FakeGemini, FakeCohere]]:
    with FakeGemini() as gemini, FakeCohere() as cohere:
        yield gemini, cohere


@pytest.fixture(autouse=True)
def _no_case_patterns_after() -> Iterator[None]:
    yield
    use_case_patterns([])  # build_core set them for the whole process


def sent_bodies(fakes: tuple[FakeGemini, FakeCohere], tmp_path: Path, kb: Path, outbound: bool) -> list[str]:
    """Two turns of one thread, with a conversation store that keeps the text in clear (NAVIBOT_REDACT_PII=false),
    so that only the outbound redaction stands between the history and the providers."""
    gemini, cohere = fakes
    settings = Settings(_env_file=None, data_dir=tmp_path, llm="gemini", embedder="cohere",  # type: ignore[call-arg]
                        rerank="cohere", cohere_embed_dim=256, gemini_api_keys=[SecretStr("k")],
                        gemini_base_urls=[gemini.url], cohere_api_keys=[SecretStr("k")], cohere_base_urls=[cohere.url],
                        redact_pii=False, redact_outbound=outbound, redact_patterns=[r"CASE-\d{6}"])
    bot = build_bot(settings)
    try:
        bot.core.ingestor.ingest_paths([kb])
        gemini.reset()
        cohere.reset()
        first = bot.handler.handle(Turn("slack", "T1", "C1", "th1", "U1", FIRST, "ev1"))
        follow = bot.handler.handle(Turn("slack", "T1", "C1", "th1", "U1", FOLLOW, "ev2"))
        assert first.kind is ReplyKind.ANSWER and follow.kind is ReplyKind.ANSWER, (first.text, follow.text)
        assert gemini.refused == [] and cohere.refused == []
        calls = [*gemini.calls, *cohere.calls]
        ends = [c.path.rsplit(":", 1)[-1] for c in calls]  # two turns: embed, rerank, answer; and one rewrite
        assert set(ends) == {"/v2/embed", "/v2/rerank", "generateContent"} and ends.count("generateContent") == 3
        return [json.dumps(c.body, ensure_ascii=False) for c in calls]
    finally:
        bot.close()


def test_no_personal_data_reaches_gemini_or_cohere(fakes: tuple[FakeGemini, FakeCohere], tmp_path: Path,
                                                  kb: Path) -> None:
    bodies = sent_bodies(fakes, tmp_path, kb, outbound=True)
    for body in bodies:
        for kind, value in PERSONAL.items():
            assert value not in body, (kind, body[:300])
    sent = "\n".join(bodies)
    for placeholder in ("[ssn]", "[dob]", "[phone]", "[a-number]", "[card]", "[case]", "[email]"):
        assert placeholder in sent  # the question still reads as asked, with the details replaced
    assert "college student" in sent and "20 hours a week" in sent


def test_redact_outbound_false_sends_the_question_as_typed(fakes: tuple[FakeGemini, FakeCohere], tmp_path: Path,
                                                           kb: Path) -> None:
    bodies = sent_bodies(fakes, tmp_path, kb, outbound=False)
    sent = "\n".join(bodies)
    assert all(value in sent for value in PERSONAL.values())


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).redact_outbound is True  # type: ignore[call-arg]
    monkeypatch.setenv("NAVIBOT_REDACT_OUTBOUND", "false")
    assert Settings(_env_file=None).redact_outbound is False  # type: ignore[call-arg]


def test_navibot_search_redacts_the_query_it_embeds(fakes: tuple[FakeGemini, FakeCohere], tmp_path: Path, kb: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _, cohere = fakes
    for name, value in {"DATA_DIR": str(tmp_path), "EMBEDDER": "cohere",
                        "COHERE_API_KEYS": "k", "COHERE_BASE_URLS": cohere.url}.items():
        monkeypatch.setenv(f"NAVIBOT_{name}", value)
    core = build_core(Settings(_env_file=None))  # type: ignore[call-arg]
    try:
        core.ingestor.ingest_paths([kb])
    finally:
        core.close()
    cohere.reset()
    assert main(["search", f"student SNAP for SSN {PERSONAL['ssn']}"]) == 0
    assert "SNAP for college students" in capsys.readouterr().out
    queries = [c.body["texts"] for c in cohere.calls if c.body.get("input_type") == "search_query"]
    assert len(queries) == 1  # the question and its glossary terms ("SSN") in one call
    assert queries[0][0] == "student SNAP for SSN [ssn]"
    assert not any(PERSONAL["ssn"] in text for text in queries[0])
