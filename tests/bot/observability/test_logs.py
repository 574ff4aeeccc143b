"""Log lines: JSON and text shapes, the trace id, one navibot.turns line per turn, PII redacted (questions only
when allowed), secrets masked whatever the settings, and the `navibot` command wired to all of it."""

from __future__ import annotations

import io
import json
import logging
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchmarks.serve_harness import (
    BOT_TOKEN,
    SECRET,
    ServeHarness,
    answer_id_of,
    channel_id,
    run_all,
)
from bot.chat.handler import TurnHandler
from bot.cli.main import main
from bot.config.settings import Settings
from bot.conversations.sqlite import SQLiteConversationStore
from bot.observability.logs import configure_logging, mask_secrets, resolve_format
from bot.observability.observers import Observers, current_trace
from bot.observability.turn_log import TurnLog
from bot.port import ReplyKind, Turn
from bot.wiring.runtime import Core, build_engine
from rag.answer.moods import MoodBook
from rag.providers.failover import (
    Endpoint,
    Failover,
    ProviderUnavailable,
    not_an_http_error,
)

PII_QUESTION = ("Caller SSN 123-45-6789, phone (555) 867-5309, mail jane.doe@example.org, DOB 01/02/1980: "
                "can college students get SNAP?")
ORIGINALS = ("123-45-6789", "867-5309", "jane.doe@example.org", "01/02/1980")

Lines = Callable[[], list[str]]


def _remove_ours() -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == "navibot-stderr":
            root.removeHandler(handler)


@pytest.fixture
def logs() -> Iterator[Callable[..., Lines]]:
    """configure_logging into a buffer; returns a function giving the lines written so far."""
    level = logging.getLogger().level
    hooks = sys.excepthook, threading.excepthook

    def configure(fmt: str = "json", redact_pii: bool = True, verbose: bool = False,
                  level: int = logging.INFO) -> Lines:
        buffer = io.StringIO()
        configure_logging(fmt, verbose, redact_pii, level=level, stream=buffer)  # type: ignore[arg-type]
        return lambda: buffer.getvalue().splitlines()

    yield configure
    _remove_ours()
    logging.getLogger().setLevel(level)
    sys.excepthook, threading.excepthook = hooks


@contextmanager
def bare_root() -> Iterator[None]:
    """The root logger without the test runner's handlers, as in a real `navibot` process. (A context manager
    in the test body, not a fixture: the runner adds its handlers for the test's call after fixtures are set up.)"""
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    hooks = sys.excepthook, threading.excepthook  # JSON mode routes uncaught exceptions through the log
    for handler in saved:
        root.removeHandler(handler)
    try:
        yield
    finally:
        _remove_ours()
        for handler in saved:
            root.addHandler(handler)
        root.setLevel(level)
        sys.excepthook, threading.excepthook = hooks
        logging.captureWarnings(False)


def handler_with(demo: Core, tmp_path: Path, settings: Settings) -> tuple[TurnHandler, SQLiteConversationStore]:
    store = SQLiteConversationStore(tmp_path / "c.sqlite3")
    return TurnHandler(build_engine(demo), store, MoodBook(), observers=Observers([TurnLog(settings)])), store


def turn_lines(lines: list[str]) -> list[dict]:  # type: ignore[type-arg]
    return [r for r in map(json.loads, lines) if r["logger"] == "navibot.turns"]


def test_json_line_shape_with_trace_id_fields_and_traceback(logs: Callable[..., Lines]) -> None:
    lines = logs("json")
    log = logging.getLogger("navibot.test")
    token = current_trace.set("0123456789ab")
    try:
        log.warning("fallback in %s: %s", "generate", "timed out", extra={"stage": "generate"})
        try:
            raise ValueError("boom\nsecond line")
        except ValueError:
            log.exception("it failed")
    finally:
        current_trace.reset(token)
    log.info("outside a turn")
    log.debug("not shown at INFO")
    first, second, third = map(json.loads, lines())
    assert first["level"] == "WARNING" and first["logger"] == "navibot.test"
    assert first["message"] == "fallback in generate: timed out" and first["stage"] == "generate"
    assert first["trace_id"] == "0123456789ab" and first["time"].endswith("Z") and "T" in first["time"]
    assert second["trace_id"] == "0123456789ab" and second["level"] == "ERROR"
    assert second["exc"].startswith("Traceback") and "ValueError: boom\nsecond line" in second["exc"]
    assert "trace_id" not in third and "exc" not in third
    assert len(lines()) == 3  # one line per record: the traceback's newlines are inside the JSON string


def test_text_lines_keep_the_usual_format(logs: Callable[..., Lines]) -> None:
    lines = logs("text")
    logging.getLogger("navibot.test").warning("mail me at jane.doe@example.org")
    assert lines() == ["WARNING navibot.test: mail me at [email]"]


def test_a_turn_is_one_line_with_the_question_redacted_when_allowed(
        demo: Core, tmp_path: Path, logs: Callable[..., Lines]) -> None:
    lines = logs("json")
    handler, store = handler_with(demo, tmp_path, Settings(log_questions=True))
    try:
        reply = handler.handle(Turn("slack", "W1", "C1", "T1", "U1", PII_QUESTION, "E1"))
        assert reply.answer_id
        handler.record_feedback(reply.answer_id, "U1", False, "wrong program, call me at 555-867-5309")
    finally:
        store.close()
    [line, feedback] = turn_lines(lines())
    assert line["event"] == "turn" and line["trace_id"] == reply.trace_id and line["platform"] == "slack"
    assert line["kind"] == reply.kind.value and line["answer_id"] == reply.answer_id
    assert {"rewrite", "retrieve", "generate", "total"} <= line["timings_ms"].keys()
    assert line["citations"] == len(reply.citations) and line["mood"] == reply.mood and line["error"] is None
    for tag in ("[ssn]", "[phone]", "[email]", "[dob]"):
        assert tag in line["question"] and tag in line["message"]
    everything = "\n".join(lines())
    for original in ORIGINALS:
        assert original not in everything
    assert feedback["event"] == "feedback" and feedback["rating"] == "down" and feedback["platform"] == "slack"
    assert "wrong program" not in everything  # a feedback reason is never logged


def test_no_question_text_unless_allowed(demo: Core, tmp_path: Path, logs: Callable[..., Lines]) -> None:
    lines = logs("json")
    handler, store = handler_with(demo, tmp_path, Settings())
    try:
        handler.handle(Turn("slack", "W1", "C1", "T1", "U1", "Can college students get SNAP? " + PII_QUESTION))
    finally:
        store.close()
    [line] = turn_lines(lines())
    assert "question" not in line
    everything = "\n".join(lines())
    assert "college" not in everything and "[ssn]" not in everything


def test_redaction_can_be_turned_off(demo: Core, tmp_path: Path, logs: Callable[..., Lines],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented trade-off: NAVIBOT_REDACT_PII=false keeps personal data in the logs (and the store)."""
    monkeypatch.setenv("NAVIBOT_REDACT_PII", "false")
    monkeypatch.setenv("NAVIBOT_LOG_QUESTIONS", "true")
    settings = Settings()
    lines = logs("json", redact_pii=settings.redact_pii)
    handler, store = handler_with(demo, tmp_path, settings)
    try:
        handler.handle(Turn("slack", "W1", "C1", "T1", "U1", PII_QUESTION))
    finally:
        store.close()
    [line] = turn_lines(lines())
    assert line["question"] == PII_QUESTION


def test_an_exception_message_is_redacted_and_a_failed_turn_logs_its_trace_id(
        demo: Core, tmp_path: Path, logs: Callable[..., Lines]) -> None:
    lines = logs("json")
    try:
        raise LookupError("no account for jane.doe@example.org (SSN 123-45-6789)")
    except LookupError:
        logging.getLogger("navibot.test").exception("lookup for jane.doe@example.org failed")
    handler, store = handler_with(demo, tmp_path, Settings())
    store.close()  # the store fails during the turn
    reply = handler.handle(Turn("teams", "W1", "C1", "T1", "U1", "Can college students get SNAP?"))
    assert reply.kind is ReplyKind.ERROR
    records = [json.loads(line) for line in lines()]
    assert records[0]["message"] == "lookup for [email] failed"
    assert "LookupError: no account for [email] (SSN [ssn])" in records[0]["exc"]
    failed = next(r for r in records if r["logger"] == "bot.chat.handler")
    assert failed["trace_id"] == reply.trace_id and reply.trace_id in failed["message"] and "exc" in failed
    [line] = turn_lines(lines())
    assert line["kind"] == "error" and line["error"] == "store" and line["trace_id"] == reply.trace_id


def test_ids_that_start_with_digits_survive_redaction(logs: Callable[..., Lines]) -> None:
    lines = logs("text")
    logging.getLogger("navibot.test").warning("turn failed (trace 123456789abc) for 555-123-4567")
    assert lines() == ["WARNING navibot.test: turn failed (trace 123456789abc) for [phone]"]


SECRETS = ("xoxb-1234567890-abcdefghijkl", "xapp-1-A0123-456-abcdef", "AIzaSyA1234567890abcdefghijklmnopqrstu",
           "hunter2pass", "sk-live-cohere-0123456789abcdef", "tok3n-in-query")


def test_secrets_are_masked_in_a_provider_failure_even_without_pii_redaction(logs: Callable[..., Lines]) -> None:
    lines = logs("json", redact_pii=False, level=logging.DEBUG)

    def failing(client: str, timeout: float) -> str:
        raise OSError(f"POST https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent?"
                      f"key={SECRETS[2]} failed; headers {{'Authorization': 'Bearer {SECRETS[4]}'}}")

    def also_failing(client: str, timeout: float) -> str:
        raise OSError(f"mongodb+srv://navibot:{SECRETS[3]}@cluster0.example.mongodb.net refused; slack said "
                      f"invalid_auth for {SECRETS[0]} / {SECRETS[1]}; retry ?token={SECRETS[5]}&x=1")

    failover: Failover[str] = Failover("gemini", [Endpoint("gemini@default#key1", "a")], 5.0, not_an_http_error)
    with pytest.raises(ProviderUnavailable):
        failover.call("answer", failing)
    try:
        also_failing("b", 1.0)
    except OSError:
        logging.getLogger("navibot.test").exception("store down: %s", "mongodb://admin:hunter2pass@db:27017/")
    text = "\n".join(lines())
    assert "gemini answer failed on gemini@default#key1" in text  # the provider's line is there...
    for secret in SECRETS:
        assert secret not in text  # ...without any secret
    assert "key=***" in text and "Bearer ***" in text and "navibot:***@cluster0" in text
    assert "xox*-***" in text and "xapp-***" in text and "token=***&x=1" in text


def test_mask_secrets_leaves_ordinary_text_alone() -> None:
    text = "Basic eligibility: 130 percent of poverty; the key question is income (7 CFR 273.5)"
    assert mask_secrets(text) == text


def test_log_format_auto_is_json_for_serve_only() -> None:
    assert resolve_format("auto", "serve") == "json"
    assert resolve_format("auto", "ask") == "text"
    assert resolve_format("text", "serve") == "text" and resolve_format("json", "ask") == "json"


def test_the_navibot_command_logs_json_turn_lines(demo_store: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "json")
    monkeypatch.setenv("NAVIBOT_LOG_QUESTIONS", "true")
    with bare_root():
        assert main(["-v", "ask", "--store", str(demo_store), PII_QUESTION]) in (0, 1)  # 1: no answer
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.err.splitlines()]  # every stderr line is JSON
    [line] = [r for r in records if r["logger"] == "navibot.turns"]
    assert line["platform"] == "cli" and "[ssn]" in line["question"]
    assert not any(original in captured.err for original in ORIGINALS)


def test_the_navibot_command_is_quiet_and_text_by_default(demo_store: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    with bare_root():
        assert main(["ask", "--store", str(demo_store), "Can college students get SNAP?"]) == 0
        assert capsys.readouterr().err == ""  # WARNING level: no turn line
        assert main(["-v", "ask", "--store", str(demo_store), "Can college students get SNAP?"]) == 0
    err = capsys.readouterr().err
    assert "INFO navibot.turns: turn " in err and " cli answer citations=" in err


def test_a_bad_setting_is_still_one_line(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "xml")
    with bare_root():
        assert main(["search", "anything"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("navibot: invalid setting: NAVIBOT_LOG_FORMAT") and err.count("\n") == 1
    monkeypatch.setenv("NAVIBOT_LOG_FORMAT", "json")
    monkeypatch.setenv("NAVIBOT_TOP_K", "0")
    with bare_root():
        assert main(["search", "anything"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("navibot: invalid setting: NAVIBOT_TOP_K") and err.count("\n") == 1


def forged_mention(harness: ServeHarness, channel: str, text: str) -> int:
    body = json.dumps({"type": "event_callback", "team_id": "T0NAVI", "event_id": "EvForged", "event": {
        "type": "app_mention", "user": "U0X", "text": text, "ts": "1.000001", "channel": channel}})
    headers = {"X-Slack-Request-Timestamp": str(int(time.time())), "X-Slack-Signature": "v0=" + "0" * 64,
               "Content-Type": "application/json"}

    async def post() -> int:
        assert harness.session is not None
        async with harness.session.post(f"{harness.url}/slack/events", data=body, headers=headers) as response:
            return response.status
    return harness.loop.run(post())


def test_navibot_serve_writes_json_lines_with_one_per_turn_and_no_personal_data(demo_store: Path,
                                                                               tmp_path: Path) -> None:
    """`navibot serve` as an admin runs it (a subprocess, configured by the environment), driven by signed Slack
    events: its log is JSON lines, one per turn and per feedback click, the question redacted."""
    harness = ServeHarness(tmp_path / "serve", store=demo_store, providers=False,
                           extra_env={"NAVIBOT_LOG_QUESTIONS": "true"}).start()
    try:
        channel = channel_id()
        assert harness.mention(channel, PII_QUESTION).status == 200
        assert harness.mention(channel, "Can college students get SNAP?").status == 200
        posts = harness.wait_posts(channel, 2, timeout=30)
        answer = next(p for p in posts if answer_id_of(p))
        [(status, _)] = run_all(harness, [harness.click_feedback_async(answer, "U0CLICKER", False)])
        assert status == 200
        harness.loop.run(harness.slack.wait_for("chat.postEphemeral", 1, channel, 15), 20)
        # A request whose signature does not match (a wrong or rotated SLACK_SIGNING_SECRET, or a forgery): Slack
        # Bolt logs such a request's whole body at INFO, which would put a navigator's question in the log.
        assert forged_mention(harness, channel, "Zebrafinch: " + PII_QUESTION) == 401
    finally:
        assert harness.stop() == 0
    log = harness.log_path.read_text()
    assert "Zebrafinch" not in log and "Invalid request signature detected" in log
    # Every line is JSON but the server's own start-up line, printed for the person who started it.
    records = [json.loads(line) for line in log.splitlines() if line.strip() and not line.startswith("navibot serve:")]
    turns = [r for r in records if r.get("event") == "turn"]
    assert len(turns) == 2
    [turn] = [r for r in turns if "[ssn]" in r["question"]]
    assert turn["platform"] == "slack" and turn["kind"] in ("answer", "no_answer") and len(turn["trace_id"]) == 12
    assert turn["timings_ms"]["total"] > 0 and "[ssn]" in turn["question"] and "[dob]" in turn["question"]
    [feedback] = [r for r in records if r.get("event") == "feedback"]
    assert feedback["rating"] == "down" and feedback["platform"] == "slack"
    for secret in (*ORIGINALS, BOT_TOKEN, SECRET):
        assert secret not in log


def test_python_warnings_become_json_lines(logs: Callable[..., Lines]) -> None:
    lines = logs("json")
    try:
        warnings.warn("the token=abc123 option is deprecated", DeprecationWarning, stacklevel=1)
    finally:
        logging.captureWarnings(False)
    [line] = map(json.loads, lines())
    assert line["logger"] == "py.warnings" and "DeprecationWarning" in line["message"]
    assert "abc123" not in line["message"]


def test_library_info_lines_are_held_back_unless_verbose(logs: Callable[..., Lines]) -> None:
    lines = logs("json")
    logging.getLogger("microsoft_agents.hosting.core.connector.client.connector_client").info("Replying to activity")
    logging.getLogger("aiohttp.access").info('127.0.0.1 "POST /api/messages HTTP/1.1" 202')
    for client in ("httpx", "httpx2"):  # the model SDKs' HTTP clients: one line per Gemini or Cohere call
        logging.getLogger(client).info('HTTP Request: POST http://127.0.0.1/v2/rerank "HTTP/1.1 200 OK"')
    logging.getLogger("microsoft_agents.hosting.core").warning("a real problem")
    assert [json.loads(line)["message"] for line in lines()] == ["a real problem"]
    lines = logs("json", verbose=True)
    logging.getLogger("aiohttp.access").info('127.0.0.1 "POST /api/messages HTTP/1.1" 202')
    assert len(lines()) == 1


def test_a_teams_failure_logs_the_trace_id_of_the_apology_as_a_field_and_no_question(
        demo_store: Path, tmp_path: Path, logs: Callable[..., Lines], monkeypatch: pytest.MonkeyPatch) -> None:
    """The Bot Connector refuses the answer: the navigator gets an apology naming a trace id, and the adapter's
    error line carries that id as its `trace_id` field (searchable), with no word of the question in any line."""
    import asyncio
    import re

    from adapters.teams import agent
    from bot.wiring.runtime import build_bot
    from tests.adapters.teams.test_teams import message, running

    monkeypatch.setattr(agent, "RETRY_WAITS", (0.01, 0.01))
    lines = logs("json")
    bot = build_bot(Settings(_env_file=None, data_dir=tmp_path), demo_store,  # type: ignore[call-arg]
                    tmp_path / "conversations.sqlite3")

    async def scenario() -> str:
        async with running(bot) as h:
            h.connector.fail_next = [503, 503, 503, 503]  # the typing indicator, then the answer three times
            assert (await h.post(message(h.connector, "Zebrafinch: " + PII_QUESTION))).status == 202
            [apology] = await h.connector.wait_messages(1)
            return json.dumps(apology.body)

    try:
        apology = asyncio.run(scenario())
    finally:
        bot.close()
    shown = re.search(r"trace id ([0-9a-f]{12})", apology)
    assert shown, apology
    records = [json.loads(line) for line in lines()]
    [failed] = [r for r in records if r["logger"] == "adapters.teams.agent" and r["level"] == "ERROR"]
    assert failed["trace_id"] == shown[1]
    everything = "\n".join(lines())
    for word in ("Zebrafinch", "college", *ORIGINALS):
        assert word not in everything


def test_an_uncaught_exception_is_a_json_line_masked(logs: Callable[..., Lines]) -> None:
    """In JSON mode a traceback nothing caught (the main thread's, or a library thread's) is one JSON object with
    secrets and PII masked, not bare text lines among the JSON ones. Text mode gives Python's printing back."""
    lines = logs("json")
    try:
        raise OSError("cannot reach mongodb://navibot:hunter2pass@db:27017 for jane.doe@example.org")
    except OSError:
        sys.excepthook(*sys.exc_info())  # what Python does with an exception that leaves main()
    thread = threading.Thread(target=lambda: 1 / 0, name="library-worker")
    thread.start()
    thread.join()
    main_line, thread_line = map(json.loads, lines())
    assert main_line["level"] == "CRITICAL" and main_line["message"] == "uncaught OSError"
    assert "navibot:***@db" in main_line["exc"] and "[email]" in main_line["exc"]
    assert "hunter2pass" not in main_line["exc"] and "jane.doe" not in main_line["exc"]
    assert thread_line["message"] == "uncaught ZeroDivisionError in thread library-worker"
    assert "ZeroDivisionError" in thread_line["exc"]
    logs("text")
    assert sys.excepthook is sys.__excepthook__ and threading.excepthook is threading.__excepthook__


def test_structured_fields_are_cleaned_like_the_message(logs: Callable[..., Lines]) -> None:
    """A turn's fallbacks carry the provider's error text: the `fallbacks` field is masked as the message is."""
    from bot.observability.observers import TurnEvent

    lines = logs("json")
    cause = f"generate: POST https://example.test/v1?key={SECRETS[2]} failed for jane.doe@example.org"
    TurnLog(Settings()).turn(TurnEvent("123456789abc", "slack", "no_answer", "q", {"total": 5.0}, [cause],
                                       answer_id="1234567890abcdef1234567890abcdef"))
    [line] = map(json.loads, lines())
    assert line["fallbacks"] == ["generate: POST https://example.test/v1?key=*** failed for [email]"]
    assert line["trace_id"] == "123456789abc" and line["answer_id"] == "1234567890abcdef1234567890abcdef"
    assert SECRETS[2] not in "\n".join(lines())


@pytest.mark.parametrize(("said", "personal"), [
    ("caller SSN123-45-6789 asks", "123-45-6789"),  # a dashed SSN right after its label
    ("call her at 555-867-5309x12", "867-5309"),  # a phone number with its extension
    ("she was born 3rd March 1980", "1980"),  # a date of birth with the day first, as an ordinal
], ids=["ssn-after-label", "phone-extension", "dob-ordinal-day"])
def test_redaction_catches_glued_labels_extensions_and_ordinal_days(
        said: str, personal: str, logs: Callable[..., Lines]) -> None:
    lines = logs("text")
    logging.getLogger("navibot.test").warning(said)
    assert personal not in "\n".join(lines())


def test_an_over_long_question_is_cut_in_the_log(demo: Core, tmp_path: Path, logs: Callable[..., Lines]) -> None:
    """A pasted page (refused as too_long) is not a 40 kB log line, which a log shipper would split mid-JSON."""
    lines = logs("json")
    handler, store = handler_with(demo, tmp_path, Settings(log_questions=True))
    try:
        reply = handler.handle(Turn("slack", "W1", "C1", "T1", "U1", "SNAP rules " * 4000))
    finally:
        store.close()
    assert reply.kind is ReplyKind.ERROR
    [line] = turn_lines(lines())
    assert line["error"] == "too_long" and line["question"].endswith("… [42,000 more]")
    assert len(lines()[0]) < 6000
