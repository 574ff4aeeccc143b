"""`navibot stats` and `navibot feedback export`, and the store queries under them (answers by time, feedback by
time, answer latency), on SQLite (including a file from before latency was stored) and the MongoDB facade."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pymongo.errors import ServerSelectionTimeoutError

from bot.cli import admin_cli as admin_command
from bot.cli.main import main
from bot.config.settings import Settings
from bot.conversations import mongo as mongo_conversations
from bot.conversations import sqlite as sqlite_conversations
from bot.conversations.mongo import MongoConversationStore
from bot.conversations.redacting import RedactingConversationStore
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import AnswerRecord, ConversationStore
from bot.errors import UserError
from bot.observability.usage_report import compute_stats, defuse, parse_since, percentile, stats_text
from rag.cite.rail import Citation
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from tests.fakes.fake_mongo import FakeDatabase

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")

QUOTE = Citation(1, "snap-students", "snap-students::0", "snap-students::0.1", "SNAP for college students",
                 ["Students", "Exemptions"], "https://www.fns.usda.gov/snap/students#exemptions", None,
                 "A student can still get SNAP if one of these applies.")


def answer(answer_id: str, created: str, kind: str = "answer", latency: float | None = 100.0,
           question: str = "Can students get SNAP?", answer_text: str = "Yes, with an exemption [1].",
           platform: str = "slack") -> AnswerRecord:
    return AnswerRecord(answer_id, f"{platform}:T:C:1", platform, "U1", question, question, answer_text, kind,
                        "concise", [QUOTE] if kind == "answer" else [], created, latency)


# ------------------------------------------------------------------------------------------------ the stores


@contextmanager
def sqlite_store(folder: Path) -> Iterator[SQLiteConversationStore]:
    store = SQLiteConversationStore(folder / "conversations.sqlite3")
    yield store
    store.close()


@contextmanager
def mongo_store(folder: Path) -> Iterator[MongoConversationStore]:
    store = MongoConversationStore(MongoConnection(AsyncBridge(), FakeDatabase()))
    yield store
    store.close()


def age_rating(store: ConversationStore, answer_id: str, when: str) -> None:
    """Backdate a rating (the stores stamp ratings with the current time)."""
    if isinstance(store, SQLiteConversationStore):
        store._db.execute("UPDATE feedback SET created = ?, updated = ? WHERE answer_id = ?", (when, when, answer_id))
    else:
        assert isinstance(store, MongoConversationStore)
        db: Any = store.connection.db
        db.raw("feedback").update_many({"answer_id": answer_id}, {"$set": {"created": when, "updated": when}})


STORES = [pytest.param(sqlite_store, id="sqlite"), pytest.param(mongo_store, id="mongodb")]
Opener = Callable[[Path], Any]


@pytest.mark.parametrize("opener", STORES)
def test_latency_is_saved_and_answers_iterate_oldest_first_from_since(opener: Opener, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Pages of 3 rows, and several answers in the same millisecond: the page boundary must neither skip nor repeat.
    monkeypatch.setattr(sqlite_conversations, "PAGE", 3)
    monkeypatch.setattr(mongo_conversations, "PAGE", 3)
    with opener(tmp_path) as store:
        same = "2026-03-02T10:00:00.000+00:00"
        for n in range(7):
            store.save_answer(answer(f"b{n}", same, latency=10.0 * n))
        store.save_answer(answer("a0", "2026-03-01T23:59:59.999+00:00", kind="no_answer", latency=None))
        store.save_answer(answer("c0", "2026-03-05T08:00:00.000+00:00", latency=812.5))
        got = store.get_answer("c0")
        assert got is not None and got.latency_ms == 812.5 and got.citations == [QUOTE]
        assert store.get_answer("a0").latency_ms is None
        assert [a.answer_id for a in store.answers()] == ["a0", *(f"b{n}" for n in range(7)), "c0"]
        since = datetime(2026, 3, 2, tzinfo=UTC)
        assert [a.answer_id for a in store.answers(since)] == [*(f"b{n}" for n in range(7)), "c0"]
        assert [a.latency_ms for a in store.answers(datetime(2026, 3, 3, tzinfo=UTC))] == [812.5]
        assert list(store.answers(datetime(2026, 3, 6, tzinfo=UTC))) == []


@pytest.mark.parametrize("opener", STORES)
def test_feedback_since_counts_from_the_last_time_a_rating_was_given(opener: Opener, tmp_path: Path) -> None:
    with opener(tmp_path) as store:
        store.save_answer(answer("old", "2026-02-01T09:00:00.000+00:00"))
        store.save_answer(answer("new", "2026-03-01T09:00:00.000+00:00"))
        store.record_feedback("old", "U1", False, "wrong program")
        store.record_feedback("new", "U2", True, None)
        age_rating(store, "old", "2026-02-02T09:00:00.000+00:00")
        age_rating(store, "new", "2026-03-02T09:00:00.000+00:00")
        assert [f.answer_id for f in store.feedback()] == ["old", "new"]
        assert [f.answer_id for f in store.feedback(since=datetime(2026, 3, 1, tzinfo=UTC))] == ["new"]
        assert store.feedback("old", since=datetime(2026, 3, 1, tzinfo=UTC)) == []
        store.record_feedback("old", "U1", True, "on second thought")  # changed today: given anew
        assert [f.reason for f in store.feedback(since=datetime(2026, 3, 1, tzinfo=UTC))] == ["on second thought",
                                                                                             None]


@pytest.mark.parametrize("opener", STORES)
def test_ratings_iterate_by_the_time_they_were_given_a_page_at_a_time(opener: Opener, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_conversations, "PAGE", 3)  # a page ends between two ratings of one time
    monkeypatch.setattr(mongo_conversations, "PAGE", 3)
    with opener(tmp_path) as store:
        for n in range(5):
            store.save_answer(answer(f"r{n}", f"2026-03-0{n + 1}T09:00:00.000+00:00"))
            for user in ("U1", "U2"):
                store.record_feedback(f"r{n}", user, n % 2 == 0, f"{user} on r{n}")
        for n in range(5):  # r4 rated first, r0 last; both ratings of an answer in the same millisecond
            age_rating(store, f"r{n}", f"2026-03-{20 - n:02d}T09:00:00.000+00:00")
        got = [(r.answer_id, r.user) for r in store.ratings()]
        assert sorted(got) == sorted((f"r{n}", u) for n in range(5) for u in ("U1", "U2"))  # none lost or repeated
        assert [a for a, _ in got] == ["r4", "r4", "r3", "r3", "r2", "r2", "r1", "r1", "r0", "r0"]
        assert [r.reason for r in store.ratings(datetime(2026, 3, 19, tzinfo=UTC))] == [
            "U1 on r1", "U2 on r1", "U1 on r0", "U2 on r0"]
        rating = next(store.ratings())
        assert (rating.question, rating.citations, rating.platform) == ("Can students get SNAP?", [QUOTE.as_dict()],
                                                                        "slack")


OLD_ANSWERS = """
CREATE TABLE answers (
    answer_id TEXT PRIMARY KEY, conversation_key TEXT NOT NULL, platform TEXT NOT NULL, user TEXT NOT NULL,
    question TEXT NOT NULL, standalone TEXT NOT NULL, answer TEXT NOT NULL, kind TEXT NOT NULL, mood TEXT NOT NULL,
    citations TEXT NOT NULL, created TEXT NOT NULL
);
CREATE TABLE feedback (
    answer_id TEXT NOT NULL REFERENCES answers(answer_id), user TEXT NOT NULL, helpful INTEGER NOT NULL,
    reason TEXT, created TEXT NOT NULL, updated TEXT NOT NULL, PRIMARY KEY (answer_id, user)
);
INSERT INTO answers VALUES ('old1', 'slack:T:C:1', 'slack', 'U1', 'q?', 'q?', 'a.', 'answer', 'concise', '[]',
                            '2025-12-01T10:00:00.000+00:00');
INSERT INTO feedback VALUES ('old1', 'U1', 1, NULL, '2025-12-01T10:01:00.000+00:00', '2025-12-01T10:01:00.000+00:00');
"""


def test_a_sqlite_file_from_before_latency_was_stored_keeps_working(tmp_path: Path) -> None:
    path = tmp_path / "conversations.sqlite3"
    with sqlite3.connect(path) as old:  # the answers and feedback tables as the previous version created them
        old.executescript(OLD_ANSWERS)
    old.close()
    store = SQLiteConversationStore(path)
    try:
        assert store.get_answer("old1").latency_ms is None  # type: ignore[union-attr]
        store.save_answer(answer("new1", "2026-01-01T10:00:00.000+00:00", latency=250.0))
        assert [(a.answer_id, a.latency_ms) for a in store.answers()] == [("old1", None), ("new1", 250.0)]
        assert [f.answer_id for f in store.feedback()] == ["old1"]
    finally:
        store.close()
    reopened = SQLiteConversationStore(path)  # upgraded once: opening it again changes nothing
    try:
        assert reopened.get_answer("new1").latency_ms == 250.0  # type: ignore[union-attr]
    finally:
        reopened.close()


def test_an_answer_saved_on_mongodb_by_an_older_version_has_no_latency(tmp_path: Path) -> None:
    with mongo_store(tmp_path) as store:
        store.save_answer(answer("x", "2026-01-01T10:00:00.000+00:00", latency=5.0))
        db: Any = store.connection.db
        db.raw("answers").update_one({"_id": "x"}, {"$unset": {"latency_ms": ""}})
        assert [a.latency_ms for a in store.answers()] == [None]
        assert "answers_by_time" in db.raw("answers").index_information()


def test_the_redacting_wrapper_passes_the_admin_queries_through(tmp_path: Path) -> None:
    with sqlite_store(tmp_path) as inner:
        store = RedactingConversationStore(inner)
        store.save_answer(answer("r1", "2026-03-01T09:00:00.000+00:00", question="my SSN is 123-45-6789, eligible?"))
        store.record_feedback("r1", "U1", False, "call me at 555-123-4567")
        [saved] = store.answers(datetime(2026, 3, 1, tzinfo=UTC))
        assert saved.question == "my SSN is [ssn], eligible?"
        [rating] = store.feedback(since=datetime(2026, 1, 1, tzinfo=UTC))
        assert rating.reason == "call me at [phone]"
        assert [r.reason for r in store.ratings(datetime(2026, 1, 1, tzinfo=UTC))] == ["call me at [phone]"]


def test_the_handler_saves_the_engine_time_of_each_answer(tmp_path: Path, demo_store: Path) -> None:
    from bot.port import Turn
    from bot.wiring.runtime import build_bot

    bot = build_bot(Settings(_env_file=None, data_dir=tmp_path), demo_store,  # type: ignore[call-arg]
                    tmp_path / "conversations.sqlite3")
    try:
        reply = bot.handler.handle(Turn("slack", "T", "C", "1", "U1", "Can college students get SNAP?", None))
        saved = bot.conversations.get_answer(reply.answer_id or "")
        assert saved is not None and saved.latency_ms is not None
        assert saved.latency_ms == round(reply.timings_ms["total"], 1) > 0
    finally:
        bot.close()


# ------------------------------------------------------------------------------------------------ stats


def test_percentile_is_nearest_rank() -> None:
    assert percentile([float(n) for n in range(1, 21)], 0.95) == 19.0  # p95 of 20 values is the 19th
    assert percentile([float(n) for n in range(1, 101)], 0.95) == 95.0
    assert percentile([7.0], 0.95) == 7.0


def test_parse_since() -> None:
    assert parse_since(None) is None
    assert parse_since("2026-03-02") == datetime(2026, 3, 2, tzinfo=UTC)
    for bad in ("2026-13-01", "yesterday", "20260302", "2026-3-2", ""):
        with pytest.raises(UserError, match="YYYY-MM-DD"):
            parse_since(bad)


def fill(store: ConversationStore) -> None:
    """Day 1: 3 questions (2 answered); day 2: 1 no-answer. Ratings: 2 up and 1 down on day 1's answers."""
    store.save_answer(answer("d1a", "2026-03-01T09:00:00.000+00:00", latency=100.0))
    store.save_answer(answer("d1b", "2026-03-01T10:00:00.000+00:00", latency=300.0))
    store.save_answer(answer("d1c", "2026-03-01T23:59:59.999+00:00", kind="no_answer", latency=200.0))
    store.save_answer(answer("d2a", "2026-03-02T00:00:00.000+00:00", kind="no_answer", latency=None))
    store.record_feedback("d1a", "U1", True, None)
    store.record_feedback("d1a", "U2", False, "missed the work-study rule")
    store.record_feedback("d1b", "U1", True, None)


@pytest.mark.parametrize("opener", STORES)
def test_stats_figures(opener: Opener, tmp_path: Path) -> None:
    with opener(tmp_path) as store:
        assert compute_stats(store).questions == 0
        fill(store)
        stats = compute_stats(store)
        assert [(d.day, d.questions, d.answered, d.not_answered) for d in stats.days] == [
            ("2026-03-01", 3, 2, 1), ("2026-03-02", 1, 0, 1)]
        data = stats.as_dict()
        assert (data["questions"], data["answer_rate"], data["no_answer_rate"]) == (4, 0.5, 0.5)
        assert (data["helpful"], data["ratings"], data["rated_answers"], data["helpful_rate"]) == (2, 3, 2, 0.6667)
        assert (stats.timed, stats.latency_median_ms, stats.latency_p95_ms) == (3, 200.0, 300.0)
        later = compute_stats(store, datetime(2026, 3, 2, tzinfo=UTC))
        assert (later.questions, later.not_answered, later.ratings, later.timed) == (1, 1, 0, 0)
        text = stats_text(later)
        assert "helpful rate    no ratings yet" in text and "latency         not recorded" in text


def test_stats_text_table(tmp_path: Path) -> None:
    with sqlite_store(tmp_path) as store:
        fill(store)
        text = stats_text(compute_stats(store))
    assert text.splitlines()[:5] == [
        "Questions per day (UTC)",
        "day          questions   answered  not answered",
        "2026-03-01           3          2             1",
        "2026-03-02           1          0             1",
        "total                4          2             2"]
    assert "answer rate     50.0% (2 of 4)" in text
    assert "helpful rate    66.7% (2 of 3) ratings, on 2 rated answers" in text
    assert "latency         median 200 ms, p95 300 ms (1 older answers have no time recorded)" in text


def conversations_file(settings: Settings | None = None) -> Path:
    return (settings or Settings()).conversations_path


def test_navibot_stats_on_an_empty_store_and_with_data(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats"]) == 0
    assert capsys.readouterr().out.strip() == "No questions yet."
    assert not conversations_file().exists()  # asking for figures creates nothing
    store = SQLiteConversationStore(conversations_file())
    fill(store)
    store.close()
    assert main(["stats", "--since", "2026-03-05"]) == 0
    assert capsys.readouterr().out.strip() == "No questions since 2026-03-05 yet."
    assert main(["stats"]) == 0
    assert "total                4          2             2" in capsys.readouterr().out
    assert main(["stats", "--json", "--since", "2026-03-01"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["since"], data["questions"], data["latency_median_ms"], data["helpful_rate"]) == (
        "2026-03-01", 4, 200.0, 0.6667)


def test_navibot_stats_bad_since_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--since", "03/01/2026"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--since '03/01/2026'" in err and "YYYY-MM-DD" in err


@contextmanager
def mongodb_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDatabase]:
    """NAVIBOT_STORE=mongodb with the connection opened on the mongomock facade."""
    db = FakeDatabase(f"navibot_{uuid.uuid4().hex[:8]}")  # MongoConnection.shared is keyed by database name
    monkeypatch.setattr(MongoConnection, "open", classmethod(lambda cls, config: cls(AsyncBridge(), db)))
    monkeypatch.setenv("NAVIBOT_STORE", "mongodb")
    monkeypatch.setenv("NAVIBOT_MONGODB_URI", "mongodb://localhost:27017/?directConnection=true")
    monkeypatch.setenv("NAVIBOT_MONGODB_DATABASE", db.name)
    yield db


def test_navibot_stats_and_export_on_mongodb(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with mongodb_settings(monkeypatch) as db:
        assert main(["stats"]) == 0
        assert capsys.readouterr().out.strip() == "No questions yet."
        store = MongoConversationStore(MongoConnection(AsyncBridge(), db))
        fill(store)
        store.close()
        assert main(["stats", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert (data["questions"], data["answered"], data["ratings"], data["latency_p95_ms"]) == (4, 2, 3, 300.0)
        assert main(["feedback", "export", "--format", "jsonl"]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [r["rating"] for r in rows] == ["helpful", "not helpful", "helpful"]
        assert not conversations_file().exists()  # MongoDB was read, not a stray SQLite file


# ------------------------------------------------------------------------------------------------ feedback export

TRICKY_QUESTION = 'Is "work study", at 20 hrs/week,\nenough?'


def tricky(store: ConversationStore) -> None:
    store.save_answer(answer("t1", "2026-03-01T09:00:00.000+00:00", question=TRICKY_QUESTION,
                             answer_text="-20 hours is the line [1]."))
    store.save_answer(answer("t2", "2026-03-01T10:00:00.000+00:00", kind="no_answer", platform="teams",
                             answer_text="I couldn't find this."))
    store.record_feedback("t1", "U1", True, "=HYPERLINK(\"http://evil\",\"click\")")
    store.record_feedback("t2", "U2", False, "@SUM(1+1) and, a comma")


def test_defuse() -> None:
    assert [defuse(t) for t in ("=1+1", "+1", "-2", "@A1", "\t=1", "ok", "", "1-2")] == [
        "'=1+1", "'+1", "'-2", "'@A1", "'\t=1", "ok", "", "1-2"]


def test_export_csv_to_stdout_survives_commas_quotes_newlines_and_formulas(
        capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteConversationStore(conversations_file())
    tricky(store)
    store.close()
    assert main(["feedback", "export"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("\ufefftime,platform,")  # the BOM: Excel reads the file as UTF-8
    rows = list(csv.DictReader(io.StringIO(captured.out.removeprefix("\ufeff"), newline="")))
    assert [r["question"] for r in rows] == [TRICKY_QUESTION, "Can students get SNAP?"]
    assert rows[0]["reason"] == "'=HYPERLINK(\"http://evil\",\"click\")"  # shown as text, never run
    assert rows[0]["answer"] == "'-20 hours is the line [1]."
    assert rows[1]["reason"] == "'@SUM(1+1) and, a comma"
    assert [(r["rating"], r["platform"]) for r in rows] == [("helpful", "slack"), ("not helpful", "teams")]
    assert rows[0]["citations"] == ("[1] SNAP for college students › Students › Exemptions — "
                                    "https://www.fns.usda.gov/snap/students#exemptions")
    assert rows[1]["citations"] == ""
    assert datetime.fromisoformat(rows[0]["time"]).utcoffset() is not None  # ISO 8601 with its UTC offset
    assert "2 ratings -> standard output (csv)" in captured.err and "NAVIBOT_REDACT_PII is on" in captured.err


def test_export_jsonl_to_a_file_keeps_the_text_and_the_citation_dicts(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteConversationStore(conversations_file())
    tricky(store)
    store.close()
    out = tmp_path / "feedback.jsonl"
    out.write_text("the previous export\n")
    assert main(["feedback", "export", "--format", "jsonl", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["reason"] == "=HYPERLINK(\"http://evil\",\"click\")"  # JSON Lines: exactly as stored
    assert rows[0]["question"] == TRICKY_QUESTION
    assert rows[0]["citations"] == [QUOTE.as_dict()]
    assert set(rows[0]) == {"time", "platform", "rating", "reason", "question", "answer", "citations"}
    store = SQLiteConversationStore(conversations_file())
    store.record_feedback("t1", "U1", True, None)  # the reason taken back
    store.close()
    assert main(["feedback", "export", "--format", "jsonl", "--out", str(out)]) == 0
    assert [json.loads(line)["reason"] for line in out.read_text(encoding="utf-8").splitlines()] == [
        "@SUM(1+1) and, a comma", None]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_export_since(capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteConversationStore(conversations_file())
    tricky(store)
    age_rating(store, "t1", "2026-02-01T00:00:00.000+00:00")
    store.close()
    assert main(["feedback", "export", "--since", "2026-02-02", "--format", "jsonl"]) == 0
    captured = capsys.readouterr()
    assert [json.loads(line)["question"] for line in captured.out.splitlines()] == ["Can students get SNAP?"]
    assert "1 rating since 2026-02-02" in captured.err


def test_export_bad_out_or_since_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in ((["--out", str(tmp_path / "missing" / "f.csv")], "does not exist"),
                          (["--out", str(tmp_path)], "is a folder"),
                          (["--since", "last week"], "YYYY-MM-DD")):
        assert main(["feedback", "export", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_export_never_overwrites_a_store_file(capsys: pytest.CaptureFixture[str]) -> None:
    """`--out` naming the conversation store (a slip of tab completion) would rename the export over it."""
    store = SQLiteConversationStore(conversations_file())
    tricky(store)
    store.close()
    settings = Settings()
    for target in (settings.conversations_path, Path(f"{settings.conversations_path}-wal"), settings.store_path):
        assert main(["feedback", "export", "--out", str(target)]) == 2
        assert "one of the bot's store files" in capsys.readouterr().err
    store = SQLiteConversationStore(conversations_file())
    assert len(list(store.ratings())) == 2
    store.close()


def test_a_failed_export_leaves_the_last_good_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    store = SQLiteConversationStore(conversations_file())
    tricky(store)
    store.close()
    out = tmp_path / "feedback.csv"
    out.write_text("the previous export\n")

    def full_disk(rows: Any, stream: Any) -> int:
        stream.write("half a row")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("bot.cli.admin_cli.write_csv", full_disk)
    assert main(["feedback", "export", "--out", str(out)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_text() == "the previous export\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []  # the partial file is gone


def test_export_into_a_pipe_closed_early_is_not_an_error(tmp_path: Path) -> None:
    """`navibot feedback export | head -1`: no BrokenPipeError traceback, exit 0."""
    import os
    import subprocess
    import sys

    store = SQLiteConversationStore(conversations_file())
    for n in range(20):  # 240 kB: more than a pipe holds, so the export is still writing when the pipe closes
        store.save_answer(answer(f"p{n}", "2026-03-01T09:00:00.000+00:00", answer_text="long answer " * 1000))
        store.record_feedback(f"p{n}", "U1", True, None)
    store.close()
    process = subprocess.Popen([sys.executable, "-m", "bot.cli.main", "feedback", "export"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ}, cwd=tmp_path)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b"\xef\xbb\xbftime,platform")  # UTF-8 BOM first
    process.stdout.close()  # what `head -1` does after its line
    err = process.stderr.read().decode()
    assert process.wait(30) == 0 and "Traceback" not in err and "BrokenPipe" not in err


def test_mongodb_lost_while_reading_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with mongodb_settings(monkeypatch) as db:
        real = compute_stats  # the function admin_cli calls, patched there below

        def lost_first(store: ConversationStore, since: datetime | None) -> Any:
            db.server.fail = ServerSelectionTimeoutError("db.example:27017: timed out")  # after the store opened
            return real(store, since)

        monkeypatch.setattr(admin_command, "compute_stats", lost_first)
        assert main(["stats"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "conversation store on MongoDB failed" in err and "timed out" in err
        db.server.fail = None


def test_export_to_stdout_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """Standard output in a non-UTF-8 locale (Windows' cp1252, LANG=C): the export is still UTF-8, no traceback."""
    import os
    import subprocess
    import sys

    store = SQLiteConversationStore(conversations_file())
    store.save_answer(answer("u1", "2026-03-01T09:00:00.000+00:00", question="¿Pueden los estudiantes recibir SNAP?"))
    store.record_feedback("u1", "U1", False, "no menciona la excepción")
    store.close()
    for fmt in ("csv", "jsonl"):
        done = subprocess.run([sys.executable, "-m", "bot.cli.main", "feedback", "export", "--format", fmt],
                              capture_output=True, env={**os.environ, "PYTHONIOENCODING": "ascii"}, cwd=tmp_path,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        text = done.stdout.decode("utf-8")
        assert "¿Pueden los estudiantes" in text and "excepción" in text
        assert fmt == "jsonl" or "SNAP for college students › Students" in text
        assert text.startswith("\ufeff") == (fmt == "csv")  # the BOM in CSV only (JSON Lines is for programs)


def test_export_csv_file_opens_as_utf8_in_a_spreadsheet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Excel reads a CSV without a byte order mark in the Windows code page (› shows as â€º): the file has one, and
    reads back with `utf-8-sig` exactly."""
    store = SQLiteConversationStore(conversations_file())
    store.save_answer(answer("u1", "2026-03-01T09:00:00.000+00:00", question="¿Pueden los estudiantes recibir SNAP?"))
    store.record_feedback("u1", "U1", True, None)
    store.close()
    out = tmp_path / "feedback.csv"
    assert main(["feedback", "export", "--out", str(out)]) == 0
    assert out.read_bytes().startswith(b"\xef\xbb\xbftime,platform,rating,")
    [row] = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8-sig"), newline="")))
    assert row["question"] == "¿Pueden los estudiantes recibir SNAP?" and " › " in row["citations"]
    assert row["reason"] == ""  # no reason is an empty cell, not "None"
