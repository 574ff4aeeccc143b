"""The production configuration in one process: NAVIBOT_STORE=mongodb (the MongoDB code on the async mongomock facade,
MongoConnection.open patched as in tests/bot/cli/test_mongo_cli.py), NAVIBOT_LLM=gemini and NAVIBOT_RERANK=cohere
(the real SDK clients against the local fakes of tests/fakes/fake_models.py), the bot built by `build_bot` from the
environment as `navibot serve` (and its aliases `navibot slack`, `navibot teams`) builds it, `navibot db init` run
and the demo knowledge base ingested into MongoDB; then the Slack app (HTTP mode, signed requests) and the Teams app
(anonymous mode) on it.

The embedder is the bundled WordLlama model, as by default; one test builds the same bot with NAVIBOT_EMBEDDER=gemini
(the vector index sized for Gemini's vectors, the knowledge base embedded through the fake)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.blocks import ACTION_FEEDBACK, ACTION_SHOW_QUOTES, escape
from adapters.teams.cards import VERB_HELPFUL
from bot.cli import db_admin
from bot.cli.main import demo_kb_path, main
from bot.config.settings import Settings
from bot.conversations.mongo import HistoryOptional, MongoConversationStore
from bot.conversations.redacting import RedactingConversationStore
from bot.port import ReplyKind, Turn
from bot.wiring.runtime import Bot, build_bot
from rag.answer.answerer import UNAVAILABLE_NOTICE
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from rag.mongo.knowledge import MongoKnowledgeStore
from tests.adapters.slack.test_slack import SECRET, Harness, answer_id_of, blocks_of, channel, conversation_key
from tests.adapters.teams.test_teams import USER_AAD, actions, answer_of, card_texts, message, only_card, running
from tests.fakes.command_server import free_port
from tests.fakes.fake_models import FakeCohere, FakeGemini
from tests.fakes.fake_mongo import FakeDatabase
from tests.fakes.fake_slack import BOT_USER_ID, BackgroundLoop, serve_http

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")

MONGO_HOST = "cluster0.example.mongodb.net"
URI = f"mongodb+srv://navi:Sup3rSecret@{MONGO_HOST}/?retryWrites=true"
KEY = "test-key-do-not-log"
STUDENTS = "Can college students get SNAP?"
WORK = "what if they work 20 hours a week?"
GENERATE = "/v1/models/gemini-2.5-flash:generateContent"
# A Slack answer is first asked for as a stream (sentence by verified sentence); this fake answers only whole JSON
# replies, so the stream request is a 404 once and Gemini writes the answer whole (tests/rag/providers/
# test_gemini_stream.py covers streaming). These tests look at the whole-answer calls.
STREAM = "/v1/models/gemini-2.5-flash:streamGenerateContent"


def answer_paths(gemini: FakeGemini) -> list[str]:
    return [p for p in gemini.paths() if p != STREAM]
SSN, PHONE = "123-45-6789", "(555) 123-4567"


@dataclass
class Production:
    db: FakeDatabase
    bot: Bot
    gemini: FakeGemini
    cohere: FakeCohere
    replies: list[dict[str, Any]]  # what the fake Gemini answered ({"answer", "citations"}), in order

    @property
    def answers(self) -> list[str]:
        return [r["answer"] for r in self.replies]

    def stored_paragraphs(self) -> set[str]:
        """Every paragraph (sub-chunk) of the knowledge base as MongoDB holds it."""
        return {s["text"] for row in self.db.raw("chunks").find({}) for s in row["subchunks"]}

    def record_answers(self, body: dict[str, Any]) -> str:
        text = FakeGemini.default_answer(body)
        self.replies.append(json.loads(text))
        return text


@contextmanager
def production_env(folder: Path, gemini: FakeGemini, cohere: FakeCohere, **settings: str) -> Iterator[FakeDatabase]:
    """The environment of a production deployment (NAVIBOT_<NAME> values; `settings` adds some), its MongoDB
    prepared with `navibot db init`. The database name differs per call: MongoConnection.shared would otherwise
    hand out a connection still open to another test's database."""
    db = FakeDatabase(f"navibot_{uuid.uuid4().hex[:8]}")
    env = {"DATA_DIR": str(folder / "data"), "STORE": "mongodb", "MONGODB_URI": URI, "MONGODB_DATABASE": db.name,
           "LLM": "gemini", "GEMINI_API_KEYS": KEY, "GEMINI_BASE_URLS": gemini.url, "RERANK": "cohere",
           "COHERE_API_KEYS": KEY, "COHERE_BASE_URLS": cohere.url, **settings}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MongoConnection, "open", classmethod(
            lambda cls, config: cls(AsyncBridge(), db, host=MONGO_HOST)))
        patch.setattr(db_admin, "POLL_SECONDS", 0.01)
        patch.chdir(folder)
        for name, value in env.items():
            patch.setenv(f"NAVIBOT_{name}", value)
        assert main(["db", "init", "--timeout", "5"]) == 0  # the set-up step: collections and search indexes
        yield db


@contextmanager
def production_bot(folder: Path, gemini: FakeGemini, cohere: FakeCohere,
                   **settings: str) -> Iterator[tuple[FakeDatabase, Bot]]:
    """The bot as `navibot slack` / `navibot teams` build it (settings from the environment, no --store), in the
    production environment, with the demo knowledge base ingested into MongoDB."""
    with production_env(folder, gemini, cohere, **settings) as db:
        bot = build_bot(Settings())
        try:
            assert bot.core.ingestor.ingest_paths([demo_kb_path()]).ingested >= 12
            yield db, bot
        finally:
            bot.close()


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Production]:
    with (FakeGemini() as gemini, FakeCohere() as cohere,
          production_bot(tmp_path_factory.mktemp("production"), gemini, cohere) as (db, bot)):
        yield Production(db, bot, gemini, cohere, [])


@pytest.fixture(autouse=True)
def fresh_fakes(production: Production) -> Iterator[None]:
    """Quiet fakes per test; the Gemini answers recorded; and no request the real APIs would refuse."""
    for fake in (production.gemini, production.cohere):
        fake.reset()
    production.replies.clear()
    production.gemini.reply = production.record_answers
    yield
    assert production.gemini.refused == [] and production.cohere.refused == []


@pytest.fixture(scope="module")
def slack(production: Production) -> Iterator[Harness]:
    loop = BackgroundLoop()
    served = loop.run(serve_http(production.bot, SECRET))
    yield Harness(loop.loop, served.fake, served.slack, production.bot, served.url, served.session)
    loop.run(served.stop())
    loop.close()


def stored_answer(production: Production, answer_id: str) -> dict[str, Any]:
    return production.db.stored("answers", {"_id": answer_id})


# --- Slack --------------------------------------------------------------------------------------------------------

def test_slack_mention_gets_geminis_answer_with_verbatim_quotes_from_mongodb(production: Production,
                                                                             slack: Harness) -> None:
    bot = production.bot
    assert isinstance(bot.core.store, MongoKnowledgeStore)
    assert isinstance(bot.conversations, RedactingConversationStore)  # NAVIBOT_REDACT_PII's default
    assert isinstance(bot.conversations.inner, HistoryOptional)
    assert isinstance(bot.conversations.inner.inner, MongoConversationStore)
    ch = channel()
    ts, reply = slack.mention(ch, STUDENTS)
    slack.settle()
    assert len(slack.fake.of("chat.postMessage", ch)) == 1 and reply.args["thread_ts"] == ts
    [answer] = production.answers
    text = blocks_of(reply, "section")[0]["text"]["text"]
    assert escape(answer) in text and UNAVAILABLE_NOTICE not in text
    assert answer_paths(production.gemini) == [GENERATE] and production.cohere.paths() == ["/v2/rerank"]

    answer_id = answer_id_of(reply)
    record = stored_answer(production, answer_id)
    assert record["answer"] == answer and record["conversation_key"] == conversation_key(ch, ts)
    slack.click(reply, ch, "U0BOB", ACTION_SHOW_QUOTES, answer_id)
    [update] = slack.run(slack.fake.wait_for("chat.update", 1, ch))
    quotes = [block["elements"][1]["elements"][0]["text"] for block in blocks_of(update, "rich_text")]
    assert quotes == [c["quote"] for c in record["citations"]]
    paragraphs = production.stored_paragraphs()
    assert all(quote in paragraphs for quote in quotes), "each quote is a stored paragraph, verbatim"
    [gemini_cited] = production.replies[0]["citations"]
    assert record["citations"][0]["sub_id"] == gemini_cited, "the paragraph Gemini cited is quote [1]"


def test_slack_follow_up_sends_the_history_kept_in_mongodb_to_gemini(production: Production,
                                                                      slack: Harness) -> None:
    ch = channel()
    ts, first = slack.mention(ch, STUDENTS)
    production.gemini.reset()
    production.gemini.reply = production.record_answers
    _, follow = slack.mention(ch, WORK, thread_ts=ts)
    assert follow.args["thread_ts"] == ts
    rewrite, answer = [c for c in production.gemini.calls if c.path != STREAM]
    assert f"Navigator: {STUDENTS}" in FakeGemini.text_of(rewrite.body)
    assert FakeGemini.text_of(rewrite.body).endswith(f"Latest question: {WORK}")
    contents = answer.body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    assert contents[2]["parts"] == [{"text": STUDENTS}]
    earlier = stored_answer(production, answer_id_of(first))["answer"]
    assert contents[3]["parts"] == [{"text": earlier}]
    history = list(production.db.raw("history").find({"conversation_key": conversation_key(ch, ts)}))
    assert [h["question"] for h in history] == [STUDENTS, WORK]


def test_slack_feedback_click_is_stored_in_mongodb(production: Production, slack: Harness) -> None:
    ch = channel()
    _, reply = slack.mention(ch, STUDENTS)
    answer_id = answer_id_of(reply)
    slack.click(reply, ch, "U0BOB", ACTION_FEEDBACK, f"helpful:{answer_id}", "feedback_buttons")
    [thanks] = slack.run(slack.fake.wait_for("chat.postEphemeral", 1, ch))
    assert "👍" in thanks.args["text"]
    saved = production.db.stored("feedback", {"answer_id": answer_id})
    assert saved["user"] == "U0BOB" and saved["helpful"] is True


def test_slack_event_delivered_twice_is_answered_once(production: Production, slack: Harness) -> None:
    ch = channel()
    event_id = f"Ev{uuid.uuid4().hex[:10]}"
    ts, _ = slack.mention(ch, STUDENTS, event_id=event_id)
    event = {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}", "ts": ts,
             "channel": ch}
    status, _, _ = slack.event(event, event_id=event_id, retry_num=1)
    assert status == 200
    slack.settle()
    assert len(slack.fake.of("chat.postMessage", ch)) == 1
    assert production.db.raw("events").count_documents({"platform": "slack", "event_id": event_id}) == 1
    assert len(production.answers) == 1, "the redelivery never reached Gemini"


def test_slack_gemini_down_everywhere_gives_the_extractive_answer_with_the_notice(production: Production,
                                                                                    slack: Harness) -> None:
    production.gemini.status = 503
    ch = channel()
    _, reply = slack.mention(ch, STUDENTS)
    assert answer_paths(production.gemini) == [GENERATE] and production.answers == []
    text = blocks_of(reply, "section")[0]["text"]["text"]
    assert text.endswith(escape(UNAVAILABLE_NOTICE)) and "[1]" in text
    record = stored_answer(production, answer_id_of(reply))
    assert record["kind"] == "answer" and record["citations"]
    assert all(c["quote"] in production.stored_paragraphs() for c in record["citations"])


# --- Teams --------------------------------------------------------------------------------------------------------

def test_teams_mention_gets_geminis_card_and_history_and_feedback_land_in_mongodb(production: Production) -> None:
    async def scenario() -> tuple[Any, dict[str, Any]]:
        async with running(production.bot) as h:
            await h.post(message(h.connector, STUDENTS, activity_id="1700000000101"))
            [reply] = await h.connector.wait_messages(1)
            helpful = next(a for a in actions(only_card(reply), "Action.Execute") if a["verb"] == VERB_HELPFUL)
            invoke = {**message(h.connector, "", activity_id="f:101"), "type": "invoke",
                      "name": "adaptiveCard/action", "text": None,
                      "value": {"action": {"type": "Action.Execute", "verb": VERB_HELPFUL, "data": helpful["data"]},
                                "trigger": "manual"}}
            async with h.session.post(h.url, json=invoke) as response:
                assert response.status == 200
                return reply, dict(await response.json())

    reply, clicked = asyncio.run(scenario())
    [answer] = production.answers
    assert answer_of(reply) == answer and production.cohere.paths() == ["/v2/rerank"]
    card = only_card(reply)
    quotes = [e for e in card["body"] if e.get("type") == "Container" and str(e.get("id", "")).startswith("quote-")]
    assert quotes and all(q["isVisible"] is False for q in quotes)
    paragraphs = production.stored_paragraphs()
    for container in quotes:
        quote = next(e for e in container["items"] if e.get("id") == f"{container['id']}-text")
        assert "\n".join(card_texts(quote)) in paragraphs, "the quote is a stored paragraph, verbatim"

    assert "Thanks, feedback saved: helpful." in card_texts(clicked["value"])
    answer_id = next(iter(actions(card, "Action.Execute")))["data"]["answer_id"]
    record = stored_answer(production, answer_id)
    assert record["platform"] == "teams" and record["answer"] == answer
    [turn] = production.db.raw("history").find({"conversation_key": record["conversation_key"]})
    assert turn["question"] == STUDENTS and turn["answer"] == answer
    saved = production.db.stored("feedback", {"answer_id": answer_id})
    assert saved["user"] == USER_AAD and saved["helpful"] is True


# --- PII ----------------------------------------------------------------------------------------------------------

def test_an_ssn_and_a_phone_number_never_reach_mongodb(production: Production, slack: Harness) -> None:
    def echoing(body: dict[str, Any]) -> str:  # a model that repeats the caller's details back, as it got them
        reply = json.loads(FakeGemini.default_answer(body))
        said = PHONE if PHONE in FakeGemini.text_of(body) else "[phone]"  # (redacted before it was sent)
        return json.dumps({**reply, "answer": f"For the caller at {said}: {reply['answer']}"})

    production.gemini.reply = echoing
    ch = channel()
    question = f"My client's SSN is {SSN} and her phone is {PHONE}. {STUDENTS}"
    ts, reply = slack.mention(ch, question)
    record = stored_answer(production, answer_id_of(reply))
    assert "[ssn]" in record["question"] and "[phone]" in record["question"]
    assert record["answer"].startswith("For the caller at [phone]: ")
    assert production.gemini.calls and not any(PHONE in json.dumps(c.body) for c in production.gemini.calls)
    [turn] = production.db.raw("history").find({"conversation_key": conversation_key(ch, ts)})
    assert "[ssn]" in turn["question"] and "[phone]" in turn["answer"]
    slack.click(reply, ch, "U0BOB", ACTION_FEEDBACK, f"helpful:{answer_id_of(reply)}", "feedback_buttons")
    slack.run(slack.fake.wait_for("chat.postEphemeral", 1, ch))
    everything = json.dumps([list(production.db.raw(name).find({}, {"_id": 0}))
                             for name in production.db._db.list_collection_names() if name != "chunks"], default=str)
    digits = re.sub(r"\D", "", SSN), re.sub(r"\D", "", PHONE)
    for secret in (SSN, PHONE, *digits, "123-4567"):
        assert secret not in everything, secret


# --- Gemini embeddings in MongoDB ---------------------------------------------------------------------------------

def test_gemini_embeddings_fill_and_search_the_mongodb_vector_index(production: Production, tmp_path: Path) -> None:
    gemini = production.gemini
    with production_bot(tmp_path, gemini, production.cohere, EMBEDDER="gemini", GEMINI_EMBED_DIM="256") as (db, bot):
        vector = db["chunks"]._search_indexes["navibot_vector"]["latestDefinition"]["fields"][0]
        assert vector["numDimensions"] == 256 and len(db.stored("chunks")["embedding"]) == 256
        ingest = [c for c in gemini.calls if c.path.endswith(":batchEmbedContents")]
        assert ingest and all(r["taskType"] == "RETRIEVAL_DOCUMENT" for c in ingest for r in c.body["requests"])
        gemini.reset()
        gemini.reply = production.record_answers
        reply = bot.handler.handle(Turn("slack", "T1", "C1", "th1", "U1", STUDENTS, "ev-embed"))
    assert reply.kind is ReplyKind.ANSWER and reply.text == production.answers[0]
    query, answer = gemini.calls
    assert query.path.endswith(":batchEmbedContents") and answer.path == GENERATE
    assert query.body["requests"][0]["taskType"] == "RETRIEVAL_QUERY"
    assert any("$vectorSearch" in json.dumps(p) for p in db.server.pipelines), "the vector index was searched"


# --- `navibot slack` on an empty MongoDB ----------------------------------------------------------------------------

def test_navibot_slack_warns_that_the_mongodb_store_is_empty_naming_it(production: Production, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    """`navibot slack` warns at start-up when the knowledge store is empty; on MongoDB the warning must name
    the database, not the SQLite file NAVIBOT_STORE=mongodb does not use. (The Slack API is unreachable here, so
    the command stops with exit 2 right after the warning.)"""
    with production_env(tmp_path, production.gemini, production.cohere) as db:
        monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1")
        monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
        monkeypatch.setenv("SLACK_API_URL", f"http://127.0.0.1:{free_port()}/api/")
        with caplog.at_level(logging.WARNING, logger="bot.wiring.runtime"):
            assert main(["slack", "--port", str(free_port())]) == 2
    [warning] = [r.getMessage() for r in caplog.records if "is empty" in r.getMessage()]
    assert f"MongoDB {MONGO_HOST}/{db.name}" in warning and "sqlite" not in warning, warning
    assert "Sup3rSecret" not in warning
