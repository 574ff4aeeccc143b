"""Access control, proved on the real paths: a document restricted to a group never reaches a chat without access,
as a citation, as a quote, or as a section handed to the answerer (the language model), on SQLite and on MongoDB,
through the turn handler, the real Slack app (slack-bolt against a fake Slack) and the real Teams app (the Agents
SDK against a fake Bot Connector). NAVIBOT_ACCESS_GROUPS is parsed and checked with one-line errors."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.blocks import ACTION_SHOW_QUOTES
from adapters.teams.cards import VERB_HELPFUL
from bot.chat.access import AccessError, AccessMap
from bot.cli import db_admin
from bot.cli.main import demo_kb_path, main
from bot.config.settings import Settings
from bot.port import Reply, ReplyKind, Turn
from bot.wiring.runtime import Bot, build_bot
from rag.answer.answerer import AnswerRequest
from rag.documents import SearchHit
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from tests.adapters.slack.test_slack import SECRET, Harness, all_text, answer_id_of
from tests.adapters.teams.test_teams import actions, message, only_card, running
from tests.fakes.fake_mongo import FakeDatabase
from tests.fakes.fake_slack import serve_http

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")

STAFF = "medicaid-staff"
RESTRICTED_ID = "hwr-procedures"
SECRET_CODE = "HW-7731"  # only in the restricted document: must never appear in an unmapped chat
INTRANET = "intranet.example.gov"
QUESTION = "When do staff approve an estate recovery hardship waiver?"
RESTRICTED = f"""---
title: Hardship Waiver Review (HWR) for Medicaid estate recovery
url: https://{INTRANET}/medicaid/hwr
tags: medicaid
---

# Hardship Waiver Review (HWR) for Medicaid estate recovery

## When staff approve a hardship waiver

Staff approve an estate recovery hardship waiver when the heir has lived in the home for at least two years and
its value is under $50,000; they record the approval under waiver code {SECRET_CODE} in the eligibility system.
"""
SLACK_STAFF, SLACK_PUBLIC = "CSTAFF0001", "CPUBLIC001"
# tests.adapters.teams.test_teams uses the first
TEAMS_STAFF, TEAMS_OTHER = "19:team@thread.tacv2", "19:otherteam@thread.tacv2"
ACCESS = {f"slack:{SLACK_STAFF}": [STAFF], f"teams:{TEAMS_STAFF}": [STAFF]}


@pytest.fixture(scope="module")
def restricted_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("restricted") / f"{RESTRICTED_ID}.md"
    path.write_text(RESTRICTED, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def access_store(demo_store: Path, restricted_file: Path) -> Path:
    """The demo knowledge base plus one document that only the group medicaid-staff may see."""
    bot = build_bot(Settings(_env_file=None, data_dir=demo_store.parent), demo_store,  # type: ignore[call-arg]
                    demo_store.parent / "setup-conversations.sqlite3")
    try:
        assert bot.core.ingestor.ingest_paths([restricted_file], groups=[STAFF]).ingested == 1
    finally:
        bot.close()
    return demo_store


class Spy:
    """Records every section retrieval returned and every request the answerer (the model) was given."""

    def __init__(self, bot: Bot) -> None:
        self.retrieved: list[SearchHit] = []
        self.requests: list[AnswerRequest] = []
        search, answer = bot.engine.retriever.search, bot.engine.answerer.answer

        def recorded_search(*args: Any, **kwargs: Any) -> list[SearchHit]:
            hits = search(*args, **kwargs)
            self.retrieved.extend(hits)
            return hits

        def recorded_answer(request: AnswerRequest) -> Any:
            self.requests.append(request)
            return answer(request)

        bot.engine.retriever.search = recorded_search  # type: ignore[method-assign]
        bot.engine.answerer.answer = recorded_answer  # type: ignore[method-assign]

    def reset(self) -> None:
        self.retrieved.clear()
        self.requests.clear()

    def saw_restricted(self) -> bool:
        given = [h for r in self.requests for h in r.hits]
        return any(h.chunk.doc_id == RESTRICTED_ID or STAFF in h.chunk.groups for h in [*self.retrieved, *given]) \
            or any(SECRET_CODE in f"{e.question} {e.answer}" for r in self.requests for e in r.history)


def make_bot(store: Path, folder: Path, access: dict[str, list[str]] | None = None) -> tuple[Bot, Spy]:
    settings = Settings(_env_file=None, data_dir=folder, access_groups=ACCESS if access is None else access)  # type: ignore[call-arg]
    bot = build_bot(settings, store, folder / "conversations.sqlite3")
    return bot, Spy(bot)


@pytest.fixture
def staff_bot(access_store: Path, tmp_path: Path) -> Iterator[tuple[Bot, Spy]]:
    bot, spy = make_bot(access_store, tmp_path)
    yield bot, spy
    bot.close()


def slack_turn(channel: str, text: str = QUESTION, thread: str = "1700000000.000100") -> Turn:
    return Turn("slack", "T0NAVI", channel, thread, "U0ALICE", text, None)


def teams_turn(team: str, text: str = QUESTION) -> Turn:
    conversation = f"{team or 'a:1personal'};messageid=1"
    return Turn("teams", "tenant", conversation, "1", "aad-user", text, None, team=team)


def assert_public(reply: Reply, spy: Spy) -> None:
    """The reply in a chat without access: a no-answer or public citations only, and the restricted section was
    neither retrieved nor given to the answerer."""
    assert reply.kind in (ReplyKind.ANSWER, ReplyKind.NO_ANSWER), reply.text
    assert all(c.doc_id != RESTRICTED_ID for c in reply.citations)
    assert SECRET_CODE not in reply.text and INTRANET not in reply.text
    assert spy.requests or reply.kind is ReplyKind.NO_ANSWER
    assert not spy.saw_restricted()


def assert_cited(reply: Reply) -> None:
    assert reply.kind is ReplyKind.ANSWER, reply.text
    assert [c.doc_id for c in reply.citations][:1] == [RESTRICTED_ID]
    assert SECRET_CODE in reply.citations[0].quote


# --- the turn handler ---------------------------------------------------------------------------------------------


def test_an_unmapped_slack_channel_never_gets_the_restricted_document(staff_bot: tuple[Bot, Spy]) -> None:
    bot, spy = staff_bot
    assert_public(bot.handler.handle(slack_turn(SLACK_PUBLIC)), spy)
    spy.reset()
    assert_cited(bot.handler.handle(slack_turn(SLACK_STAFF)))
    assert any(h.chunk.doc_id == RESTRICTED_ID for r in spy.requests for h in r.hits)


def test_teams_by_team_id_and_a_personal_chat_sees_only_all(staff_bot: tuple[Bot, Spy]) -> None:
    bot, spy = staff_bot
    for team in (TEAMS_OTHER, ""):  # another team; a personal or group chat (no team)
        spy.reset()
        assert_public(bot.handler.handle(teams_turn(team)), spy)
    assert_cited(bot.handler.handle(teams_turn(TEAMS_STAFF)))


def test_a_slack_channel_id_is_not_a_teams_team_id(access_store: Path, tmp_path: Path) -> None:
    """A mapping names its platform: a Teams conversation whose team id equals a mapped Slack channel id (or the
    other way round) gets nothing from it."""
    bot, spy = make_bot(access_store, tmp_path, {"slack:SAMEID": [STAFF], "teams:OTHERID": [STAFF]})
    try:
        assert_public(bot.handler.handle(teams_turn("SAMEID")), spy)
        spy.reset()
        assert_public(bot.handler.handle(slack_turn("OTHERID")), spy)
    finally:
        bot.close()


def test_without_any_mapping_every_chat_sees_only_all_and_the_terminal_sees_everything(
        access_store: Path, tmp_path: Path) -> None:
    bot, spy = make_bot(access_store, tmp_path, {})
    try:
        assert_public(bot.handler.handle(slack_turn(SLACK_STAFF)), spy)
        spy.reset()
        assert_public(bot.handler.handle(teams_turn(TEAMS_STAFF)), spy)
        # `navibot ask/chat` run on the operator's machine, who can read the store itself: no limit.
        terminal = Turn("cli", "local", "terminal", "t1", "local", QUESTION, None)
        assert_cited(bot.handler.handle(terminal))
    finally:
        bot.close()


def test_a_follow_up_in_a_mapped_thread_does_not_leak_into_an_unmapped_channel(staff_bot: tuple[Bot, Spy]) -> None:
    """Same thread timestamp in both channels (Slack ts are unique per channel only): history is per channel."""
    bot, spy = staff_bot
    thread = "1700000123.000200"
    assert_cited(bot.handler.handle(slack_turn(SLACK_STAFF, thread=thread)))
    follow_up = "and what code do they record it under?"
    staff = bot.handler.handle(slack_turn(SLACK_STAFF, follow_up, thread=thread))
    assert staff.kind is ReplyKind.ANSWER and SECRET_CODE in " ".join(c.quote for c in staff.citations)
    spy.reset()
    public = bot.handler.handle(slack_turn(SLACK_PUBLIC, follow_up, thread=thread))
    assert_public(public, spy)
    assert all(not r.history for r in spy.requests)  # the staff thread's answers are not this thread's context
    assert SECRET_CODE not in (public.standalone_question or "")


def test_quotes_are_stored_only_with_answers_of_the_chat_that_may_see_them(staff_bot: tuple[Bot, Spy]) -> None:
    """What `Show quotes` and the feedback export read back: the public channel's record holds no restricted text."""
    bot, _ = staff_bot
    public = bot.handler.handle(slack_turn(SLACK_PUBLIC))
    record = bot.conversations.get_answer(public.answer_id or "")
    assert record is not None and record.channel == SLACK_PUBLIC
    assert SECRET_CODE not in json.dumps([c.as_dict() for c in record.citations]) + record.answer


def test_the_rewriter_does_not_reveal_that_a_restricted_title_exists(staff_bot: tuple[Bot, Spy]) -> None:
    bot, _ = staff_bot
    thread = "1700000999.000100"
    bot.handler.handle(slack_turn(SLACK_PUBLIC, "Can college students get SNAP?", thread=thread))
    reply = bot.handler.handle(slack_turn(SLACK_PUBLIC, "and HWR?", thread=thread))
    # "HWR" is only in the restricted title. With the title unknown, the rewriter keeps the follow-up as context
    # ("Can college students get SNAP? and HWR?"); knowing it, it swaps the program: "...get HWR?".
    assert reply.standalone_question != "Can college students get HWR?"


# --- the real Slack app -------------------------------------------------------------------------------------------


@pytest.fixture
def slack(access_store: Path, tmp_path: Path) -> Iterator[tuple[Harness, Spy]]:
    bot, spy = make_bot(access_store, tmp_path)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    served = asyncio.run_coroutine_threadsafe(serve_http(bot, SECRET), loop).result(30)
    harness = Harness(loop, served.fake, served.slack, bot, served.url, served.session)
    yield harness, spy
    harness.run(served.stop())
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    bot.close()


def test_slack_mentions_in_a_mapped_and_an_unmapped_channel(slack: tuple[Harness, Spy]) -> None:
    harness, spy = slack
    _, public = harness.mention(SLACK_PUBLIC, QUESTION)
    harness.settle()
    assert SECRET_CODE not in all_text(public) and INTRANET not in all_text(public)
    assert not spy.saw_restricted()
    spy.reset()
    _, staff = harness.mention(SLACK_STAFF, QUESTION)
    harness.settle()
    record = harness.bot.conversations.get_answer(answer_id_of(staff))
    assert record is not None and record.citations[0].doc_id == RESTRICTED_ID
    assert spy.saw_restricted()


def test_slack_slash_command_in_an_unmapped_channel(slack: tuple[Harness, Spy]) -> None:
    harness, spy = slack
    channel = "CSLASH" + uuid.uuid4().hex[:4].upper()
    harness.command(channel, "U0BOB", QUESTION)
    posted = harness.run(harness.fake.wait_for("chat.postMessage", 2, channel))  # "asked: ..." and the answer
    harness.settle()
    assert all(SECRET_CODE not in all_text(call) and INTRANET not in all_text(call) for call in posted)
    assert not spy.saw_restricted()


# --- the real Teams app -------------------------------------------------------------------------------------------


def teams_replies(bot: Bot, *activities: dict[str, Any]) -> list[str]:
    """Each activity posted to /api/messages in turn; the JSON of each reply the connector received."""
    async def scenario() -> list[str]:
        async with running(bot) as h:
            for n, build in enumerate(activities, start=1):
                activity = {**build, "serviceUrl": h.connector.url}
                response = await h.post(activity)
                assert response.status in (200, 202)
                await h.connector.wait_messages(n)
            return [json.dumps(c.body) for c in h.connector.messages()]
    return asyncio.run(scenario())


def test_teams_channel_of_a_mapped_team_another_team_and_a_personal_chat(staff_bot: tuple[Bot, Spy]) -> None:
    bot, spy = staff_bot

    class Url:  # message() wants the connector only for its URL; teams_replies sets the real one
        url = "http://127.0.0.1:9"

    other = message(Url, QUESTION, activity_id="o1")  # type: ignore[arg-type]
    other["channelData"]["team"] = {"id": TEAMS_OTHER}
    personal = message(Url, QUESTION, activity_id="p1", conversation="a:1personalchat",  # type: ignore[arg-type]
                       conversation_type="personal", mention=False)
    for activity in (other, personal):
        spy.reset()
        [reply] = teams_replies(bot, activity)
        assert SECRET_CODE not in reply and INTRANET not in reply
        assert not spy.saw_restricted()
    spy.reset()
    [staff] = teams_replies(bot, message(Url, QUESTION, activity_id="s1"))  # type: ignore[arg-type]
    assert SECRET_CODE in staff and spy.saw_restricted()


# --- MongoDB: the $vectorSearch / $search pre-filters on groups -----------------------------------------------


@pytest.fixture
def mongo_bot(tmp_path: Path, restricted_file: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Bot, Spy,
                                                                                                          FakeDatabase]]:
    db = FakeDatabase(f"navibot_{uuid.uuid4().hex[:8]}")
    monkeypatch.setattr(MongoConnection, "open", classmethod(lambda cls, config: cls(AsyncBridge(), db)))
    monkeypatch.setattr(db_admin, "POLL_SECONDS", 0.01)
    for name, value in {"STORE": "mongodb", "MONGODB_URI": "mongodb://localhost:27017/?directConnection=true",
                        "MONGODB_DATABASE": db.name, "ACCESS_GROUPS": json.dumps(ACCESS)}.items():
        monkeypatch.setenv(f"NAVIBOT_{name}", value)
    assert main(["db", "init", "--timeout", "5"]) == 0
    bot = build_bot(Settings())
    try:
        assert bot.core.ingestor.ingest_paths([demo_kb_path()]).ingested >= 12
        assert bot.core.ingestor.ingest_paths([restricted_file], groups=[STAFF]).ingested == 1
        yield bot, Spy(bot), db
    finally:
        bot.close()


def test_mongodb_filters_by_groups_in_both_searches(mongo_bot: tuple[Bot, Spy, FakeDatabase]) -> None:
    bot, spy, db = mongo_bot
    db.server.pipelines.clear()
    assert_public(bot.handler.handle(slack_turn(SLACK_PUBLIC)), spy)
    stages = json.dumps(db.server.pipelines)
    assert '"groups": {"$in": ["all"]}' in stages  # $vectorSearch pre-filter
    assert '{"in": {"path": "groups", "value": ["all"]}}' in stages  # $search compound filter
    spy.reset()
    db.server.pipelines.clear()
    assert_cited(bot.handler.handle(teams_turn(TEAMS_STAFF)))
    assert f'"$in": ["all", "{STAFF}"]' in json.dumps(db.server.pipelines)


# --- NAVIBOT_ACCESS_GROUPS ----------------------------------------------------------------------------------------


def test_access_map_grants() -> None:
    access = AccessMap({"slack:C1": [STAFF, STAFF], "teams: 19:x@thread.tacv2 ": ["a.b@c:d-e_f"]})
    assert access.groups_for(slack_turn("C1")) == ["all", STAFF]
    assert access.groups_for(slack_turn("C2")) == ["all"]
    assert access.groups_for(teams_turn("19:x@thread.tacv2")) == ["all", "a.b@c:d-e_f"]
    assert access.groups_for(teams_turn("")) == ["all"]
    assert access.groups_for(Turn("cli", "local", "terminal", "t", "local", "q", None)) is None


@pytest.mark.parametrize(("mapping", "message_part"), [
    ({"C0123": [STAFF]}, "should be slack:<channel id> or teams:<team id>"),
    ({"discord:C1": [STAFF]}, "should be slack:<channel id>"),
    ({"slack:": [STAFF]}, "should be slack:<channel id>"),
    ({"slack:C1": ["medicaid staff"]}, "invalid group names ['medicaid staff']"),
    ({"slack:C1": [""]}, "invalid group names"),
])
def test_access_map_refuses_bad_entries(mapping: dict[str, list[str]], message_part: str) -> None:
    with pytest.raises(AccessError, match="NAVIBOT_ACCESS_GROUPS") as raised:
        AccessMap(mapping)
    assert message_part in str(raised.value)


@pytest.mark.parametrize(("value", "message_part"), [
    ('{"slack:C1": ["medicaid-staff"]', "must be JSON like"),
    ("slack:C1=medicaid-staff", "must be JSON like"),
    ('{"slack:C1": "medicaid-staff"}', "NAVIBOT_ACCESS_GROUPS"),
    ('["slack:C1"]', "NAVIBOT_ACCESS_GROUPS"),
    ('{"C1": ["medicaid-staff"]}', "should be slack:<channel id>"),
    ('{"slack:C1": ["bad group"]}', "invalid group names"),
])
def test_a_bad_navibot_access_groups_is_one_line_exit_2(value: str, message_part: str, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NAVIBOT_ACCESS_GROUPS", value)
    assert main(["ask", "--store", "unused.sqlite3", QUESTION]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("navibot: ") and message_part in err, err
    assert not Path("unused.sqlite3").exists()  # refused before anything was opened


def test_re_ingesting_a_public_document_with_groups_restricts_it(restricted_file: Path, tmp_path: Path) -> None:
    """Groups are part of a document's content hash: re-ingesting the same file with --groups is not skipped as
    unchanged, and the chats without access lose it at once."""
    bot, spy = make_bot(tmp_path / "knowledge.sqlite3", tmp_path)
    try:
        assert bot.core.ingestor.ingest_paths([restricted_file]).added == 1  # first loaded for everyone
        assert_cited(bot.handler.handle(slack_turn(SLACK_PUBLIC)))
        assert bot.core.ingestor.ingest_paths([restricted_file], groups=[STAFF]).updated == 1
        spy.reset()
        assert_public(bot.handler.handle(slack_turn(SLACK_PUBLIC, thread="2")), spy)
        assert_cited(bot.handler.handle(slack_turn(SLACK_STAFF, thread="3")))
    finally:
        bot.close()


def test_a_routine_re_ingest_without_groups_keeps_a_restricted_document_restricted(restricted_file: Path,
                                                                                   tmp_path: Path) -> None:
    """A nightly re-ingest of the folder without --groups (the file edited meanwhile) must not publish the
    restricted document to every chat; --groups all does, on purpose."""
    bot, spy = make_bot(tmp_path / "knowledge.sqlite3", tmp_path)
    try:
        assert bot.core.ingestor.ingest_paths([restricted_file], groups=[STAFF]).added == 1
        restricted_file.write_text(restricted_file.read_text(encoding="utf-8") + "\nUpdated this week.\n",
                                   encoding="utf-8")
        again = bot.core.ingestor.ingest_paths([restricted_file])
        assert again.updated == 1 and again.kept_restricted == 1 and "--groups all" in again.line()
        spy.reset()
        assert_public(bot.handler.handle(slack_turn(SLACK_PUBLIC, thread="2")), spy)
        assert_cited(bot.handler.handle(slack_turn(SLACK_STAFF, thread="3")))
        assert bot.core.ingestor.ingest_paths([restricted_file], groups=["all"]).updated == 1
        assert_cited(bot.handler.handle(slack_turn(SLACK_PUBLIC, thread="4")))
    finally:
        bot.close()


# --- buttons carry an answer id that comes back from the client ---------------------------------------------------

# A button's answer id comes back from the client: the adapters render a stored answer, with its quotes, only in the
# chat that got it (TurnHandler.answer_in_chat).


def test_slack_show_quotes_with_another_channels_answer_id_shows_nothing(slack: tuple[Harness, Spy]) -> None:
    harness, _ = slack
    _, staff = harness.mention(SLACK_STAFF, QUESTION)
    harness.settle()
    answer_id = answer_id_of(staff)
    _, public = harness.mention(SLACK_PUBLIC, "Can college students get SNAP?")
    harness.settle()
    harness.click(public, SLACK_PUBLIC, "U0MALLORY", ACTION_SHOW_QUOTES, answer_id)  # the staff answer's id
    harness.settle()
    shown = harness.fake.of("chat.update", SLACK_PUBLIC) + harness.fake.of("chat.postEphemeral", SLACK_PUBLIC)
    assert all(SECRET_CODE not in all_text(call) for call in shown)


def test_teams_feedback_with_another_teams_answer_id_shows_nothing(staff_bot: tuple[Bot, Spy]) -> None:
    bot, _ = staff_bot

    async def scenario() -> str:
        async with running(bot) as h:
            await h.post(message(h.connector, QUESTION, activity_id="s9"))  # the mapped team's channel
            reply = (await h.connector.wait_messages(1))[-1]
            action = next(a for a in actions(only_card(reply), "Action.Execute") if a["verb"] == VERB_HELPFUL)
            invoke = {**message(h.connector, "", activity_id="m9", conversation="a:1mallorypersonal",
                                conversation_type="personal", mention=False),
                      "type": "invoke", "name": "adaptiveCard/action",
                      "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL, "data": action["data"]}}}
            async with h.session.post(h.url, json=invoke) as response:
                return await response.text()

    assert SECRET_CODE not in asyncio.run(scenario())


# --- what an admin sees of the map ----------------------------------------------------------------------------------


def test_a_mistyped_chat_id_is_warned_about_and_the_mapped_chats_are_listed(access_store: Path, tmp_path: Path,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    """A channel name, a lowercase id or a team's groupId GUID never matches a chat: the staff there would quietly get
    only public documents. Each such key is a WARNING at start-up (every command), and the server's INFO log lists
    what is mapped, so an admin can compare it with the chats."""
    typos = ["slack:#medicaid-staff", "slack:cstaff0001", "teams:3f0c1a2b-4d5e-6f70-8192-a3b4c5d6e7f8"]
    mapping = {f"slack:{SLACK_STAFF}": [STAFF], f"teams:{TEAMS_STAFF}": [STAFF], **{key: [STAFF] for key in typos}}
    with caplog.at_level(logging.INFO):
        bot, _ = make_bot(access_store, tmp_path, mapping)
        bot.close()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [key for key in mapping if any(repr(key) in w for w in warnings)] == typos
    [listed] = [r.getMessage() for r in caplog.records
                if r.levelno == logging.INFO and "access groups" in r.getMessage()]
    assert f"slack:{SLACK_STAFF} -> all, {STAFF}" in listed and f"teams:{TEAMS_STAFF} -> all, {STAFF}" in listed


def test_ingest_refuses_a_group_name_that_navibot_access_groups_would_refuse(
        restricted_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """NAVIBOT_ACCESS_GROUPS refuses 'medicaid staff' (a space): a document ingested with it would be visible to no
    chat at all, silently. The same rule at ingest: one line, exit 2, nothing written."""
    store = tmp_path / "knowledge.sqlite3"
    assert main(["ingest", str(restricted_file), "--store", str(store), "--groups", "medicaid staff"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid group names ['medicaid staff']" in err
    assert not store.exists()  # refused before the store was opened
