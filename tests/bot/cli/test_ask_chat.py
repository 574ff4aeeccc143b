"""`navibot ask` and `navibot chat` as a person uses them: answers with quotes, JSON, moods, exit codes, plain
one-line errors, and a scripted chat session with history, commands and feedback."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.chat.chat_commands import HELP
from bot.cli.main import main
from bot.cli.terminal import chat, cli_turn, render
from bot.config.settings import Settings
from bot.port import Reply, ReplyKind
from bot.wiring.runtime import Bot, build_bot
from rag.cite.rail import Citation
from tests.conftest import write

STUDENTS = "Can college students get SNAP?"
WORK = "what if they work 20 hours a week?"


@pytest.fixture
def bot(demo_store: Path) -> Iterator[Bot]:
    built = build_bot(Settings(), demo_store)
    yield built
    built.close()


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "Error:" not in err


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    no_traceback(err)
    return err


# --- navibot ask --------------------------------------------------------------------------------------------------

def test_ask_shows_a_mistyped_question_as_it_was_searched(demo_store: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "Can colege studnets get SNAP?", "--store", str(demo_store)]) == 0
    out = capsys.readouterr().out
    assert "(understood as: Can college students get SNAP?)" in out
    assert main(["ask", STUDENTS, "--store", str(demo_store)]) == 0
    assert "understood as" not in capsys.readouterr().out  # typed as searched: nothing to show


def test_ask_on_an_empty_store_loads_the_demo_knowledge_base_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", STUDENTS]) == 0
    captured = capsys.readouterr()
    assert "The knowledge store is empty: loading the bundled demo knowledge base first." in captured.err
    assert "ingest: 16 added" in captured.err
    out = captured.out
    assert "\nSources (" in out and "· mood: concise" in out
    assert "[1] SNAP for college students" in out
    assert "    https://www.fns.usda.gov/snap/students#:~:text=" in out
    assert "    > Most college students" in out  # the quote, verbatim, under its source
    # The store is filled now: no second ingest.
    assert main(["ask", "How do I apply for LIHEAP?"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "LIHEAP" in captured.out


def test_ask_json_prints_the_reply(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", *STUDENTS.split(), "--json", "--store", str(demo_store)]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["kind"] == "answer" and reply["mood"] == "concise"
    assert reply["text"].endswith(("[1]", "[2]")) and reply["standalone_question"] == STUDENTS
    assert len(reply["answer_id"]) == 32
    citation = reply["citations"][0]
    assert {"number", "title", "heading_path", "url", "quote", "doc_id", "sub_id"} <= set(citation)
    assert citation["number"] == 1 and citation["doc_id"] == "demo_kb/snap-students"
    assert citation["title"] == "SNAP for college students" and isinstance(citation["heading_path"], list)
    assert citation["url"].startswith("https://www.fns.usda.gov/snap/students#:~:text=")
    assert citation["quote"].startswith("Most college students") and citation["sub_id"].startswith(citation["doc_id"])


def test_each_ask_is_its_own_conversation(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["ask", STUDENTS, "--store", str(demo_store)])
    capsys.readouterr()
    main(["ask", WORK, "--json", "--store", str(demo_store)])
    assert json.loads(capsys.readouterr().out)["standalone_question"] == WORK


def test_ask_with_a_mood(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", STUDENTS, "--mood", "emoji", "--store", str(demo_store)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("💡 Most college students") and "· mood: emoji" in out
    assert main(["ask", STUDENTS, "--mood", "Spanish", "--json", "--store", str(demo_store)]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["mood"] == "spanish" and "modelo de lenguaje" in reply["text"]


def test_ask_with_an_unknown_mood_lists_the_moods(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", STUDENTS, "--mood", "pirate", "--store", str(demo_store)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = one_line(captured.err)
    assert err.startswith("navibot: unknown mood 'pirate'; choose one of: concise, formal, elderly, kids, emoji")


@pytest.mark.parametrize("argv", [["ask", ""], ["ask"], ["ask", "  ", "\t"]])
def test_ask_an_empty_question(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert one_line(captured.err) == 'navibot: the question is empty: navibot ask "can college students get SNAP?"\n'


def test_ask_a_huge_question(capsys: pytest.CaptureFixture[str], isolated_data_dir: Path) -> None:
    assert main(["ask", "x" * 20_000]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "the question is 20,000 characters long; the limit is 4,000" in one_line(captured.err)
    assert not (isolated_data_dir / "knowledge.sqlite3").exists()  # refused before anything is opened


def test_ask_an_off_topic_question(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "What is the capital of France?", "--store", str(demo_store)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("I couldn't find this in the knowledge base. The closest topics I found:")
    assert "Sources" not in out


def test_ask_a_greeting(demo_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "thanks!", "--store", str(demo_store)]) == 0
    assert capsys.readouterr().out.startswith("You're welcome!")


# --- moods file ---------------------------------------------------------------------------------------------------

PIRATE = """
[moods.pirate]
description = "Arr, like a pirate."
instructions = "Answer like a pirate."
max_words = 25
prefix = "🏴‍☠️"
"""


def test_a_moods_file_adds_a_mood(demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_MOODS_FILE", str(write(tmp_path / "moods.toml", PIRATE)))
    assert main(["ask", STUDENTS, "--mood", "pirate", "--json", "--store", str(demo_store)]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert reply["mood"] == "pirate" and reply["text"].startswith("🏴‍☠️ ")
    words = [w for w in reply["text"].split() if not (w.startswith("[") and w.endswith("]"))]  # not the markers
    assert len(words) <= 1 + 25  # the prefix, at most 25 words


def test_a_malformed_moods_file_is_reported_by_name(demo_store: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    broken = write(tmp_path / "broken-moods.toml", "[moods.pirate\ndescription = 'Arr'")
    monkeypatch.setenv("NAVIBOT_MOODS_FILE", str(broken))
    for argv in (["ask", STUDENTS, "--store", str(demo_store)], ["chat", "--store", str(demo_store)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        err = one_line(captured.err)
        assert err.startswith(f"navibot: {broken}: not valid TOML")
    write(broken, "[moods.pirate]\ninstructions = 'Arr.'")
    assert main(["ask", STUDENTS, "--store", str(demo_store)]) == 2
    assert f"{broken}: mood 'pirate' is missing description" in one_line(capsys.readouterr().err)


# --- navibot chat -------------------------------------------------------------------------------------------------

def script(*lines: str, end: type[BaseException] = EOFError) -> Callable[[str], str]:
    """A `read` function that types these lines, then ends the session like Ctrl-D (or Ctrl-C)."""
    queue = list(lines)

    def read(prompt: str) -> str:
        assert prompt == "\nyou> "
        if not queue:
            raise end
        return queue.pop(0)

    return read


def test_a_chat_session(bot: Bot) -> None:
    out = io.StringIO()
    read = script(STUDENTS, WORK, "+", "- wrong program", "reset", "mood elderly", "help", "quit",
                  "never read")
    assert chat(bot, read=read, out=out) == 0
    text = out.getvalue()
    assert text.startswith("Navibot chat. Ask a benefits question; `help` for commands.")
    assert text.count("bot> Thanks, feedback saved.") == 2
    answers = text.split("bot> ")
    assert "Most college students" in answers[1] and "Sources (" in answers[1]
    assert "20 hours a week" in answers[2] and "Sources (" in answers[2]
    assert "bot> Done: I forgot this conversation's history (2 earlier questions)." in text
    assert "bot> Mood set to elderly:" in text
    assert "bot> " + HELP.split("\n")[0] in text

    # Feedback went to the last answer (the follow-up), one row, updated by the second rating.
    [feedback] = bot.conversations.feedback()
    assert feedback.question == WORK and feedback.standalone == f"{STUDENTS} {WORK}"
    assert (feedback.user, feedback.helpful, feedback.reason) == ("local", False, "wrong program")
    assert feedback.platform == "cli" and feedback.citations
    # The mood is the terminal user's preference from now on; the history was cleared.
    assert bot.conversations.get_mood(cli_turn("any", "").preference_key) == "elderly"
    assert "never read" not in text


def test_each_chat_session_is_its_own_conversation(bot: Bot) -> None:
    chat(bot, read=script(STUDENTS, WORK), out=io.StringIO())
    chat(bot, read=script(WORK), out=io.StringIO())
    with sqlite3.connect(Settings().conversations_path) as db:
        standalone = [row[0] for row in db.execute("SELECT standalone FROM answers ORDER BY created, rowid")]
    assert standalone == [STUDENTS, f"{STUDENTS} {WORK}", WORK]


def test_rating_before_any_answer(bot: Bot) -> None:
    out = io.StringIO()
    assert chat(bot, read=script("+", "- not useful", "hi", "+"), out=out) == 0
    text = out.getvalue()
    assert text.count("bot> There is no answer to rate yet.") == 3  # a greeting is not an answer to rate
    assert "bot> Hi!" in text
    assert bot.conversations.feedback() == []


def test_chat_dashes_that_are_not_ratings_are_questions_and_no_answers_can_be_rated(bot: Bot) -> None:
    out = io.StringIO()
    chat(bot, read=script("What is the capital of France?", "-", "-20 hours?"), out=out)
    text = out.getvalue()
    assert "bot> I couldn't find this in the knowledge base." in text
    assert text.count("bot> Thanks, feedback saved.") == 1  # "-" alone rates; "-20 hours?" is a question
    [feedback] = bot.conversations.feedback()
    assert feedback.helpful is False and feedback.question == "What is the capital of France?"


def test_chat_ends_on_ctrl_d_and_ctrl_c(bot: Bot) -> None:
    out = io.StringIO()
    assert chat(bot, read=script(), out=out) == 0
    assert out.getvalue().endswith("\n\n")
    out = io.StringIO()
    assert chat(bot, read=script(end=KeyboardInterrupt), out=out) == 0
    assert out.getvalue().endswith("\nbye\n")


def test_navibot_chat_reads_the_terminal(demo_store: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{STUDENTS}\n+\nmood\n"))
    assert main(["chat", "--store", str(demo_store)]) == 0
    captured = capsys.readouterr()
    assert "you> bot> Most college students" in captured.out
    assert "bot> Thanks, feedback saved." in captured.out and "Current mood: concise" in captured.out
    no_traceback(captured.err)


def test_render_shows_pages_and_nothing_to_cite_for_other_replies() -> None:
    citation = Citation(1, "d", "d::0", "d::0.0", "Rules", ["Part 1", "Students"], "https://x.gov/r.pdf#page=4", 4,
                        "First line.\nSecond line.")
    text = render(Reply(ReplyKind.ANSWER, "Answer. [1]", [citation], "concise", "id"))
    assert text.splitlines() == ["Answer. [1]", "", "Sources (1) · mood: concise",
                                 "[1] Rules > Part 1 > Students (page 4)", "    https://x.gov/r.pdf#page=4",
                                 "    > First line.", "    > Second line."]
    assert render(Reply(ReplyKind.NO_ANSWER, "Not found.", answer_id="id")) == "Not found."
    # A rewritten follow-up says how it was understood; a question taken as asked does not.
    followed = Reply(ReplyKind.ANSWER, "Answer. [1]", [citation], "concise", "id", "Can students get WIC?")
    assert "(understood as: Can students get WIC?)" in render(followed, asked="and WIC?")
    assert "understood as" not in render(followed, asked="Can students get WIC?")
    assert render(Reply(ReplyKind.COMMAND, "line one\n\nline three")) == "line one\n\nline three"


# --- the real console script --------------------------------------------------------------------------------------

def test_console_script_answers_and_fails_cleanly(demo_store: Path, tmp_path: Path) -> None:
    env = {**os.environ, "NAVIBOT_DATA_DIR": str(tmp_path / "data")}
    ok = subprocess.run([sys.executable, "-m", "bot.cli.main", "ask", STUDENTS, "--store", str(demo_store)],
                        capture_output=True, text=True, timeout=120, env=env, check=False)
    assert ok.returncode == 0, ok.stderr
    assert "Sources (" in ok.stdout and "    > " in ok.stdout
    no_traceback(ok.stderr)
    empty = subprocess.run([sys.executable, "-m", "bot.cli.main", "ask", ""], capture_output=True, text=True,
                           timeout=120, env=env, check=False)
    assert empty.returncode == 2 and empty.stdout == ""
    assert one_line(empty.stderr).startswith("navibot: the question is empty")
