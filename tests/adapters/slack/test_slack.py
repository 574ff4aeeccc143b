"""The Slack app end to end: real slack-bolt (AsyncApp behind aiohttp at /slack/events) and slack-sdk
(AsyncWebClient) against a fake Slack Web API on 127.0.0.1, with signed requests, on the demo knowledge base.

One event loop in a background thread serves the fake and the app for the whole module; each test uses its own
channel so the recorded calls of one test never satisfy another's wait."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar
from urllib.parse import urlencode

import aiohttp
import pytest

from adapters.slack.app import (
    APOLOGY,
    NOT_IN_CHANNEL,
    SlackApp,
)
from adapters.slack.blocks import (
    ACTION_FEEDBACK,
    ACTION_HIDE_QUOTES,
    ACTION_REASON,
    ACTION_SHOW_QUOTES,
    REASON_BLOCK,
    REASON_INPUT,
    VIEW_REASON,
    escape,
)
from bot.chat.chat_commands import HELP
from bot.cli.main import demo_kb_path
from bot.config.settings import Settings
from bot.conversations.store import AnswerRecord
from bot.wiring.runtime import Bot, build_bot
from rag.cite.rail import Citation
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, Call, FakeSlack, serve_http

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
STUDENTS = "Can college students get SNAP?"
# Slack retries an event not acknowledged within 3 s; the adapter acks before answering. 2.5 s keeps a margin
# and leaves a loaded 2-core runner room.
ACK_WITHIN = 2.5
T = TypeVar("T")


@dataclass
class Harness:
    loop: asyncio.AbstractEventLoop
    fake: FakeSlack
    slack: SlackApp
    bot: Bot
    url: str
    session: aiohttp.ClientSession

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    # --- requests as Slack sends them -----------------------------------------------------------------------------

    def signed_headers(self, body: str, content_type: str, secret: str = SECRET) -> dict[str, str]:
        ts = str(int(time.time()))
        digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}", "Content-Type": content_type}

    def post(self, body: str, content_type: str, secret: str = SECRET,
             extra: dict[str, str] | None = None) -> tuple[int, str, float]:
        async def send() -> tuple[int, str, float]:
            start = time.perf_counter()
            headers = {**self.signed_headers(body, content_type, secret), **(extra or {})}
            async with self.session.post(self.url, data=body.encode(), headers=headers) as response:
                return response.status, await response.text(), time.perf_counter() - start
        return self.run(send())

    def event(self, event: dict[str, Any], event_id: str | None = None, retry_num: int | None = None,
              secret: str = SECRET) -> tuple[int, str, float]:
        envelope = {"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                    "event": event, "event_id": event_id or f"Ev{uuid.uuid4().hex[:10]}",
                    "event_time": int(time.time()),
                    "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]}
        extra = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"} if retry_num else None
        return self.post(json.dumps(envelope), "application/json", secret, extra)

    def command(self, channel: str, user: str, text: str) -> str:
        """Sends `/navibot text`; returns the id of its response_url."""
        response_id = uuid.uuid4().hex
        form = {"token": "legacy", "team_id": TEAM_ID, "team_domain": "navi", "channel_id": channel,
                "channel_name": "benefits", "user_id": user, "user_name": "nav", "command": "/navibot", "text": text,
                "api_app_id": "A0NAVI", "response_url": self.fake.response_url(response_id),
                "trigger_id": f"{uuid.uuid4().int % 10**9}.1.abc"}
        status, body, _ = self.post(urlencode(form), "application/x-www-form-urlencoded")
        assert status == 200, body
        return response_id

    def interact(self, payload: dict[str, Any]) -> tuple[int, str, float]:
        payload = {"team": {"id": TEAM_ID, "domain": "navi"}, "api_app_id": "A0NAVI", "token": "legacy",
                   "trigger_id": f"{uuid.uuid4().int % 10**9}.1.abc", **payload}
        return self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")

    def click(self, message: Call, channel: str, user: str, action_id: str, value: str,
              element: str = "button") -> tuple[int, str, float]:
        ts = message.result.get("ts") or message.result.get("message_ts") or message.args.get("ts")
        posted = {"type": "message", "ts": ts, "thread_ts": message.args.get("thread_ts"),
                  "blocks": message.args.get("blocks")}
        return self.interact({
            "type": "block_actions", "user": {"id": user, "team_id": TEAM_ID},
            "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": False,
                          "thread_ts": message.args.get("thread_ts")},
            "channel": {"id": channel, "name": "benefits"}, "message": posted,
            "response_url": self.fake.response_url(uuid.uuid4().hex),
            "actions": [{"action_id": action_id, "block_id": "b1", "type": element, "value": value,
                         "action_ts": str(time.time())}]})

    def mention(self, channel: str, text: str, user: str = "U0ALICE", thread_ts: str | None = None,
                event_id: str | None = None) -> tuple[str, Call]:
        """A mention and the threaded reply it gets; returns the mention's ts and the reply call."""
        ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
        event = {"type": "app_mention", "user": user, "text": f"<@{BOT_USER_ID}> {text}", "ts": ts,
                 "channel": channel, "event_ts": ts, "team": TEAM_ID}
        if thread_ts:
            event["thread_ts"] = thread_ts
        before = len(self.fake.of("chat.postMessage", channel))
        status, body, _ = self.event(event, event_id)
        assert status == 200, body
        calls = self.run(self.fake.wait_for("chat.postMessage", before + 1, channel))
        return ts, calls[before]

    def settle(self) -> None:
        """Until every background task of the app is done (answers, updates, confirmations)."""
        self.run(self.slack.drain(10))


@pytest.fixture(scope="module")
def harness(demo_store: Path) -> Iterator[Harness]:
    folder = demo_store.parent
    settings = Settings(_env_file=None, data_dir=folder)  # type: ignore[call-arg]
    bot = build_bot(settings, demo_store, folder / "conversations.sqlite3")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    served = asyncio.run_coroutine_threadsafe(serve_http(bot, SECRET), loop).result(30)
    harness = Harness(loop, served.fake, served.slack, bot, served.url, served.session)
    yield harness
    harness.run(served.stop())
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    bot.close()


def channel() -> str:
    return "C" + uuid.uuid4().hex[:9].upper()


def blocks_of(call: Call, kind: str) -> list[dict[str, Any]]:
    return [b for b in call.args.get("blocks") or [] if b["type"] == kind]


def all_text(call: Call) -> str:
    return json.dumps(call.args.get("blocks") or [], ensure_ascii=False) + str(call.args.get("text"))


def answer_id_of(call: Call) -> str:
    return str(blocks_of(call, "actions")[0]["elements"][0]["value"])


def conversation_key(ch: str, thread: str) -> str:
    return f"slack|{TEAM_ID}|{ch}|{thread}"


# --- questions --------------------------------------------------------------------------------------------------

def test_a_signed_mention_gets_one_threaded_answer_with_quotes_button_and_feedback(harness: Harness) -> None:
    ch = channel()
    ts, reply = harness.mention(ch, STUDENTS)
    harness.settle()
    assert len(harness.fake.of("chat.postMessage", ch)) == 1
    assert reply.args["thread_ts"] == ts and reply.token == "xoxb-test"
    sections = blocks_of(reply, "section")
    assert "college students" in sections[0]["text"]["text"].lower() and "[1]" in sections[0]["text"]["text"]
    context = blocks_of(reply, "context")[0]["elements"][0]["text"]
    assert re.fullmatch(r"mood: concise · \d+ sources?", context), context
    answer_id = answer_id_of(reply)
    assert blocks_of(reply, "actions")[0]["elements"][0]["action_id"] == ACTION_SHOW_QUOTES
    feedback = blocks_of(reply, "context_actions")[0]["elements"][0]
    assert feedback["type"] == "feedback_buttons" and feedback["action_id"] == ACTION_FEEDBACK
    assert feedback["positive_button"]["value"] == f"helpful:{answer_id}"
    assert feedback["negative_button"]["value"] == f"not_helpful:{answer_id}"
    assert not blocks_of(reply, "rich_text"), "quotes are collapsed at first"
    assert "college students" in reply.args["text"].lower(), "plain-text fallback"
    # Progress: :eyes: on the question before the answer, removed after it.
    added = harness.fake.of("reactions.add", ch)
    removed = harness.fake.of("reactions.remove", ch)
    assert [(c.args["timestamp"], c.args["name"]) for c in added] == [(ts, "eyes")]
    assert added[0].at <= reply.at <= removed[0].at
    record = harness.bot.conversations.get_answer(answer_id)
    assert record is not None and record.conversation_key == conversation_key(ch, ts) and record.user == "U0ALICE"


def test_events_are_acknowledged_at_once_and_progress_shows_at_once(harness: Harness) -> None:
    ch = channel()
    ts = "1700000001.000100"
    start = time.monotonic()
    status, _, elapsed = harness.event({"type": "app_mention", "user": "U0ALICE",
                                        "text": f"<@{BOT_USER_ID}> {STUDENTS}",
                                        "ts": ts, "channel": ch, "event_ts": ts})
    assert status == 200 and elapsed < ACK_WITHIN
    reaction = harness.run(harness.fake.wait_for("reactions.add", 1, ch))[0]
    [answer] = harness.run(harness.fake.wait_for("chat.postMessage", 1, ch))
    assert reaction.at - start < ACK_WITHIN and reaction.at <= answer.at  # :eyes: shows while the answer is made


def test_many_slow_answers_at_once_leave_button_clicks_and_the_reason_form_fast(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """More answers in progress than asyncio's default thread pool has threads (at most 32): the reason form, which
    records before it acknowledges, still answers at once, and every question gets its one reply."""
    ch = channel()
    _, first = harness.mention(ch, STUDENTS)
    answer_id = answer_id_of(first)
    release = threading.Event()
    handle = harness.bot.handler.handle

    def slow(turn: Any, mood_override: str | None = None) -> Any:
        release.wait(5)  # a language model taking its time
        return handle(turn, mood_override)

    monkeypatch.setattr(harness.bot.handler, "handle", slow)
    asked = 34
    for i in range(asked):
        ts = f"1700000900.{i:06d}"
        status, _, elapsed = harness.event({"type": "app_mention", "user": "U0BUSY", "channel": ch, "ts": ts,
                                            "text": f"<@{BOT_USER_ID}> {STUDENTS} ({i})"})
        assert status == 200 and elapsed < ACK_WITHIN
    harness.run(harness.fake.wait_for("reactions.add", asked + 1, ch))
    try:
        status, body, elapsed = harness.interact({
            "type": "view_submission", "user": {"id": "U0BOB", "team_id": TEAM_ID},
            "view": {"id": "V0REASON", "type": "modal", "callback_id": VIEW_REASON,
                     "private_metadata": json.dumps({"answer_id": answer_id, "channel": ch}),
                     "state": {"values": {REASON_BLOCK: {
                         REASON_INPUT: {"type": "plain_text_input", "value": "slow"}}}}}})
    finally:
        release.set()
    assert status == 200 and body == "" and elapsed < ACK_WITHIN, elapsed
    replies = harness.run(harness.fake.wait_for("chat.postMessage", asked + 1, ch, timeout=20))
    harness.settle()
    assert len(harness.fake.of("chat.postMessage", ch)) == asked + 1
    assert len({r.args["thread_ts"] for r in replies}) == asked + 1, "one reply per question, each in its thread"


def test_a_follow_up_in_the_thread_uses_the_history(harness: Harness) -> None:
    ch = channel()
    ts, _ = harness.mention(ch, STUDENTS)
    _, reply = harness.mention(ch, "what if they work 20 hours a week?", thread_ts=ts)
    assert reply.args["thread_ts"] == ts
    context = blocks_of(reply, "context")[0]["elements"][0]["text"]
    assert "understood as" in context and "student" in context.lower()
    assert len(harness.bot.conversations.history(conversation_key(ch, ts), 10)) == 2


def test_a_direct_message_is_answered_in_its_thread_and_bot_messages_are_ignored(harness: Harness) -> None:
    dm = "D" + uuid.uuid4().hex[:9].upper()
    ts = "1700000002.000100"
    for ignored in ({"subtype": "message_changed"}, {"bot_id": "B0OTHER"}):
        harness.event({"type": "message", "channel_type": "im", "channel": dm, "user": "U0ALICE", "text": STUDENTS,
                       "ts": "1700000002.000001", **ignored})
    harness.event({"type": "message", "channel_type": "im", "channel": dm, "user": "U0ALICE", "text": STUDENTS,
                   "ts": ts, "event_ts": ts})
    harness.event({"type": "app_mention", "channel": dm, "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> hi",
                   "ts": "1700000002.000200"})  # mentions in a DM come as messages too: answered once, there
    harness.run(harness.fake.wait_for("chat.postMessage", 1, dm))
    harness.settle()
    replies = harness.fake.of("chat.postMessage", dm)
    assert len(replies) == 1 and replies[0].args["thread_ts"] == ts and blocks_of(replies[0], "context_actions")


def test_the_same_event_delivered_twice_is_answered_once(harness: Harness) -> None:
    ch = channel()
    event_id = f"Ev{uuid.uuid4().hex[:10]}"
    harness.mention(ch, STUDENTS, event_id=event_id)
    event = {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}",
             "ts": "1700000003.000100", "channel": ch}
    status, _, _ = harness.event(event, event_id=event_id, retry_num=1)
    assert status == 200
    harness.settle()
    assert len(harness.fake.of("chat.postMessage", ch)) == 1
    assert len(harness.fake.of("reactions.add", ch)) == 1, "no second progress reaction for a retry"


def test_a_bad_signature_is_refused_and_nothing_is_posted(harness: Harness) -> None:
    ch = channel()
    event = {"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}",
             "ts": "1700000004.000100", "channel": ch}
    status, _, _ = harness.event(event, secret="not-the-signing-secret")
    assert status == 401
    status, _, _ = harness.post(json.dumps({"type": "event_callback", "event": event}), "application/json",
                                extra={"X-Slack-Signature": "v0=00",
                                       "X-Slack-Request-Timestamp": str(int(time.time()))})
    assert status == 401
    harness.settle()
    assert not [c for c in harness.fake.calls if c.args.get("channel") == ch]


@pytest.mark.parametrize(("body", "content_type"), [
    ("not json", "application/json"), ("payload=%7Bnot-json", "application/x-www-form-urlencoded"),
    ("[1, 2]", "application/json"), ('"text"', "application/json"),
])
def test_a_malformed_unsigned_body_is_refused_without_a_traceback(harness: Harness, body: str, content_type: str,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        status, _, _ = harness.post(body, content_type, extra={"X-Slack-Signature": "v0=00"})
    assert status in {400, 401}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


def test_url_verification_is_answered(harness: Harness) -> None:
    status, body, _ = harness.post(json.dumps({"type": "url_verification", "challenge": "c-123", "token": "t"}),
                                   "application/json")
    assert status == 200 and "c-123" in body


def test_an_empty_mention_gets_the_help(harness: Harness) -> None:
    ch = channel()
    _, reply = harness.mention(ch, "  ")
    assert reply.args["text"] == escape(HELP) and reply.args["thread_ts"]
    assert not blocks_of(reply, "context_actions"), "a command reply has no feedback buttons"


def test_an_overlong_message_gets_a_polite_error(harness: Harness) -> None:
    ch = channel()
    _, reply = harness.mention(ch, "SNAP " * 1000)
    assert "characters long" in reply.args["text"] and "one short question" in reply.args["text"]
    assert not blocks_of(reply, "actions")


def test_a_rate_limited_post_is_retried_after_the_delay(harness: Harness) -> None:
    ch = channel()
    harness.fake.rate_limit_next("chat.postMessage", retry_after=1)
    ts = "1700000005.000100"
    harness.event({"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}", "ts": ts,
                   "channel": ch})
    first, second = harness.run(harness.fake.wait_for("chat.postMessage", 2, ch))
    assert second.at - first.at >= 0.95, "waited what Retry-After said"
    assert second.args["thread_ts"] == ts and blocks_of(second, "context_actions")
    harness.settle()
    assert len(harness.fake.of("chat.postMessage", ch)) == 2


def test_a_rate_limited_reaction_does_not_hold_up_the_answer(harness: Harness) -> None:
    ch = channel()
    harness.fake.rate_limit_next("reactions.add", retry_after=2)
    ts = "1700000005.000200"
    harness.event({"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}", "ts": ts,
                   "channel": ch})
    [reply] = harness.run(harness.fake.wait_for("chat.postMessage", 1, ch))
    limited, added = harness.run(harness.fake.wait_for("reactions.add", 2, ch))
    harness.settle()
    assert reply.at < added.at and added.at - limited.at >= 1.5, "answered before the Retry-After was over"
    [removed] = harness.fake.of("reactions.remove", ch)
    assert removed.at >= added.at and removed.args["timestamp"] == ts


def test_a_web_api_failure_becomes_an_apology_with_a_trace_id(harness: Harness,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    ch = channel()
    harness.fake.fail_next("chat.postMessage", "fatal_error")
    with caplog.at_level(logging.ERROR, logger="adapters.slack.app"):
        ts = "1700000006.000100"
        harness.event({"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}", "ts": ts,
                       "channel": ch})
        _, apology = harness.run(harness.fake.wait_for("chat.postMessage", 2, ch))
        harness.settle()
    trace = re.search(r"trace id ([0-9a-f]{12})", apology.args["text"])
    assert trace and apology.args["thread_ts"] == ts and "Traceback" not in apology.args["text"]
    assert apology.args["text"] == APOLOGY.format(trace=trace.group(1))
    assert any(trace.group(1) in r.getMessage() and "fatal_error" in r.getMessage() for r in caplog.records)


def test_a_failure_inside_the_bot_or_the_adapter_becomes_an_apology_in_the_thread(
        harness: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("index offline")

    ch = channel()
    with caplog.at_level(logging.ERROR):
        monkeypatch.setattr(harness.bot.handler.engine, "answer", broken)  # inside the turn handler
        _, in_bot = harness.mention(ch, STUDENTS)
        monkeypatch.undo()
        monkeypatch.setattr("adapters.slack.app.render", broken)  # inside the adapter
        _, in_adapter = harness.mention(ch, STUDENTS)
        harness.settle()
    for reply in (in_bot, in_adapter):
        trace = re.search(r"trace id ([0-9a-f]{12})", reply.args["text"])
        assert trace and reply.args["text"].startswith("Sorry") and "index offline" not in reply.args["text"]
        assert any(trace.group(1) in r.getMessage() for r in caplog.records)
        assert reply.args["thread_ts"]


@pytest.mark.parametrize("error", ["invalid_blocks", "msg_blocks_too_long"])
def test_blocks_slack_refuses_still_deliver_the_answer_as_text(harness: Harness, error: str) -> None:
    ch = channel()
    harness.fake.fail_next("chat.postMessage", error)
    harness.event({"type": "app_mention", "user": "U0ALICE", "text": f"<@{BOT_USER_ID}> {STUDENTS}",
                   "ts": "1700000007.000100", "channel": ch})
    _, text_only = harness.run(harness.fake.wait_for("chat.postMessage", 2, ch))
    assert "blocks" not in text_only.args and "college students" in text_only.args["text"].lower()


# --- buttons ----------------------------------------------------------------------------------------------------

def _source_paragraphs(doc_id: str) -> str:
    path = demo_kb_path() / (doc_id.split("/", 1)[1] + ".md")
    return " ".join(path.read_text(encoding="utf-8").split())


def test_show_quotes_expands_the_message_in_place_with_the_verbatim_sources_and_hide_collapses(
        harness: Harness) -> None:
    ch = channel()
    _, reply = harness.mention(ch, STUDENTS)
    answer_id = answer_id_of(reply)
    record = harness.bot.conversations.get_answer(answer_id)
    assert record is not None and record.citations
    status, _, elapsed = harness.click(reply, ch, "U0BOB", ACTION_SHOW_QUOTES, answer_id)
    assert status == 200 and elapsed < ACK_WITHIN
    update = harness.run(harness.fake.wait_for("chat.update", 1, ch))[0]
    assert update.args["ts"] == reply.result["ts"]
    quotes = blocks_of(update, "rich_text")
    assert len(quotes) == len(record.citations)
    for block, citation in zip(quotes, record.citations, strict=True):
        header, quote = block["elements"]
        assert quote["type"] == "rich_text_quote"
        assert quote["elements"][0]["text"] == citation.quote  # verbatim: no escaping, no trimming
        assert " ".join(citation.quote.split()) in _source_paragraphs(citation.doc_id)  # the source's own words
        assert header["elements"][0]["text"] == f"[{citation.number}] "
        link = header["elements"][1]
        assert link["type"] == "link" and link["url"] == citation.url and link["text"] == citation.title
    assert blocks_of(update, "actions")[0]["elements"][0]["action_id"] == ACTION_HIDE_QUOTES
    assert blocks_of(update, "context_actions"), "feedback buttons stay"

    harness.click(update, ch, "U0BOB", ACTION_HIDE_QUOTES, answer_id)
    collapsed = harness.run(harness.fake.wait_for("chat.update", 2, ch))[1]
    assert not blocks_of(collapsed, "rich_text")
    assert blocks_of(collapsed, "actions")[0]["elements"][0]["action_id"] == ACTION_SHOW_QUOTES


def test_show_quotes_of_many_long_citations_stays_within_slacks_total_text_limit(harness: Harness) -> None:
    """Eight 2,500-character paragraphs are far more text than Slack takes in one message (the fake refuses what
    Slack refuses): the quotes share the room, each trimmed with "…" and a link, and the ones that do not fit are
    listed as links, so the update is accepted and nothing is dropped."""
    ch = channel()
    answer_id = f"long-{uuid.uuid4().hex[:8]}"
    paragraph = "A household with a student may qualify when the student works twenty hours a week. "
    cited = [Citation(number=n, doc_id=f"kb/manual{n}", chunk_id=f"kb/manual{n}::0", sub_id=f"kb/manual{n}::0.0",
                      title=f"Policy manual {n}", heading_path=["Students"],
                      url=f"https://benefits.example.gov/manual{n}#:~:text=A%20household", page=None,
                      quote=f"({n}) " + paragraph * 30) for n in range(1, 9)]
    harness.bot.conversations.save_answer(AnswerRecord(
        answer_id=answer_id, conversation_key=conversation_key(ch, "1700000011.000001"), platform="slack",
        user="U0ALICE", question=STUDENTS, standalone=STUDENTS, answer="Yes, if they work 20 hours a week [1][2].",
        kind="answer", mood="concise", citations=cited, channel=ch))
    message = Call("chat.postMessage", {"ts": "1700000011.000100", "thread_ts": "1700000011.000001"}, None)
    harness.click(message, ch, "U0BOB", ACTION_SHOW_QUOTES, answer_id)
    update = harness.run(harness.fake.wait_for("chat.update", 1, ch))[0]
    harness.settle()
    assert update.result["ok"], update.result
    assert not harness.fake.of("chat.postMessage", ch), "no apology"
    shown = blocks_of(update, "rich_text")
    assert shown
    for block, citation in zip(shown, cited, strict=False):
        text, _, link = block["elements"][1]["elements"]
        assert text["text"].endswith("…") and citation.quote.startswith(text["text"][:-1])
        assert link["url"] == citation.url
    listed = [b["text"]["text"] for b in blocks_of(update, "section") if b["text"]["text"].startswith("+")]
    assert len(shown) == 8 or listed[0].startswith(f"+{8 - len(shown)} more source")
    for citation in cited[len(shown):]:
        assert f"<{citation.url}|[{citation.number}] {citation.title}>" in listed[0]


def test_show_quotes_of_an_unknown_answer_says_so_to_the_clicker(harness: Harness) -> None:
    ch = channel()
    message = Call("chat.postMessage", {"ts": "1700000008.000100", "thread_ts": "1700000008.000001"}, None)
    harness.click(message, ch, "U0BOB", ACTION_SHOW_QUOTES, "no-such-answer")
    note = harness.run(harness.fake.wait_for("chat.postEphemeral", 1, ch))[0]
    assert note.args["user"] == "U0BOB" and "can't find that answer" in note.args["text"]
    assert not harness.fake.of("chat.update", ch)


def test_feedback_is_stored_and_confirmed_to_the_clicker_only_and_a_thumbs_down_can_give_a_reason(
        harness: Harness) -> None:
    clicks: list[tuple[str, bool]] = []
    harness.bot.observers.add(SimpleNamespace(turn=lambda event: None, error=lambda kind, platform: None,
                                              feedback=lambda platform, helpful: clicks.append((platform, helpful))))
    ch = channel()
    _, reply = harness.mention(ch, STUDENTS)
    answer_id = answer_id_of(reply)
    status, _, _ = harness.click(reply, ch, "U0BOB", ACTION_FEEDBACK, f"helpful:{answer_id}", "feedback_buttons")
    assert status == 200
    thanks = harness.run(harness.fake.wait_for("chat.postEphemeral", 1, ch))[0]
    assert thanks.args["user"] == "U0BOB" and "👍" in thanks.args["text"]
    assert thanks.args["thread_ts"] == reply.args["thread_ts"]
    [stored] = harness.bot.conversations.feedback(answer_id)
    assert stored.helpful is True and stored.user == "U0BOB" and stored.reason is None

    harness.click(reply, ch, "U0BOB", ACTION_FEEDBACK, f"not_helpful:{answer_id}", "feedback_buttons")
    offer = harness.run(harness.fake.wait_for("chat.postEphemeral", 2, ch))[1]
    [stored] = harness.bot.conversations.feedback(answer_id)
    assert stored.helpful is False, "a second click updates the rating"
    button = blocks_of(offer, "actions")[0]["elements"][0]
    assert button["action_id"] == ACTION_REASON and button["value"] == answer_id

    harness.click(offer, ch, "U0BOB", ACTION_REASON, answer_id)
    opened = harness.run(harness.fake.wait_for("views.open"))[-1]
    view = opened.args["view"]
    assert view["callback_id"] == VIEW_REASON and json.loads(view["private_metadata"])["answer_id"] == answer_id
    status, body, _ = harness.interact({
        "type": "view_submission", "user": {"id": "U0BOB", "team_id": TEAM_ID},
        "view": {"id": "V0REASON", "type": "modal", "callback_id": VIEW_REASON, "private_metadata":
                 view["private_metadata"], "state": {"values": {REASON_BLOCK: {REASON_INPUT: {
                     "type": "plain_text_input", "value": "cited the wrong program"}}}}}})
    assert status == 200 and body == "", "an empty ack closes the modal"
    [stored] = harness.bot.conversations.feedback(answer_id)
    assert stored.helpful is False and stored.reason == "cited the wrong program"
    saved = harness.run(harness.fake.wait_for("chat.postEphemeral", 3, ch))[2]
    assert "reason is saved" in saved.args["text"]
    assert clicks == [("slack", True), ("slack", False)], "the reason form is not a third click (metrics, log)"


def test_feedback_on_an_unknown_answer_is_explained_and_a_reason_form_for_it_shows_the_error(
        harness: Harness) -> None:
    ch = channel()
    message = Call("chat.postMessage", {"ts": "1700000010.000100", "thread_ts": "1700000010.000001"}, None)
    harness.click(message, ch, "U0BOB", ACTION_FEEDBACK, "helpful:gone", "feedback_buttons")
    note = harness.run(harness.fake.wait_for("chat.postEphemeral", 1, ch))[0]
    assert "can't find that answer" in note.args["text"]
    status, body, _ = harness.interact({
        "type": "view_submission", "user": {"id": "U0BOB", "team_id": TEAM_ID},
        "view": {"id": "V0REASON", "type": "modal", "callback_id": VIEW_REASON,
                 "private_metadata": json.dumps({"answer_id": "gone", "channel": ch}),
                 "state": {"values": {REASON_BLOCK: {REASON_INPUT: {"type": "plain_text_input", "value": "x"}}}}}})
    assert status == 200
    answer = json.loads(body)
    assert answer["response_action"] == "errors" and "can't find that answer" in answer["errors"][REASON_BLOCK]


# --- the slash command ------------------------------------------------------------------------------------------

def test_slash_mood_kids_then_a_question_is_answered_in_that_mood(harness: Harness) -> None:
    ch = channel()
    response = harness.run(harness.fake.wait_for_response(harness.command(ch, "U0CAROL", "mood kids")))
    assert response["response_type"] == "ephemeral" and "Mood set to kids" in response["text"]
    _, reply = harness.mention(ch, STUDENTS, user="U0CAROL")
    assert blocks_of(reply, "context")[0]["elements"][0]["text"].startswith("mood: kids")
    _, other = harness.mention(ch, STUDENTS, user="U0DAVE")
    assert blocks_of(other, "context")[0]["elements"][0]["text"].startswith("mood: concise"), "per user"
    listing = harness.run(harness.fake.wait_for_response(harness.command(ch, "U0CAROL", "mood")))
    assert "▸ kids" in listing["text"]


def test_slash_reset_forgets_the_users_latest_thread_and_reset_in_a_thread_forgets_that_thread(
        harness: Harness) -> None:
    ch = channel()
    first, _ = harness.mention(ch, STUDENTS, user="U0ERIN")
    harness.mention(ch, "what if they work 20 hours a week?", user="U0ERIN", thread_ts=first)
    assert len(harness.bot.conversations.history(conversation_key(ch, first), 10)) == 2
    response = harness.run(harness.fake.wait_for_response(harness.command(ch, "U0ERIN", "reset")))
    assert response["text"].startswith("Done") and "2 earlier questions" in response["text"]
    assert harness.bot.conversations.history(conversation_key(ch, first), 10) == []

    second, _ = harness.mention(ch, STUDENTS, user="U0ERIN")
    _, done = harness.mention(ch, "reset", user="U0ERIN", thread_ts=second)
    assert done.args["text"].startswith("Done") and done.args["thread_ts"] == second
    assert harness.bot.conversations.history(conversation_key(ch, second), 10) == []

    nothing = harness.run(harness.fake.wait_for_response(harness.command(channel(), "U0ERIN", "reset")))
    assert "no conversation of yours" in nothing["text"]


def test_slash_ask_posts_the_question_in_the_channel_and_answers_in_its_thread(harness: Harness) -> None:
    ch = channel()
    harness.command(ch, "U0FRAN", f"ask {STUDENTS}")
    question, answer = harness.run(harness.fake.wait_for("chat.postMessage", 2, ch))
    assert "thread_ts" not in question.args and question.args["text"] == f"<@U0FRAN> asked: {STUDENTS}"
    assert answer.args["thread_ts"] and blocks_of(answer, "context_actions")
    record = harness.bot.conversations.get_answer(answer_id_of(answer))
    assert record is not None and record.conversation_key == conversation_key(ch, answer.args["thread_ts"])
    assert record.user == "U0FRAN"
    hostile = channel()  # Slack sends typed < > & escaped; echoed, they stay characters, never a ping or a link
    harness.command(hostile, "U0FRAN", "ask &lt;!channel&gt; &lt;https://evil.example|SNAP form&gt; &amp; more?")
    question, _ = harness.run(harness.fake.wait_for("chat.postMessage", 2, hostile))
    assert question.args["text"] == ("<@U0FRAN> asked: &lt;!channel&gt; &lt;https://evil.example|SNAP form&gt; "
                                     "&amp; more?")
    bare = channel()
    harness.command(bare, "U0FRAN", STUDENTS)  # without `ask`, words that are not a command are a question
    question, answer = harness.run(harness.fake.wait_for("chat.postMessage", 2, bare))
    assert question.args["text"].endswith(STUDENTS) and blocks_of(answer, "context_actions")


def test_slash_help_and_ask_problems_are_answered_privately(harness: Harness) -> None:
    ch = channel()
    help_text = harness.run(harness.fake.wait_for_response(harness.command(ch, "U0GIL", "help")))["text"]
    assert "/navibot ask" in help_text and "reset" in help_text
    empty = harness.run(harness.fake.wait_for_response(harness.command(ch, "U0GIL", "ask")))
    assert "Ask a question after `ask`" in empty["text"]
    harness.fake.fail_next("chat.postMessage", "not_in_channel")
    outside = harness.run(harness.fake.wait_for_response(harness.command(ch, "U0GIL", f"ask {STUDENTS}")))
    assert outside["text"] == NOT_IN_CHANNEL and outside["response_type"] == "ephemeral"
    harness.settle()
    assert len(harness.fake.of("chat.postMessage", ch)) == 1  # the refused one


def test_the_settings_leave_no_secret_in_reprs(harness: Harness) -> None:
    text = repr(harness.slack.settings) + str(harness.slack.settings.model_dump())
    assert "xoxb-test" not in text and SECRET not in text
