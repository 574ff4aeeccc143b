"""The turn handler on the demo knowledge base with a real SQLite conversation store: commands, history, moods,
feedback, duplicates, failures; and the store itself (durability, limits, concurrency)."""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.chat.chat_commands import HELP, Command, parse_command
from bot.chat.handler import MAX_REASON_CHARS, TurnHandler
from bot.cli.main import demo_kb_path
from bot.config.settings import Settings
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import AnswerRecord, HistoryTurn, UnknownAnswer
from bot.port import FeedbackError, Reply, ReplyKind, Turn
from bot.wiring.runtime import Core, build_bot, build_engine
from rag.answer.answerer import AnswerRequest
from rag.answer.moods import MoodBook
from rag.answer.rewrite import HeuristicRewriter
from rag.cite.rail import Citation, Draft
from rag.engine import Engine

STUDENTS = "Can college students get SNAP?"
WORK = "what if they work 20 hours a week?"
LIHEAP = "How do I apply for LIHEAP?"
FRANCE = "What is the capital of France?"
MOODS = MoodBook()


@pytest.fixture(scope="module")
def engine(demo: Core) -> Engine:
    return build_engine(demo)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteConversationStore]:
    opened = SQLiteConversationStore(tmp_path / "conversations.sqlite3")
    yield opened
    opened.close()


@pytest.fixture
def handler(engine: Engine, store: SQLiteConversationStore) -> TurnHandler:
    return TurnHandler(engine, store, MOODS, history_turns=6)


def turn(text: str, user: str = "U1", channel: str = "C1", thread: str = "T1", event_id: str | None = None,
         platform: str = "slack") -> Turn:
    return Turn(platform, "W1", channel, thread, user, text, event_id)


def rows(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def words(reply: Reply) -> int:
    return len(re.sub(r"\s?\[\d+\]", "", reply.text.split("\n")[0]).split())


# --- commands -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["help", "HELP", "/help", "!help", "  help  "])
def test_help(handler: TurnHandler, text: str) -> None:
    reply = handler.handle(turn(text))
    assert reply.kind is ReplyKind.COMMAND and reply.text == HELP
    assert "reset" in reply.text and "mood" in reply.text


def test_words_that_merely_start_like_commands_are_questions() -> None:
    assert parse_command("help students") is None
    assert parse_command("reset my password for the SNAP portal") is None
    assert parse_command("mood") == Command("mood")
    assert parse_command("Mood elderly") == Command("mood", "elderly")
    assert parse_command("reset history") == Command("reset")
    assert parse_command("reset the thread") is None
    assert parse_command("mood elderly please") is None


def test_reset_confirms_and_clears_this_conversation_only(handler: TurnHandler, store: SQLiteConversationStore) -> None:
    handler.handle(turn(STUDENTS))
    handler.handle(turn(WORK))
    handler.handle(turn(STUDENTS, thread="T2"))
    assert len(store.history(turn("").conversation_key, 10)) == 2
    reply = handler.handle(turn("reset"))
    assert reply.kind is ReplyKind.COMMAND
    assert reply.text.startswith("Done: I forgot this conversation's history (2 earlier questions).")
    assert store.history(turn("").conversation_key, 10) == []
    assert len(store.history(turn("", thread="T2").conversation_key, 10)) == 1  # another thread keeps its own
    # The next follow-up starts fresh: nothing to lean on.
    assert handler.handle(turn(WORK)).standalone_question == WORK
    assert handler.handle(turn("reset conversation")).text.startswith("Done: I forgot this conversation's history "
                                                                       "(1 earlier question).")


def test_mood_lists_the_moods_with_descriptions_and_shows_the_current_one(handler: TurnHandler) -> None:
    reply = handler.handle(turn("mood"))
    assert reply.kind is ReplyKind.COMMAND and reply.mood == "concise"
    assert reply.text.startswith("Current mood: concise\n")
    for mood in MOODS.moods.values():
        assert f"{mood.name} — {mood.description}" in reply.text
    assert "▸ concise" in reply.text
    handler.handle(turn("mood kids"))
    assert handler.handle(turn("mood")).text.startswith("Current mood: kids\n")


def test_mood_is_set_for_this_user_in_this_channel(handler: TurnHandler) -> None:
    reply = handler.handle(turn("mood Elderly", user="ana", channel="C1"))
    assert reply.kind is ReplyKind.COMMAND and reply.mood == "elderly"
    assert reply.text == f"Mood set to elderly: {MOODS.moods['elderly'].description} (for you, in this channel)."
    # The same user in another thread of the channel: elderly. Another user, or another channel: their own.
    assert handler.handle(turn("mood", user="ana", channel="C1", thread="T9")).mood == "elderly"
    assert handler.handle(turn("mood", user="bo", channel="C1")).mood == "concise"
    assert handler.handle(turn("mood", user="ana", channel="C2")).mood == "concise"
    handler.handle(turn("mood formal", user="bo", channel="C1"))
    assert handler.handle(turn("mood", user="ana", channel="C1")).mood == "elderly"

    ana = handler.handle(turn(STUDENTS, user="ana", channel="C1", thread="Q1"))
    bo = handler.handle(turn(STUDENTS, user="bo", channel="C1", thread="Q2"))
    other = handler.handle(turn(STUDENTS, user="ana", channel="C2", thread="Q3"))
    assert (ana.mood, bo.mood, other.mood) == ("elderly", "formal", "concise")
    assert words(ana) <= MOODS.moods["elderly"].max_words


def test_unknown_mood_lists_the_moods_and_changes_nothing(handler: TurnHandler) -> None:
    handler.handle(turn("mood emoji"))
    reply = handler.handle(turn("mood pirate"))
    assert reply.kind is ReplyKind.COMMAND and reply.mood == "emoji"
    assert reply.text.startswith("I don't know the mood 'pirate'.\nCurrent mood: emoji\n")
    assert all(name in reply.text for name in MOODS.names)
    assert handler.handle(turn(STUDENTS)).text.startswith("💡 ")


def test_a_mood_override_wins_over_the_saved_preference(handler: TurnHandler) -> None:
    handler.handle(turn("mood kids"))
    assert handler.handle(turn(STUDENTS, thread="T2"), mood_override="emoji").mood == "emoji"
    assert handler.handle(turn(STUDENTS, thread="T3")).mood == "kids"


# --- history ------------------------------------------------------------------------------------------------------

def test_follow_up_uses_the_thread_and_is_answered_from_the_20_hours_section(handler: TurnHandler,
                                                                             store: SQLiteConversationStore) -> None:
    first = handler.handle(turn(STUDENTS))
    assert first.kind is ReplyKind.ANSWER and first.standalone_question == STUDENTS
    follow = handler.handle(turn(WORK))
    assert follow.kind is ReplyKind.ANSWER
    assert follow.standalone_question == f"{STUDENTS} {WORK}"
    assert any("20 hours" in " ".join(c.heading_path) or "20 hours" in c.quote for c in follow.citations)
    [one, two] = store.history(turn("").conversation_key, 10)
    assert one == HistoryTurn(STUDENTS, STUDENTS, first.text, [c.sub_id for c in first.citations])
    assert two.question == WORK and two.standalone == follow.standalone_question
    # Another thread of the same channel has no history.
    assert handler.handle(turn(WORK, thread="T2")).standalone_question == WORK


def test_a_follow_up_knows_what_the_answer_before_it_quoted(handler: TurnHandler, engine: Engine,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # The rewriter then does not search the bot's own answer again (rag/answer/rewrite.py).
    seen: list[AnswerRequest] = []
    answer = engine.answerer.answer

    def recorded(request: AnswerRequest) -> Draft:
        seen.append(request)
        return answer(request)

    monkeypatch.setattr(engine.answerer, "answer", recorded)
    first = handler.handle(turn(STUDENTS))
    handler.handle(turn(WORK))
    assert first.citations and seen[-1].history[-1].cited == tuple(c.sub_id for c in first.citations)


def test_an_elliptical_follow_up_about_another_program_is_not_answered_from_the_first(
        handler: TurnHandler) -> None:
    handler.handle(turn(STUDENTS))
    reply = handler.handle(turn("and WIC?"))
    assert reply.standalone_question == "Can college students get WIC?"
    assert reply.kind is ReplyKind.NO_ANSWER or {c.doc_id for c in reply.citations} == {"demo_kb/wic"}
    # The thread now continues about WIC.
    follow_up = handler.handle(turn("Who qualifies for it?"))
    assert follow_up.standalone_question == "Can college students get WIC? Who qualifies for it?"


def test_history_keeps_the_answer_without_the_mood_decorations(handler: TurnHandler,
                                                                store: SQLiteConversationStore) -> None:
    assert handler.handle(turn("mood spanish")).kind is ReplyKind.COMMAND
    reply = handler.handle(turn(STUDENTS))
    mood = MOODS.get("spanish")
    assert mood is not None
    note = mood.offline_note
    assert reply.kind is ReplyKind.ANSWER and reply.text.endswith(note)
    kept = store.history(turn("").conversation_key, 10)[-1].answer
    assert note not in kept and kept == reply.text[: -len(note)].strip()


def test_only_the_last_n_turns_are_kept(engine: Engine, store: SQLiteConversationStore) -> None:
    handler = TurnHandler(engine, store, MOODS, history_turns=2)
    key = turn("").conversation_key
    for question in (LIHEAP, STUDENTS, WORK):
        assert handler.handle(turn(question)).kind is ReplyKind.ANSWER
    assert [h.question for h in store.history(key, 10)] == [STUDENTS, WORK]  # the oldest was dropped
    reply = handler.handle(turn("Does unpaid volunteering count?"))
    assert reply.standalone_question == f"{STUDENTS} {WORK} Does unpaid volunteering count?"
    assert LIHEAP not in (reply.standalone_question or "")
    assert len(store.history(key, 10)) == 2


def test_a_no_answer_is_saved_for_feedback_but_is_not_history(handler: TurnHandler,
                                                              store: SQLiteConversationStore) -> None:
    reply = handler.handle(turn(FRANCE))
    assert reply.kind is ReplyKind.NO_ANSWER and reply.citations == []
    assert "couldn't find" in reply.text and "closest topics" in reply.text
    assert store.history(turn("").conversation_key, 10) == []
    assert reply.answer_id is not None
    record = store.get_answer(reply.answer_id)
    assert record is not None and record.kind == "no_answer" and record.answer == reply.text
    handler.record_feedback(reply.answer_id, "U1", False, "should know this")
    assert store.feedback(reply.answer_id)[0].reason == "should know this"


def test_greetings_and_thanks_are_friendly_commands_not_no_answers(handler: TurnHandler,
                                                                  store: SQLiteConversationStore,
                                                                  tmp_path: Path) -> None:
    for text in ("hi", "Thanks so much!", "hello navibot"):
        reply = handler.handle(turn(text))
        assert reply.kind is ReplyKind.COMMAND, text
        assert reply.answer_id is None and reply.citations == [] and "couldn't find" not in reply.text
        assert reply.mood == "concise"
    assert rows(tmp_path / "conversations.sqlite3", "answers") == 0
    reply = handler.handle(turn("hi, can students get SNAP?"))
    assert reply.kind is ReplyKind.ANSWER and reply.citations
    assert store.history(turn("").conversation_key, 10)[0].question == "hi, can students get SNAP?"


# --- user mistakes ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_message_gets_the_help_text(handler: TurnHandler, text: str, tmp_path: Path) -> None:
    reply = handler.handle(turn(text))
    assert reply.kind is ReplyKind.COMMAND and reply.text == HELP
    assert rows(tmp_path / "conversations.sqlite3", "answers") == 0


def test_a_huge_message_gets_a_clear_error(handler: TurnHandler, tmp_path: Path) -> None:
    reply = handler.handle(turn("Can students get SNAP? " + "x" * 20_000))
    assert reply.kind is ReplyKind.ERROR
    assert "20,023 characters" in reply.text and "up to 4,000" in reply.text
    assert reply.answer_id is None
    assert rows(tmp_path / "conversations.sqlite3", "answers") == 0
    assert rows(tmp_path / "conversations.sqlite3", "history") == 0
    assert handler.handle(turn("x" * 20_000)).text.startswith("That message is 20,000 characters long;")
    assert handler.handle(turn("  " + "x" * 4000 + "\n")).kind is ReplyKind.NO_ANSWER  # the limit, once stripped
    assert handler.handle(turn("x" * 4001)).kind is ReplyKind.ERROR


# --- redelivery and failures --------------------------------------------------------------------------------------

def test_a_redelivered_event_is_answered_once(handler: TurnHandler, tmp_path: Path) -> None:
    first = handler.handle(turn(STUDENTS, event_id="Ev1"))
    again = handler.handle(turn(STUDENTS, event_id="Ev1"))
    assert first.kind is ReplyKind.ANSWER
    assert again.kind is ReplyKind.DUPLICATE and again.text == "" and again.trace_id
    path = tmp_path / "conversations.sqlite3"
    assert rows(path, "answers") == 1 and rows(path, "history") == 1 and rows(path, "events") == 1
    # The same id from another platform is another event; no id means no deduplication.
    assert handler.handle(turn(STUDENTS, event_id="Ev1", platform="teams")).kind is ReplyKind.ANSWER
    handler.handle(turn(STUDENTS, thread="T2"))
    handler.handle(turn(STUDENTS, thread="T2"))
    assert rows(path, "answers") == 4


class ExplodingEngine:
    def answer(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("retriever on fire")


def test_an_engine_failure_becomes_an_error_reply_with_a_trace_id(store: SQLiteConversationStore,
                                                                   caplog: pytest.LogCaptureFixture,
                                                                   tmp_path: Path) -> None:
    handler = TurnHandler(ExplodingEngine(), store, MOODS)  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="bot.chat.handler"):
        reply = handler.handle(turn(STUDENTS))
    assert reply.kind is ReplyKind.ERROR
    match = re.search(r"trace id ([0-9a-f]{12})\)", reply.text)
    assert match and reply.text.startswith("Sorry, something went wrong on my side.")
    assert "retriever on fire" not in reply.text  # internals stay in the log
    [record] = [r for r in caplog.records if match.group(1) in r.getMessage()]
    assert record.exc_info is not None and "retriever on fire" in str(record.exc_info[1])
    assert rows(tmp_path / "conversations.sqlite3", "answers") == 0
    # Commands do not need the engine and still work.
    assert handler.handle(turn("help")).text == HELP


def test_a_store_failure_becomes_an_error_reply(engine: Engine, tmp_path: Path) -> None:
    broken = SQLiteConversationStore(tmp_path / "broken.sqlite3")
    broken.close()
    reply = TurnHandler(engine, broken, MOODS).handle(turn(STUDENTS, event_id="E1"))
    assert reply.kind is ReplyKind.ERROR and "trace id" in reply.text


# --- the citation rail behind the handler -------------------------------------------------------------------------

@dataclass
class CitingAnswerer:
    """Cites the first retrieved paragraph and/or a made-up one, as a careless language model might."""

    cite_real: bool

    def answer(self, request: AnswerRequest) -> Draft:
        real = request.hits[0].chunk.subchunks[0].sub_id
        cited = ["demo_kb/nowhere::0.0", real] if self.cite_real else ["demo_kb/nowhere::0.0"]
        return Draft("Made up. [1] True. [2]" if self.cite_real else "Made up. [1]", cited)


def test_an_answer_with_only_invented_citations_is_a_no_answer(demo: Core, store: SQLiteConversationStore) -> None:
    engine = Engine(demo.retriever, HeuristicRewriter(), CitingAnswerer(cite_real=False))
    handler = TurnHandler(engine, store, MOODS)
    reply = handler.handle(turn(STUDENTS))
    assert reply.kind is ReplyKind.NO_ANSWER and reply.citations == []
    assert "Made up" not in reply.text
    assert store.history(turn("").conversation_key, 10) == []


def test_an_invented_citation_is_dropped_and_the_rest_saved(demo: Core, store: SQLiteConversationStore) -> None:
    engine = Engine(demo.retriever, HeuristicRewriter(), CitingAnswerer(cite_real=True))
    handler = TurnHandler(engine, store, MOODS)
    reply = handler.handle(turn(STUDENTS))
    assert reply.kind is ReplyKind.ANSWER
    assert reply.text == "Made up. True. [1]"
    [citation] = reply.citations
    [chunk] = demo.store.get_chunks([citation.chunk_id])
    assert citation.quote == chunk.subchunks[0].text
    assert reply.answer_id is not None
    record = store.get_answer(reply.answer_id)
    assert record is not None and record.citations == [citation]
    assert store.history(turn("").conversation_key, 10)[0].cited_ids == [citation.sub_id]


# --- feedback -----------------------------------------------------------------------------------------------------

def test_feedback_is_stored_with_the_question_the_answer_and_its_citations(handler: TurnHandler,
                                                                           store: SQLiteConversationStore) -> None:
    handler.handle(turn(STUDENTS))
    reply = handler.handle(turn(WORK))
    assert reply.answer_id is not None
    saved = handler.record_feedback(reply.answer_id, "U1", True)
    assert saved.answer_id == reply.answer_id and saved.user == "U1" and saved.helpful is True
    assert saved.reason is None
    assert saved.question == WORK and saved.standalone == f"{STUDENTS} {WORK}"
    assert saved.answer == reply.text and saved.platform == "slack"
    assert saved.citations == [c.as_dict() for c in reply.citations]
    assert saved.citations[0]["quote"] and saved.citations[0]["sub_id"]
    assert store.feedback() == [saved]


def test_a_second_click_updates_and_another_user_adds(handler: TurnHandler, store: SQLiteConversationStore,
                                                      tmp_path: Path) -> None:
    reply = handler.handle(turn(STUDENTS))
    assert reply.answer_id is not None
    first = handler.record_feedback(reply.answer_id, "U1", True)
    second = handler.record_feedback(reply.answer_id, "U1", False, "  wrong program  ")
    [only] = store.feedback(reply.answer_id)
    assert only == second
    assert (only.helpful, only.reason) == (False, "wrong program")
    assert only.created == first.created and only.updated >= first.updated
    handler.record_feedback(reply.answer_id, "U1", False, "   ")  # a blank reason is no reason
    assert store.feedback(reply.answer_id)[0].reason is None
    handler.record_feedback(reply.answer_id, "U2", True, "spot on")
    assert [(f.user, f.helpful) for f in store.feedback(reply.answer_id)] == [("U1", False), ("U2", True)]
    assert rows(tmp_path / "conversations.sqlite3", "feedback") == 2


def test_feedback_for_an_unknown_answer_is_a_clear_error(handler: TurnHandler,
                                                         store: SQLiteConversationStore) -> None:
    with pytest.raises(FeedbackError, match=r"can't find that answer any more.*'no-such-id'"):
        handler.record_feedback("no-such-id", "U1", True)
    assert store.feedback() == []


def test_an_over_long_reason_is_refused(handler: TurnHandler, store: SQLiteConversationStore) -> None:
    reply = handler.handle(turn(STUDENTS))
    assert reply.answer_id is not None
    with pytest.raises(FeedbackError, match=r"too long \(2,001 characters; at most 2,000\)"):
        handler.record_feedback(reply.answer_id, "U1", False, "x" * (MAX_REASON_CHARS + 1))
    assert store.feedback() == []
    assert handler.record_feedback(reply.answer_id, "U1", False, "y" * MAX_REASON_CHARS).reason == "y" * 2000


# --- durability ---------------------------------------------------------------------------------------------------

def test_a_new_handler_on_the_same_file_remembers_everything(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "conversations.sqlite3"
    first = SQLiteConversationStore(path)
    handler = TurnHandler(engine, first, MOODS)
    handler.handle(turn("mood formal"))
    reply = handler.handle(turn(STUDENTS))
    assert reply.answer_id is not None
    handler.record_feedback(reply.answer_id, "U1", True, "clear")
    first.close()

    second = SQLiteConversationStore(path)
    try:
        again = TurnHandler(engine, second, MOODS)
        assert again.handle(turn("mood")).mood == "formal"
        assert [f.reason for f in second.feedback(reply.answer_id)] == ["clear"]
        record = second.get_answer(reply.answer_id)
        assert record is not None and record.citations == reply.citations and record.mood == "formal"
        follow = again.handle(turn(WORK))
        assert follow.standalone_question == f"{STUDENTS} {WORK}" and follow.mood == "formal"
    finally:
        second.close()


def test_a_new_bot_on_the_same_data_dir_remembers_moods_and_history(demo: Core, tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    store_path = tmp_path / "data" / "knowledge.sqlite3"
    bot = build_bot(settings, store_path)
    try:
        bot.core.ingestor.ingest_paths([demo_kb_path()])
        bot.handler.handle(turn("mood emoji"))
        bot.handler.handle(turn(STUDENTS))
    finally:
        bot.close()
    bot = build_bot(settings, store_path)
    try:
        reply = bot.handler.handle(turn(WORK))
        assert reply.kind is ReplyKind.ANSWER and reply.mood == "emoji" and reply.text.startswith("💡 ")
        assert reply.standalone_question == f"{STUDENTS} {WORK}"
    finally:
        bot.close()


# --- the store on its own -----------------------------------------------------------------------------------------

def citation(n: int = 1) -> Citation:
    return Citation(n, "doc", "doc::0", f"doc::0.{n}", "Title", ["Heading"], "https://example.gov#:~:text=x", None,
                    "Quoted “text”, verbatim.")


def test_store_history_order_limits_and_clearing(store: SQLiteConversationStore) -> None:
    for i in range(5):
        store.append_turn("k1", HistoryTurn(f"q{i}", f"s{i}", f"a{i}", [f"c{i}"]), keep=3)
    store.append_turn("k2", HistoryTurn("other", "other", "other", []), keep=3)
    assert [h.question for h in store.history("k1", 10)] == ["q2", "q3", "q4"]  # oldest first, newest kept
    assert [h.question for h in store.history("k1", 2)] == ["q3", "q4"]
    assert store.history("k1", 10)[0] == HistoryTurn("q2", "s2", "a2", ["c2"])
    assert store.clear_history("k1") == 3
    assert store.clear_history("k1") == 0
    assert [h.question for h in store.history("k2", 10)] == ["other"]
    assert store.history("nobody", 10) == []


def test_store_events_moods_and_answers(store: SQLiteConversationStore) -> None:
    assert store.claim_event("slack", "E1") and not store.claim_event("slack", "E1")
    assert store.claim_event("teams", "E1")
    assert store.get_mood("p") is None
    store.set_mood("p", "kids")
    store.set_mood("p", "formal")
    assert store.get_mood("p") == "formal"
    record = AnswerRecord("a1", "k", "slack", "U1", "q?", "q?", "answer [1] [2]", "answer", "concise",
                          [citation(1), citation(2)])
    store.save_answer(record)
    loaded = store.get_answer("a1")
    assert loaded is not None and loaded.created
    assert loaded.citations == [citation(1), citation(2)]
    assert (loaded.question, loaded.answer, loaded.kind, loaded.mood) == ("q?", "answer [1] [2]", "answer", "concise")
    assert store.get_answer("a2") is None
    with pytest.raises(UnknownAnswer):
        store.record_feedback("a2", "U1", True, None)


def test_a_second_store_on_the_same_file_sees_committed_writes_at_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    writer, reader = SQLiteConversationStore(path), SQLiteConversationStore(path)
    try:
        writer.append_turn("k", HistoryTurn("q", "q", "a", []), keep=5)
        writer.save_answer(AnswerRecord("a1", "k", "cli", "U", "q", "q", "a", "answer", "concise", [citation()]))
        writer.record_feedback("a1", "U", True, None)
        assert [h.question for h in reader.history("k", 5)] == ["q"]
        assert reader.get_answer("a1") is not None and len(reader.feedback()) == 1
    finally:
        writer.close()
        reader.close()


def test_store_that_cannot_be_opened_says_so(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(RuntimeError, match="cannot open the conversation store"):
        SQLiteConversationStore(tmp_path / "a-file" / "conversations.sqlite3")


def test_store_is_safe_to_share_between_threads(store: SQLiteConversationStore) -> None:
    def work(n: int) -> None:
        for i in range(25):
            store.append_turn(f"k{n % 2}", HistoryTurn(f"q{n}-{i}", "s", "a", []), keep=1000)
            store.claim_event("slack", f"E{n}-{i}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.history("k0", 1000)) == len(store.history("k1", 1000)) == 100
