"""The adapters need nothing of the bot but its door, `bot.port.ChatBot`: a fake that implements only the protocol
drives the real Slack app (slack-bolt against the fake Web API) and the real Teams agent (the Agents SDK against
the fake Bot Connector) through questions, buttons, forms, help and refused requests. The real `Bot` implements
the same protocol (checked by mypy below, and at run time by the rest of tests/adapters)."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, cast

import aiohttp
import pytest
from aiohttp import web

from adapters.slack.blocks import ACTION_FEEDBACK, ACTION_REASON, ACTION_SHOW_QUOTES, HELPFUL
from adapters.teams.agent import add_teams_routes
from adapters.teams.cards import VERB_HELPFUL
from adapters.teams.settings import TeamsSettings
from bot.port import (
    Chat,
    ChatBot,
    Citation,
    FeedbackError,
    Reply,
    ReplyKind,
    StoredAnswer,
    Turn,
    TurnProgress,
    Vote,
)
from bot.wiring.runtime import Bot
from tests.adapters.slack.test_slack import SECRET, Harness, all_text, answer_id_of
from tests.adapters.teams.test_teams import CHANNEL, ROOT, TENANT, USER_AAD, actions, message, only_card
from tests.fakes.fake_connector import FakeConnector
from tests.fakes.fake_slack import TEAM_ID, serve_http

QUOTE = "A student enrolled at least half time may get SNAP when working 20 hours a week (port-test quote)."
CITATION = Citation(number=1, doc_id="kb/students", chunk_id="kb/students::0", sub_id="kb/students::0.0",
                    title="Students and SNAP", heading_path=["Eligibility"], url="https://benefits.example.gov/snap",
                    page=None, quote=QUOTE)
ANSWER = "Yes, if they work at least 20 hours a week [1]."
HELP = "FAKE HELP: ask me anything (from the fake ChatBot)"


class FakeChatBot:
    """Only the protocol's methods; it answers every question with one cited answer and remembers where."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.posted: list[Turn] = []
        self.not_posted: list[Turn] = []
        self.votes: list[Vote] = []
        self.lookups: list[tuple[str, Chat]] = []
        self.errors: list[tuple[str | None, str, str | None]] = []
        self.given: dict[str, Chat] = {}  # answer id -> the chat it was given in

    @property
    def max_reason_chars(self) -> int:
        return 321

    async def handle(self, turn: Turn, mood_override: str | None = None,
                     progress: TurnProgress | None = None) -> Reply:
        self.turns.append(turn)
        if self.is_chat_command(turn.text):
            return Reply(ReplyKind.COMMAND, f"fake command {turn.text!r} done")
        answer_id = uuid.uuid4().hex
        self.given[answer_id] = turn.chat
        return Reply(ReplyKind.ANSWER, ANSWER, [CITATION], "concise", answer_id, turn.text)

    async def reply_posted(self, turn: Turn) -> None:
        self.posted.append(turn)

    async def reply_not_posted(self, turn: Turn) -> None:
        self.not_posted.append(turn)

    async def record_feedback(self, vote: Vote) -> None:
        if await self.stored_answer(vote.answer_id, vote.chat) is None:
            raise FeedbackError("fake: no such answer in this chat")
        self.votes.append(vote)

    async def stored_answer(self, answer_id: str, chat: Chat) -> StoredAnswer | None:
        self.lookups.append((answer_id, chat))
        where = self.given.get(answer_id)
        if where is None or (where.platform, where.channel) != (chat.platform, chat.channel):
            return None
        return StoredAnswer(answer_id, "can students get SNAP?", "can college students get SNAP?", ANSWER, "answer",
                            "concise", (CITATION,))

    def report_error(self, kind: str | None, platform: str, exc: BaseException | None = None) -> None:
        self.errors.append((kind, platform, type(exc).__name__ if exc is not None else None))

    def help_text(self) -> str:
        return HELP

    def is_chat_command(self, text: str) -> bool:
        return text.strip().lower() == "reset"

    async def suggested_questions(self) -> list[str]:
        return ["Can college students get SNAP?"]

    def known_mood(self, name: str | None) -> str | None:
        return "kids" if name == "kids" else None


def test_the_real_bot_and_the_fake_implement_the_port(bot: Bot) -> None:
    """Statically (mypy: both assignments type-check only if every method matches) and by behaviour."""
    real: ChatBot = bot
    fake: ChatBot = FakeChatBot()
    assert real.is_chat_command("reset") and not real.is_chat_command("reset my password for the SNAP portal")
    assert real.known_mood("Elderly") == "elderly" and real.known_mood("pirate") is None
    assert "reset" in real.help_text() and real.max_reason_chars == 2000
    assert fake.help_text() == HELP


# --- Slack --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def slack() -> Iterator[tuple[Harness, FakeChatBot]]:
    fake_bot = FakeChatBot()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    served = asyncio.run_coroutine_threadsafe(serve_http(fake_bot, SECRET), loop).result(30)
    # The harness's `bot` field is only read by tests that look into the real bot's stores; these never do.
    harness = Harness(loop, served.fake, served.slack, cast(Bot, fake_bot), served.url, served.session)
    yield harness, fake_bot
    harness.run(served.stop())
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def channel() -> str:
    return "C" + uuid.uuid4().hex[:9].upper()


def test_slack_answers_and_settles_a_mention_through_the_port(slack: tuple[Harness, FakeChatBot]) -> None:
    harness, fake_bot = slack
    ch = channel()
    ts, reply = harness.mention(ch, "Can college students get SNAP?")
    harness.settle()
    [turn] = [t for t in fake_bot.turns if t.channel == ch]
    assert (turn.platform, turn.workspace, turn.thread, turn.text) == ("slack", TEAM_ID, ts,
                                                                        "Can college students get SNAP?")
    assert turn.event_id and turn in fake_bot.posted and turn not in fake_bot.not_posted
    assert reply.args["thread_ts"] == ts and "20 hours a week" in all_text(reply)


def test_slack_buttons_and_the_reason_form_reach_the_bot_as_chat_values(slack: tuple[Harness, FakeChatBot]) -> None:
    harness, fake_bot = slack
    ch = channel()
    ts, reply = harness.mention(ch, "Can college students get SNAP?")
    harness.settle()
    answer_id = answer_id_of(reply)
    here = Chat("slack", TEAM_ID, ch, ts)

    harness.click(reply, ch, "U0BOB", ACTION_SHOW_QUOTES, answer_id)
    harness.settle()
    assert (answer_id, here) in fake_bot.lookups
    [update] = harness.fake.of("chat.update", ch)
    assert "port-test quote" in all_text(update)  # the StoredAnswer's citation, rendered

    harness.click(reply, ch, "U0BOB", ACTION_FEEDBACK, f"{HELPFUL}:{answer_id}", element="feedback_buttons")
    harness.settle()
    assert Vote(answer_id, "U0BOB", True, here) in fake_bot.votes

    other = channel()  # the same answer id clicked in another channel: the bot's FeedbackError is shown
    harness.click(reply, other, "U0EVE", ACTION_FEEDBACK, f"{HELPFUL}:{answer_id}", element="feedback_buttons")
    harness.settle()
    assert "fake: no such answer in this chat" in all_text(harness.fake.of("chat.postEphemeral", other)[-1])

    harness.click(reply, ch, "U0BOB", ACTION_REASON, answer_id)
    opened = harness.run(harness.fake.wait_for("views.open"))[-1]
    view = opened.args["view"]
    assert view["blocks"][0]["element"]["max_length"] == 321  # the bot's max_reason_chars
    status, _, _ = harness.interact({
        "type": "view_submission", "user": {"id": "U0BOB", "team_id": TEAM_ID},
        "view": {"id": "V0R", "type": "modal", "callback_id": view["callback_id"],
                 "private_metadata": view["private_metadata"],
                 "state": {"values": {"reason": {"reason_input": {"type": "plain_text_input", "value": "too long"}}}}}})
    harness.settle()
    assert status == 200
    assert Vote(answer_id, "U0BOB", False, here, "too long", click=False) in fake_bot.votes


def test_slack_slash_command_help_and_chat_commands_come_from_the_bot(slack: tuple[Harness, FakeChatBot]) -> None:
    harness, fake_bot = slack
    ch = channel()
    helped = harness.command(ch, "U0ALICE", "help")
    assert "FAKE HELP" in harness.run(harness.fake.wait_for_response(helped))["text"]
    harness.command(ch, "U0ALICE", "what about part-time students?")  # not a chat command: asked in the channel
    harness.run(harness.fake.wait_for("chat.postMessage", 2, ch))  # the question, then the answer in its thread
    harness.settle()
    assert any(t.text == "what about part-time students?" and t.channel == ch for t in fake_bot.turns)
    harness.command(ch, "U0ALICE", "mood")  # the bot says what is a command: "mood" is not one of the fake's
    harness.run(harness.fake.wait_for("chat.postMessage", 4, ch))
    harness.settle()
    assert any(t.text == "mood" and t.channel == ch for t in fake_bot.turns)


def test_slack_refused_requests_are_reported_to_the_bot(slack: tuple[Harness, FakeChatBot]) -> None:
    harness, fake_bot = slack
    before = fake_bot.errors.count(("bad_request", "slack", None))
    status, _, _ = harness.post('{"type": "event_callback"}', "application/json", secret="not-the-secret")
    assert status == 401
    assert fake_bot.errors.count(("bad_request", "slack", None)) == before + 1


# --- Teams --------------------------------------------------------------------------------------------------------


@asynccontextmanager
async def teams_on(bot: ChatBot) -> AsyncIterator[tuple[str, FakeConnector, aiohttp.ClientSession]]:
    connector = await FakeConnector().start()
    app = web.Application()
    add_teams_routes(app, bot, TeamsSettings(_env_file=None))  # type: ignore[call-arg]
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as session:
            yield f"http://127.0.0.1:{port}/api/messages", connector, session
    finally:
        await runner.cleanup()
        await connector.stop()


def test_teams_answers_a_message_and_rerenders_a_rated_answer_through_the_port() -> None:
    fake_bot = FakeChatBot()

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with teams_on(fake_bot) as (url, connector, session):
            async with session.post(url, json=message(connector, "Can college students get SNAP?")) as response:
                assert response.status in (200, 202)
            reply = (await connector.wait_messages(1))[-1]
            action = next(a for a in actions(only_card(reply), "Action.Execute") if a["verb"] == VERB_HELPFUL)
            data = {**action["data"], "mood": "kids"}
            invoke = {**message(connector, "", activity_id="i1"), "type": "invoke", "name": "adaptiveCard/action",
                      "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL, "data": data}}}
            async with session.post(url, json=invoke) as response:
                rated = dict(await response.json())
            sneaky = {**invoke, "id": "i2", "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL,
                                                                 "data": {**data, "mood": "<b>pirate</b>"}}}}
            async with session.post(url, json=sneaky) as response:
                unknown_mood = dict(await response.json())
            return rated, unknown_mood

    rated, unknown_mood = asyncio.run(scenario())
    [turn] = fake_bot.turns
    here = Chat("teams", TENANT, CHANNEL, ROOT)
    assert turn.chat == here and turn.text == "Can college students get SNAP?" and turn.team
    assert fake_bot.posted == [turn]
    answer_id = next(iter(fake_bot.given))
    assert fake_bot.votes[0] == Vote(answer_id, USER_AAD, True, here)
    card = json.dumps(rated["value"])
    assert rated["type"] == "application/vnd.microsoft.card.adaptive" and "port-test quote" in card
    assert "Mood: kids." in card  # a mood the bot knows goes on the card
    assert "pirate" not in json.dumps(unknown_mood["value"]).lower()  # one it does not know never does


def test_teams_help_on_install_and_refusals_come_from_and_go_to_the_bot() -> None:
    fake_bot = FakeChatBot()

    async def scenario() -> list[Any]:
        async with teams_on(fake_bot) as (url, connector, session):
            added = {**message(connector, "", activity_id="add1", conversation="a:1personal",
                               conversation_type="personal", mention=False),
                     "type": "conversationUpdate", "membersAdded": [{"id": "28:00000000-0000-0000-0000-0000000000b0"}]}
            async with session.post(url, json=added) as response:
                assert response.status in (200, 202)
            async with session.post(url, data="not json", headers={"Content-Type": "application/json"}) as response:
                assert response.status == 400
            return await connector.wait_messages(1)

    welcome = asyncio.run(scenario())
    assert HELP in json.dumps(welcome[-1].body)
    assert ("bad_request", "teams", None) in fake_bot.errors and fake_bot.turns == []


def test_adapters_take_no_bot_internals() -> None:
    """What the fake lacks, the adapters never ask for: the fake has the protocol's members and nothing more."""
    members = {name for name in dir(FakeChatBot) if not name.startswith("_")}
    protocol = {name for name in dir(ChatBot) if not name.startswith("_")}
    assert members == protocol
