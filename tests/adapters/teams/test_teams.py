"""End to end: real Teams Activity JSON posted to the running aiohttp app (the Agents SDK's CloudAdapter and
AgentApplication), the bot on the demo knowledge base, replies recorded by a fake Bot Connector on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import jwt
import pytest
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa
from microsoft_agents.activity import Activity
from microsoft_agents.authentication.msal import MsalAuth
from microsoft_agents.hosting.core.authorization import JwtTokenValidator
from pydantic import SecretStr

from adapters.teams import agent
from adapters.teams.agent import (
    add_teams_routes,
    clean_text,
    reply_activity,
    turn_from_activity,
)
from adapters.teams.cards import VERB_HELPFUL, VERB_NOT_HELPFUL
from adapters.teams.citation_entities import MAX_ABSTRACT_CHARS, shorten
from adapters.teams.settings import TeamsSettings
from bot.cli.main import main
from bot.config.settings import Settings
from bot.port import Reply, ReplyKind
from bot.wiring.runtime import Bot, build_bot
from rag.cite.rail import Citation
from tests.fakes.command_server import free_port, while_serving
from tests.fakes.fake_connector import Call, FakeConnector
from tests.fakes.fake_slack import BackgroundLoop

BOT_ID = "28:00000000-0000-0000-0000-0000000000b0"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
CHANNEL = "19:abc@thread.tacv2"
ROOT = f"{CHANNEL};messageid=1700000000000"
USER_AAD = "6a2c5b8e-1111-2222-3333-444455556666"
STUDENTS = "Can college students get SNAP?"


@dataclass
class Harness:
    url: str
    connector: FakeConnector
    session: aiohttp.ClientSession

    async def post(self, body: Any, headers: dict[str, str] | None = None) -> aiohttp.ClientResponse:
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        async with self.session.post(self.url, data=data,
                                     headers={"Content-Type": "application/json", **(headers or {})}) as response:
            await response.read()
            return response


@asynccontextmanager
async def running(bot: Bot, settings: TeamsSettings | None = None,
                  connector: FakeConnector | None = None) -> AsyncIterator[Harness]:
    connector = await (connector or FakeConnector()).start()
    app = web.Application()
    add_teams_routes(app, bot, settings or TeamsSettings(_env_file=None))  # type: ignore[call-arg]
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as session:
            yield Harness(f"http://127.0.0.1:{port}/api/messages", connector, session)
    finally:
        await runner.cleanup()
        await connector.stop()


def message(connector: FakeConnector, text: str, activity_id: str = "1700000000001", conversation: str = ROOT,
            conversation_type: str = "channel", mention: bool = True, user: str = USER_AAD) -> dict[str, Any]:
    """A Teams message activity as the Bot Connector posts it (a channel message that @mentions the bot)."""
    mention_text = "<at>Navibot</at>"
    entities: list[dict[str, Any]] = [{"type": "clientInfo", "locale": "en-US", "platform": "Web"}]
    if mention:
        entities.append({"type": "mention", "text": mention_text,
                         "mentioned": {"id": BOT_ID, "name": "Navibot"}})
    body: dict[str, Any] = {
        "type": "message", "id": activity_id, "timestamp": "2026-11-22T02:00:00.000Z",
        "serviceUrl": connector.url, "channelId": "msteams",
        "from": {"id": "29:1user", "name": "Nina Navigator", "aadObjectId": user},
        "conversation": {"id": conversation, "conversationType": conversation_type, "tenantId": TENANT,
                         "isGroup": conversation_type != "personal"},
        "recipient": {"id": BOT_ID, "name": "Navibot"},
        "text": f"{mention_text} {text}" if mention else text, "textFormat": "plain", "locale": "en-US",
        "entities": entities,
        "channelData": {"tenant": {"id": TENANT}},
    }
    if conversation_type == "channel":
        body["channelData"].update(team={"id": "19:team@thread.tacv2"}, channel={"id": CHANNEL})
    return body


def card_texts(element: Any) -> list[str]:
    """Every line of text in a card (depth first): a TextBlock's text, a RichTextBlock's runs joined."""
    found: list[str] = []
    if isinstance(element, dict):
        if element.get("type") == "TextBlock":
            found.append(element["text"])
        elif element.get("type") == "RichTextBlock":
            found.append("".join(run["text"] if isinstance(run, dict) else run for run in element["inlines"]))
            return found
        for value in element.values():
            found.extend(card_texts(value))
    elif isinstance(element, list):
        for value in element:
            found.extend(card_texts(value))
    return found


def actions(element: Any, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(element, dict):
        if element.get("type") == kind:
            found.append(element)
        for value in element.values():
            found.extend(actions(value, kind))
    elif isinstance(element, list):
        for value in element:
            found.extend(actions(value, kind))
    return found


def only_card(call: Call) -> dict[str, Any]:
    cards = call.cards()
    assert len(cards) == 1, call.body
    assert cards[0]["type"] == "AdaptiveCard" and cards[0]["version"] == "1.5"
    return cards[0]


def answer_of(call: Call) -> str:
    return card_texts(only_card(call)["body"][0])[0]


# --- the main path ------------------------------------------------------------------------------------------------

def test_channel_mention_gets_one_card_reply_in_the_thread(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            response = await h.post(message(h.connector, STUDENTS))
            assert response.status in (200, 202)
            return await h.connector.wait_for(lambda calls: any(c.type == "message" for c in calls))

    calls = asyncio.run(scenario())
    replies = [c for c in calls if c.type == "message"]
    assert len(replies) == 1
    reply = replies[0]
    # Same reply chain: the conversation id keeps `;messageid=`, and it is a reply to the question's activity.
    assert reply.conversation_id == ROOT and reply.body["conversation"]["id"] == ROOT
    assert reply.reply_to_id == "1700000000001" and reply.body["replyToId"] == "1700000000001"
    typing = [i for i, c in enumerate(calls) if c.type == "typing"]
    assert typing and typing[0] < calls.index(reply), "a typing indicator goes out before the answer"

    card = only_card(reply)
    answer = answer_of(reply)
    assert "student" in answer.lower() and "[1]" in answer
    quotes = [e for e in card["body"] if e.get("type") == "Container" and str(e.get("id", "")).startswith("quote-")]
    assert quotes and all(q["isVisible"] is False for q in quotes)
    toggle = actions(card, "Action.ToggleVisibility")
    assert len(toggle) == 1 and toggle[0]["title"].startswith("Show quotes")
    assert toggle[0]["targetElements"] == [q["id"] for q in quotes]
    # Each quote is the verbatim stored paragraph, with its title and a link to the source.
    stored = {s.text for c in bot.core.store.get_chunks(
        list({h.chunk.chunk_id for h in bot.core.retriever.search(STUDENTS, k=10)})) for s in c.subchunks}
    for container in quotes:
        texts = card_texts(container)
        assert texts[0].startswith("[") and "SNAP" in texts[0]
        quote = next(e for e in container["items"] if e.get("id") == f"{container['id']}-text")
        assert "\n".join(card_texts(quote)) in stored, "the quote is a stored paragraph, verbatim"
        assert [a["title"] for a in actions(container, "Action.OpenUrl")] == ["Open source"]
    executes = actions(card, "Action.Execute")
    assert {a["verb"] for a in executes} == {VERB_HELPFUL, VERB_NOT_HELPFUL}
    for action in executes:
        assert action["data"]["answer_id"]
        assert action["fallback"]["type"] == "Action.Submit" and action["fallback"]["data"]["verb"] == action["verb"]
    # The AI label and the citations as Teams citation entities, numbered like the [n] markers.
    entity = [e for e in reply.body["entities"] if e.get("type") == "https://schema.org/Message"]
    assert len(entity) == 1 and entity[0]["additionalType"] == ["AIGeneratedContent"]
    assert entity[0]["@type"] == "Message" and entity[0]["@context"] == "https://schema.org"
    citations = entity[0]["citation"]
    assert [c["position"] for c in citations] == list(range(1, len(quotes) + 1))
    for claim in citations:
        assert claim["@type"] == "Claim" and claim["appearance"]["@type"] == "DigitalDocument"
        assert f"[{claim['position']}]" in answer
        assert 0 < len(claim["appearance"]["abstract"]) <= MAX_ABSTRACT_CHARS
        assert claim["appearance"]["url"].startswith("https://")


def test_feedback_invoke_is_stored_and_the_card_shows_the_choice(bot: Bot) -> None:
    async def scenario() -> tuple[Call, dict[str, Any], list[Call]]:
        async with running(bot) as h:
            await h.post(message(h.connector, STUDENTS))
            reply = (await h.connector.wait_for(lambda calls: any(c.type == "message" for c in calls)))[-1]
            action = next(a for a in actions(only_card(reply), "Action.Execute") if a["verb"] == VERB_NOT_HELPFUL)
            invoke = {**message(h.connector, "", activity_id="f:1"), "type": "invoke", "name": "adaptiveCard/action",
                      "replyToId": "bot-2", "text": None,
                      "value": {"action": {"type": "Action.Execute", "verb": action["verb"], "data": action["data"]},
                                "trigger": "manual"}}
            async with h.session.post(h.url, json=invoke) as response:
                assert response.status == 200
                body = await response.json()
            return reply, body, list(h.connector.calls)

    reply, body, calls = asyncio.run(scenario())
    assert body["statusCode"] == 200 and body["type"] == "application/vnd.microsoft.card.adaptive"
    updated = body["value"]
    assert "Thanks, feedback saved: not helpful." in card_texts(updated)
    assert card_texts(updated)[:-1] == card_texts(only_card(reply)), "the same card, plus the choice"
    answer_id = next(iter(actions(only_card(reply), "Action.Execute")))["data"]["answer_id"]
    saved = bot.conversations.feedback(answer_id)
    assert len(saved) == 1 and saved[0].helpful is False and saved[0].user == USER_AAD
    assert len([c for c in calls if c.type == "message"]) == 1, "the invoke answer is the HTTP response, not a post"


def test_submit_fallback_updates_the_card_in_place(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            await h.post(message(h.connector, STUDENTS))
            reply = (await h.connector.wait_for(lambda calls: any(c.type == "message" for c in calls)))[-1]
            submit = next(a for a in actions(only_card(reply), "Action.Execute") if a["verb"] == VERB_HELPFUL)
            legacy = {**message(h.connector, "", activity_id="1700000000009", mention=False),
                      "text": None, "replyToId": "bot-2", "value": submit["fallback"]["data"]}
            await h.post(legacy)
            return await h.connector.wait_for(lambda calls: any(c.method == "PUT" for c in calls))

    calls = asyncio.run(scenario())
    put = next(c for c in calls if c.method == "PUT")
    assert put.activity_id == "bot-2" and put.conversation_id == ROOT
    assert "Thanks, feedback saved: helpful." in card_texts(put.cards())
    # The update replaces the whole message: it keeps the AI label and the citation entities of the answer.
    original = next(c for c in calls if c.method == "POST" and c.type == "message")
    assert put.body["entities"] == original.body["entities"] and put.body["summary"] == original.body["summary"]
    assert len([c for c in calls if c.type == "message" and c.method == "POST"]) == 1


def test_a_crafted_mood_in_the_button_data_does_not_reach_the_card(bot: Bot) -> None:
    async def scenario() -> dict[str, Any]:
        async with running(bot) as h:
            await h.post(message(h.connector, STUDENTS))
            reply = (await h.connector.wait_for(lambda calls: any(c.type == "message" for c in calls)))[-1]
            action = next(a for a in actions(only_card(reply), "Action.Execute") if a["verb"] == VERB_HELPFUL)
            data = {**action["data"], "mood": "free text for the whole channel"}
            invoke = {**message(h.connector, "", activity_id="f:4"), "type": "invoke", "name": "adaptiveCard/action",
                      "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL, "data": data}}}
            async with h.session.post(h.url, json=invoke) as response:
                return dict(await response.json())

    body = asyncio.run(scenario())
    texts = " ".join(card_texts(body["value"]))
    assert "Thanks, feedback saved: helpful." in texts and "free text" not in texts


def test_unknown_answer_feedback_says_so(bot: Bot) -> None:
    async def scenario() -> dict[str, Any]:
        async with running(bot) as h:
            invoke = {**message(h.connector, "", activity_id="f:2"), "type": "invoke", "name": "adaptiveCard/action",
                      "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL,
                                           "data": {"answer_id": "nope"}}}}
            async with h.session.post(h.url, json=invoke) as response:
                return dict(await response.json())

    body = asyncio.run(scenario())
    assert body["type"] == "application/vnd.microsoft.activity.message" and "can't find that answer" in body["value"]


# --- commands, moods, history ---------------------------------------------------------------------------------------

def test_mood_then_question_uses_that_mood_and_reset_forgets(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            for n, text in enumerate(["mood kids", STUDENTS, "reset", "help"], start=1):
                await h.post(message(h.connector, text, activity_id=f"17000000000{n:02d}"))
                await h.connector.wait_messages(n)
            return h.connector.messages()

    mood, answer, reset, help_ = asyncio.run(scenario())
    assert card_texts(mood.cards())[0].startswith("Mood set to kids") and not mood.body.get("text")
    assert mood.reply_to_id and mood.conversation_id == ROOT
    assert any("Mood: kids." in t for t in card_texts(only_card(answer)))
    # The mood's note is its own (subtle) line under the answer, not run into it.
    body = only_card(answer)["body"]
    at = next(i for i, block in enumerate(body) if "".join(card_texts(block)).startswith("(Offline answers"))
    assert at >= 1 and all(len(card_texts(block)) == 1 for block in body[:at + 1])  # each line its own block
    assert all(run["isSubtle"] for run in body[at]["inlines"])
    assert answer.body.get("entities")
    assert card_texts(reset.cards())[0].startswith("Done: I forgot this conversation's history (1 earlier question)")
    # Help is a card: each line its own block (Teams may join single line breaks), `code` in a monospace run.
    assert "Commands:" in card_texts(help_.cards()) and "• reset — forget this conversation's history" in card_texts(
        help_.cards())


def test_follow_up_in_the_same_reply_chain_uses_history_and_other_chains_do_not(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            await h.post(message(h.connector, STUDENTS, activity_id="1700000000001"))
            await h.connector.wait_messages(1)  # replies are sent in the background: the follow-up comes after
            await h.post(message(h.connector, "what if they work 20 hours a week?", activity_id="1700000000002"))
            await h.connector.wait_messages(2)
            other = f"{CHANNEL};messageid=1800000000000"
            await h.post(message(h.connector, "what if they work 20 hours a week?", activity_id="1800000000000",
                                 conversation=other))
            await h.connector.wait_messages(3)
            return h.connector.messages()

    _first, follow_up, elsewhere = asyncio.run(scenario())
    understood = [t for t in card_texts(follow_up.cards()) if t.startswith("Understood as:")]
    assert understood and "student" in understood[0].lower()
    assert elsewhere.conversation_id.endswith("1800000000000")
    assert not [t for t in card_texts(elsewhere.cards()) if "student" in t.lower() and t.startswith("Understood")]


def test_personal_and_group_chats_are_answered_too(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            await h.post(message(h.connector, STUDENTS, activity_id="p1", conversation="a:1personalchat",
                                 conversation_type="personal", mention=False))
            await h.post(message(h.connector, STUDENTS, activity_id="g1", conversation="19:groupchat@thread.v2",
                                 conversation_type="groupChat"))
            await h.connector.wait_messages(2)
            return h.connector.messages()

    replies = {c.conversation_id: c for c in asyncio.run(scenario())}
    assert set(replies) == {"a:1personalchat", "19:groupchat@thread.v2"}
    assert "[1]" in answer_of(replies["19:groupchat@thread.v2"])
    # A personal chat streams: the answer is the message's text, the card under it holds the quotes and buttons.
    assert "[1]" in replies["a:1personalchat"].body["text"]


def test_installing_in_a_personal_chat_says_hello_and_other_updates_are_quiet(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            base = message(h.connector, "", activity_id="u1", conversation="a:1personalchat",
                           conversation_type="personal", mention=False)
            installed = {**base, "type": "conversationUpdate", "text": None,
                         "membersAdded": [{"id": BOT_ID}]}
            team = {**message(h.connector, "", activity_id="u2"), "type": "conversationUpdate", "text": None,
                    "membersAdded": [{"id": BOT_ID}]}
            reaction = {**message(h.connector, "", activity_id="u3"), "type": "messageReaction", "text": None,
                        "reactionsAdded": [{"type": "like"}], "replyToId": "bot-2"}
            for body in (team, reaction, installed):
                response = await h.post(body)
                assert response.status in (200, 202)
            return await h.connector.wait_messages(1)

    (hello,) = asyncio.run(scenario())
    assert hello.conversation_id == "a:1personalchat" and "Commands:" in card_texts(hello.cards())


# --- bad input and redelivery --------------------------------------------------------------------------------------

def test_the_same_activity_twice_is_answered_once(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            body = message(h.connector, STUDENTS, activity_id="1700000000077")
            first, second = await asyncio.gather(h.post(body), h.post(body))
            assert first.status in (200, 202) and second.status in (200, 202)
            await h.connector.wait_for(lambda calls: any(c.type == "message" for c in calls))
            # A later, distinct activity is still answered: the second delivery really was dropped, not delayed.
            await h.post(message(h.connector, "help", activity_id="1700000000078"))
            await h.connector.wait_messages(2)
            return h.connector.messages()

    replies = asyncio.run(scenario())
    assert len(replies) == 2
    assert replies[0].cards() and "Commands:" in card_texts(replies[1].cards())


def test_concurrent_slow_turns_are_each_answered_once_and_finish_at_shutdown(bot: Bot,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten questions at once, each delivered twice, with a slow answerer; the server shuts down right after the 202s:
    every turn under way still finishes, with one answer each, after its typing indicator."""
    answer = bot.engine.answer

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)
        return answer(*args, **kwargs)

    monkeypatch.setattr(bot.engine, "answer", slow)

    async def scenario() -> tuple[list[int], list[Call]]:
        async with running(bot) as h:
            bodies = [message(h.connector, STUDENTS, activity_id=f"c{n}", conversation=f"{CHANNEL};messageid=9{n}")
                      for n in range(10)]
            statuses = [r.status for r in await asyncio.gather(*(h.post(b) for b in bodies + bodies))]
            connector = h.connector
        return statuses, connector.calls  # read after the shutdown (`running` has stopped the server)

    statuses, calls = asyncio.run(scenario())
    assert statuses == [202] * 20
    answers = [c for c in calls if c.method == "POST" and c.type == "message"]
    assert sorted(c.reply_to_id or "" for c in answers) == sorted(f"c{n}" for n in range(10))
    assert all("[1]" in answer_of(c) for c in answers)
    for reply in answers:
        typing = [i for i, c in enumerate(calls) if c.type == "typing" and c.reply_to_id == reply.reply_to_id]
        assert typing and typing[0] < calls.index(reply)


def test_empty_mention_gets_help_and_a_huge_message_a_polite_error(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            await h.post(message(h.connector, "", activity_id="e1"))
            await h.post(message(h.connector, "why " * 1500, activity_id="e2"))
            await h.connector.wait_messages(2)
            return h.connector.messages()

    # The two are answered in parallel threads: under load the error may be posted first, so each reply is found
    # by the message it answers, not by its place in the list.
    replies = {call.reply_to_id: call for call in asyncio.run(scenario())}
    empty, huge = replies["e1"], replies["e2"]
    assert "Commands:" in card_texts(empty.cards())
    error_text = card_texts(huge.cards())[0]
    assert "characters long" in error_text and "4,000" in error_text


@pytest.mark.parametrize("body", ["{not json", "[1, 2]", "[" * 100_000 + "]" * 100_000, json.dumps({"type": "message"}),
                                  json.dumps({"type": "message", "conversation": {"id": 5}, "from": "x"})])
def test_malformed_activity_is_a_400_and_nothing_is_sent(bot: Bot, body: str) -> None:
    async def scenario() -> tuple[int, list[Call]]:
        async with running(bot) as h:
            response = await h.post(body)
            return response.status, list(h.connector.calls)

    status, calls = asyncio.run(scenario())
    assert status == 400 and calls == []


@pytest.mark.parametrize(("change", "reason"), [
    ({"recipient": None}, "recipient.id"),
    ({"serviceUrl": "not a url"}, "serviceUrl"),
    ({"serviceUrl": "ftp://127.0.0.1/"}, "serviceUrl"),
])
def test_a_message_that_could_not_be_answered_is_refused_before_it_is_handled(
        bot: Bot, change: dict[str, Any], reason: str, caplog: pytest.LogCaptureFixture) -> None:
    """Accepted with a 202, such a message was answered and saved, then its reply failed out of sight."""
    async def scenario() -> tuple[int, str, list[Call]]:
        async with running(bot) as h:
            response = await h.post({**message(h.connector, STUDENTS, activity_id="r1"), **change})
            await asyncio.sleep(0.05)
            return response.status, await response.text(), list(h.connector.calls)

    with caplog.at_level(logging.INFO):
        status, text, calls = asyncio.run(scenario())
    assert status == 400 and reason in text and calls == []
    assert bot.conversations.history(f"teams|{TENANT}|{CHANNEL}|{ROOT}", 5) == []


def test_a_refused_activity_is_one_warning_line_not_an_sdk_traceback(bot: Bot,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> int:
        async with running(bot) as h:
            return (await h.post({**message(h.connector, STUDENTS), "conversation": "not an object"})).status

    with caplog.at_level(logging.INFO):
        assert asyncio.run(scenario()) == 400
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert any("request refused (400): not a valid Activity (conversation)" in r.getMessage() for r in caplog.records)


def test_a_throttled_or_failing_connector_is_retried_and_the_answer_arrives(bot: Bot,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent, "RETRY_WAITS", (0.01, 0.01))

    async def scenario() -> list[Call]:
        async with running(bot) as h:
            h.connector.fail_next = [503, 429, 503]  # typing (dropped, best effort), then the answer twice
            await h.post(message(h.connector, STUDENTS))
            return await h.connector.wait_messages(1)

    (reply,) = asyncio.run(scenario())
    assert "[1]" in answer_of(reply)


def test_if_teams_refuses_the_citation_entities_the_answer_goes_out_without_them(bot: Bot) -> None:
    async def scenario() -> list[Call]:
        async with running(bot) as h:
            h.connector.refuse_citations = True
            await h.post(message(h.connector, STUDENTS))
            (reply,) = await h.connector.wait_messages(1)
            # The Action.Submit fallback's card update is refused the same way, and goes out the same way.
            submit = next(a for a in actions(only_card(reply), "Action.Execute") if a["verb"] == VERB_HELPFUL)
            await h.post({**message(h.connector, "", activity_id="1700000000009", mention=False), "text": None,
                          "replyToId": "bot-2", "value": submit["fallback"]["data"]})
            await h.connector.wait_for(lambda calls: any(c.method == "PUT" for c in calls))
            return h.connector.calls

    calls = asyncio.run(scenario())
    reply = next(c for c in calls if c.method == "POST" and c.type == "message")
    update = next(c for c in calls if c.method == "PUT")
    assert "[1]" in answer_of(reply)
    for sent in (reply, update):
        assert [e.get("citation") for e in sent.body["entities"]] == [None], "no citations..."
        assert sent.body["entities"][0]["additionalType"] == ["AIGeneratedContent"], "...but still the AI label"
        assert actions(only_card(sent), "Action.ToggleVisibility"), "the card's own quotes are still there"
    assert "Thanks, feedback saved: helpful." in card_texts(only_card(update))


def test_internal_failure_is_an_apology_card_with_a_trace_id(bot: Bot, monkeypatch: pytest.MonkeyPatch,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("store on fire")

    monkeypatch.setattr(bot.engine, "answer", broken)

    async def scenario() -> list[Call]:
        async with running(bot) as h:
            await h.post(message(h.connector, STUDENTS))
            await h.connector.wait_for(lambda calls: any(c.type == "message" for c in calls))
            return h.connector.messages()

    with caplog.at_level(logging.ERROR):
        (reply,) = asyncio.run(scenario())
    text = card_texts(reply.cards())[0]
    assert text.startswith("Sorry, something went wrong") and "store on fire" not in json.dumps(reply.body)
    trace = text.split("trace id ")[1].rstrip(").")
    assert any(trace in r.getMessage() for r in caplog.records)


def test_a_failing_feedback_store_answers_the_button_with_an_apology(bot: Bot, monkeypatch: pytest.MonkeyPatch,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr(bot.handler, "record_feedback", broken)

    async def scenario() -> dict[str, Any]:
        async with running(bot) as h:
            invoke = {**message(h.connector, "", activity_id="f:3"), "type": "invoke", "name": "adaptiveCard/action",
                      "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL,
                                           "data": {"answer_id": "a1"}}}}
            async with h.session.post(h.url, json=invoke) as response:
                assert response.status == 200
                return dict(await response.json())

    with caplog.at_level(logging.ERROR):
        body = asyncio.run(scenario())
    assert body["type"] == "application/vnd.microsoft.activity.message"
    assert body["value"].startswith("Sorry, something went wrong") and "disk full" not in body["value"]
    trace = body["value"].split("trace id ")[1].rstrip(").")
    assert any(trace in r.getMessage() for r in caplog.records)


def test_with_credentials_a_request_without_a_valid_token_is_401_and_nothing_runs(bot: Bot) -> None:
    settings = TeamsSettings(_env_file=None, client_id="11111111-2222-3333-4444-555555555555",  # type: ignore[call-arg]
                             client_secret=SecretStr("not-used-in-this-test"), tenant_id=TENANT)

    async def scenario() -> tuple[list[int], list[Call]]:
        async with running(bot, settings) as h:
            statuses = [(await h.post(message(h.connector, STUDENTS, activity_id=f"t{n}"), headers)).status
                        for n, headers in enumerate([{}, {"Authorization": "Bearer not-a-jwt"},
                                                      {"Authorization": "Basic abc"}])]
            await asyncio.sleep(0.05)  # nothing is queued anywhere, but give a stray task its chance to show
            return statuses, list(h.connector.calls)

    statuses, calls = asyncio.run(scenario())
    assert statuses == [401, 401, 401] and calls == []
    assert bot.conversations.history(f"teams|{TENANT}|{CHANNEL}|{ROOT}", 5) == []


# The SDK's JWT middleware stores the claims under a plain string key, which aiohttp warns about.
@pytest.mark.filterwarnings("ignore::aiohttp.web_exceptions.NotAppKeyWarning")
def test_with_credentials_a_validly_signed_request_is_answered_with_the_bots_token(
        bot: Bot, monkeypatch: pytest.MonkeyPatch) -> None:
    """The authenticated path end to end, offline: the SDK validates a Bot Framework token signed with a key of
    ours (served in place of Microsoft's JWKS) and replies with the token MSAL would fetch (stubbed)."""
    client_id = "11111111-2222-3333-4444-555555555555"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    class Keys:
        async def get_signing_key(self, jwks_uri: str, header: dict[str, Any]) -> Any:
            assert jwks_uri.startswith("https://login.botframework.com/") and header["kid"] == "test-key"
            return key.public_key()

    async def outgoing_token(self: Any, resource_url: str, scopes: list[str], force_refresh: bool = False) -> str:
        return "outgoing-token"

    monkeypatch.setattr(JwtTokenValidator, "_jwk_client_manager", Keys())
    monkeypatch.setattr(MsalAuth, "get_access_token", outgoing_token)
    settings = TeamsSettings(_env_file=None, client_id=client_id,  # type: ignore[call-arg]
                             client_secret=SecretStr("secret"), tenant_id=TENANT)

    async def scenario() -> tuple[int, int, list[Call]]:
        async with running(bot, settings) as h:
            now = int(time.time())
            claims = {"iss": "https://api.botframework.com", "aud": client_id, "iat": now, "nbf": now,
                      "exp": now + 600, "serviceurl": h.connector.url}
            good = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "test-key"})
            wrong_audience = jwt.encode({**claims, "aud": "someone-else"}, key, algorithm="RS256",
                                        headers={"kid": "test-key"})
            refused = await h.post(message(h.connector, STUDENTS, activity_id="w1"),
                                   {"Authorization": f"Bearer {wrong_audience}"})
            accepted = await h.post(message(h.connector, STUDENTS, activity_id="a1"),
                                    {"Authorization": f"Bearer {good}"})
            return refused.status, accepted.status, await h.connector.wait_messages(1)

    refused, accepted, replies = asyncio.run(scenario())
    assert refused == 401 and accepted in (200, 202)
    assert len(replies) == 1 and replies[0].authorization == "Bearer outgoing-token"
    assert "[1]" in answer_of(replies[0])


def test_anonymous_mode_and_empty_store_are_announced(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    empty = build_bot(Settings(_env_file=None, data_dir=tmp_path), tmp_path / "empty.sqlite3",  # type: ignore[call-arg]
                      tmp_path / "c.sqlite3")
    try:
        with caplog.at_level(logging.WARNING):
            add_teams_routes(web.Application(), empty, TeamsSettings(_env_file=None))  # type: ignore[call-arg]
    finally:
        empty.close()
    messages = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert "LOCAL ANONYMOUS MODE" in messages  # the empty store is said by `navibot serve` (bot/cli/serve_cli.py)


def test_navibot_teams_says_at_start_up_that_the_store_is_empty(monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The warning is the command's (bot/cli/serve_cli.py), for every platform: the adapters only see a ChatBot."""
    import bot.server.app as server_app

    async def listen(app: object, host: str, port: int) -> None:  # the server's run, without waiting for SIGTERM
        pass

    monkeypatch.setattr(server_app, "run", listen)
    for name in [n for n in os.environ if n.startswith(("SLACK_", "NAVIBOT_TEAMS_"))]:
        monkeypatch.delenv(name)
    with caplog.at_level(logging.WARNING):
        assert main(["teams", "--port", "3999"]) == 0  # NAVIBOT_DATA_DIR is this test's own: an empty store
    [warning] = [r.getMessage() for r in caplog.records if "knowledge store is empty" in r.getMessage()]
    assert "navibot ingest" in warning


def test_a_blank_client_id_is_anonymous_mode_not_authenticated_with_no_credentials() -> None:
    """NAVIBOT_TEAMS_CLIENT_ID=' ' counts as not set everywhere (it passed the all-or-none check as unset, then ran
    'authenticated' with an empty app id: every request refused, and no anonymous-mode warning)."""
    settings = TeamsSettings(_env_file=None, client_id=" ")  # type: ignore[call-arg]
    settings.check_credentials()
    assert settings.anonymous
    assert "CLIENTID" not in settings.sdk_configuration()["CONNECTIONS"]["SERVICE_CONNECTION"]["SETTINGS"]


# --- small parts -----------------------------------------------------------------------------------------------------

def test_turn_from_a_channel_activity() -> None:
    connector = FakeConnector(url="http://127.0.0.1:1/")
    activity = Activity.model_validate(message(connector, "  mood&nbsp;kids  "))
    activity.text = activity.remove_recipient_mention()
    turn = turn_from_activity(activity, clean_text(activity))
    assert (turn.platform, turn.workspace, turn.channel, turn.thread, turn.user, turn.text) == (
        "teams", TENANT, CHANNEL, ROOT, USER_AAD, "mood kids")
    assert turn.event_id == f"{CHANNEL}:1700000000001"


def test_citation_entities_are_only_those_the_answer_marks() -> None:
    def cited(number: int) -> Citation:
        return Citation(number=number, doc_id=f"d{number}", chunk_id="c", sub_id=f"s{number}", title=f"Doc {number}",
                        heading_path=["H"], url=f"https://example.org/{number}", page=None, quote=f"Quote {number}.")

    reply = Reply(ReplyKind.ANSWER, "Students can get SNAP [1] if they work. [3]", [cited(1), cited(2), cited(3)],
                  mood="concise", answer_id="a1")
    body = reply_activity(reply).model_dump(mode="json", by_alias=True, exclude_unset=True)
    (entity,) = body["entities"]
    assert [c["position"] for c in entity["citation"]] == [1, 3]
    quotes = [e["id"] for e in body["attachments"][0]["content"]["body"] if e.get("type") == "Container"]
    assert quotes == ["quote-1", "quote-2", "quote-3"], "the card still quotes every cited paragraph"


def test_abstracts_are_cut_at_a_word() -> None:
    text = "word " * 100
    short = shorten(text, MAX_ABSTRACT_CHARS)
    assert len(short) <= MAX_ABSTRACT_CHARS and short.endswith("word…")
    assert shorten("short text", 160) == "short text"


# --- `navibot teams` and `navibot serve --only teams`, run as a user runs them --------------------------------------

@pytest.fixture(scope="module")
def loop() -> Iterator[BackgroundLoop]:
    background = BackgroundLoop()
    yield background
    background.close()


def no_platform_env(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    for name in [n for n in os.environ if n.startswith(("SLACK_", "NAVIBOT_TEAMS_"))]:
        monkeypatch.delenv(name)
    for name, value in {"NAVIBOT_LOG_FORMAT": "text", **values}.items():
        monkeypatch.setenv(name, value)


def teams_scenario(connector: FakeConnector) -> Callable[[str], Awaitable[dict[str, Any]]]:
    """A channel question, its card in the reply chain, then /healthz, /metrics and Slack's path."""
    async def scenario(url: str) -> dict[str, Any]:
        async with aiohttp.ClientSession() as session:
            async with session.post(url + "/api/messages", json=message(connector, STUDENTS)) as response:
                seen: dict[str, Any] = {"question": response.status}
            [reply] = await connector.wait_messages(1)
            seen["answer"] = answer_of(reply)
            for path in ("/healthz", "/metrics", "/slack/events"):
                async with session.get(url + path) as response:
                    seen[path] = response.status, await response.text()
        return seen
    return scenario


def start_up_line(caplog: pytest.LogCaptureFixture) -> str:
    [started] = [r for r in caplog.records if getattr(r, "event", None) == "listening"]
    return started.getMessage()


def test_navibot_teams_answers_on_this_machine_with_health_and_metrics_until_sigterm(
        loop: BackgroundLoop, demo_store: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """No credentials: local anonymous mode, on 127.0.0.1 (no --host given), NAVIBOT_TEAMS_PORT."""
    port = free_port()
    no_platform_env(monkeypatch, NAVIBOT_TEAMS_PORT=str(port))
    caplog.set_level(logging.INFO, logger="bot.server.app")
    connector = loop.run(FakeConnector().start())
    try:
        code, seen = while_serving(loop, ["teams", "--store", str(demo_store)], port, teams_scenario(connector))
    finally:
        loop.run(connector.stop())
    assert code == 0, "SIGTERM is an orderly stop"
    assert seen["question"] == 202 and "college students" in seen["answer"].lower()
    assert seen["/healthz"][0] == 200 and json.loads(seen["/healthz"][1])["status"] == "ok"
    assert seen["/metrics"][0] == 200 and 'navibot_questions_total{platform="teams"} 1' in seen["/metrics"][1]
    assert seen["/slack/events"][0] == 404, "Teams alone"
    assert start_up_line(caplog) == (f"navibot teams: Teams at http://127.0.0.1:{port}/api/messages (local anonymous "
                                     f"mode); http://127.0.0.1:{port}: /healthz, /metrics (SIGTERM or Ctrl-C to stop)")


def test_serve_only_teams_does_not_read_slack_and_needs_anonymous_mode_asked_for(
        loop: BackgroundLoop, demo_store: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # A Slack setting that would be refused (and a token Slack would be asked about): --only teams reads neither.
    no_platform_env(monkeypatch, SLACK_BOT_TOKEN="xoxb-1", SLACK_API_URL="slack.com/api")
    port = free_port()
    argv = ["serve", "--only", "teams", "--host", "127.0.0.1", "--port", str(port), "--store", str(demo_store)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("navibot: Teams has no credentials") and "NAVIBOT_TEAMS_ALLOW_ANONYMOUS=true" in err
    assert "\n" not in err and "Traceback" not in err

    monkeypatch.setenv("NAVIBOT_TEAMS_ALLOW_ANONYMOUS", "true")
    connector = loop.run(FakeConnector().start())
    try:
        code, seen = while_serving(loop, argv, port, teams_scenario(connector))
    finally:
        loop.run(connector.stop())
    assert code == 0 and seen["question"] == 202 and "college students" in seen["answer"].lower()
    assert seen["/healthz"][0] == 200 and seen["/slack/events"][0] == 404


def test_navibot_teams_refuses_a_partial_set_of_credentials_before_anything_runs(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    no_platform_env(monkeypatch, NAVIBOT_TEAMS_TENANT_ID=TENANT)
    assert main(["teams", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip()
    assert "missing: NAVIBOT_TEAMS_CLIENT_ID, NAVIBOT_TEAMS_CLIENT_SECRET" in err and "\n" not in err
