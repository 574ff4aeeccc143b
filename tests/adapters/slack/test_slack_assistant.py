"""End to end: the real Bolt app (HTTP mode) with the bot on the demo knowledge base, Gemini faked on 127.0.0.1
(streaming through the real google-genai client), Slack's Web API faked on 127.0.0.1 recording every call.

The assistant pane greets with suggested prompts, titles the thread from the first question, shows the stage as
the thread's status and streams the answer sentence by verified sentence (chat.startStream / appendStream /
stopStream with the quotes and buttons); the typed commands work there; nothing unverified is ever streamed."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
import uuid
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from pydantic import SecretStr

from adapters.slack.app import SlackApp
from adapters.slack.assistant import COMMAND_PROMPTS
from bot.config.settings import Settings
from bot.wiring.runtime import Bot, build_bot
from tests.fakes.fake_gemini_stream import FakeStreamingGemini
from tests.fakes.fake_models import PARAGRAPH, FakeGemini
from tests.fakes.fake_slack import BOT_USER_ID, TEAM_ID, Call, FakeSlack, serve_http

SECRET = "assistant-pane-signing-secret-0001"
USER = "U0NAVIGATOR"
QUESTION = "Can college students get SNAP?"
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


@dataclass
class Pane:
    loop: asyncio.AbstractEventLoop
    fake: FakeSlack
    slack: SlackApp
    gemini: FakeStreamingGemini
    url: str
    session: aiohttp.ClientSession

    def run[T](self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def event(self, event: dict[str, Any]) -> None:
        envelope = {"token": "legacy", "team_id": TEAM_ID, "api_app_id": "A0NAVI", "type": "event_callback",
                    "event": event, "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
                    "authorizations": [{"team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}]}
        self.post(json.dumps(envelope), "application/json")

    def post(self, body: str, content_type: str) -> None:
        ts = str(int(time.time()))
        digest = hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}",
                   "Content-Type": content_type}

        async def send() -> int:
            async with self.session.post(self.url, data=body.encode(), headers=headers) as response:
                return response.status
        assert self.run(send()) == 200

    def click(self, channel: str, message_ts: str, thread_ts: str, action_id: str, value: str) -> None:
        """A button under a message, as Slack posts the click (block_actions, form-encoded)."""
        payload = {"type": "block_actions", "team": {"id": TEAM_ID, "domain": "navi"}, "api_app_id": "A0NAVI",
                   "token": "legacy", "trigger_id": "1.1.abc", "user": {"id": USER, "team_id": TEAM_ID},
                   "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                                 "is_ephemeral": False, "thread_ts": thread_ts},
                   "channel": {"id": channel, "name": "directmessage"},
                   "message": {"type": "message", "ts": message_ts, "thread_ts": thread_ts},
                   "actions": [{"action_id": action_id, "block_id": "b1", "type": "button", "value": value,
                                "action_ts": str(time.time())}]}
        body = urlencode({"payload": json.dumps(payload)})
        self.post(body, "application/x-www-form-urlencoded")

    def start_thread(self) -> tuple[str, str]:
        channel, thread_ts = "D" + uuid.uuid4().hex[:9].upper(), f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
        self.event({"type": "assistant_thread_started", "event_ts": thread_ts, "assistant_thread": {
            "user_id": USER, "channel_id": channel, "thread_ts": thread_ts,
            "context": {"channel_id": "C0BENEFITS", "team_id": TEAM_ID, "enterprise_id": None}}})
        deadline = time.monotonic() + 10  # this thread greeted (not an earlier test's): the pane knows it now
        while not any(c.method == "assistant.threads.setSuggestedPrompts" for c in self.in_thread(channel)):
            assert time.monotonic() < deadline, f"thread {channel} was not greeted"
            time.sleep(0.01)
        return channel, thread_ts

    def ask(self, channel: str, thread_ts: str, text: str) -> None:
        """Sends the message and returns once its reply is out (a posted message or a closed stream)."""
        def replies() -> int:
            return len([c for c in self.in_thread(channel) if c.method in ("chat.postMessage", "chat.stopStream")])
        before = replies()
        ts = f"{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
        self.event({"type": "message", "channel": channel, "channel_type": "im", "user": USER, "text": text,
                    "ts": ts, "thread_ts": thread_ts, "event_ts": ts, "team": TEAM_ID})
        deadline = time.monotonic() + 30
        while replies() == before and time.monotonic() < deadline:
            time.sleep(0.02)
        self.run(self.slack.drain(20))

    def in_thread(self, channel: str) -> list[Call]:
        return [c for c in self.fake.calls if channel in (c.args.get("channel"), c.args.get("channel_id"))]


@pytest.fixture(scope="module")
def pane(demo_store: Path) -> Iterator[Pane]:
    gemini = FakeStreamingGemini()
    gemini.start()
    folder = demo_store.parent
    settings = Settings(_env_file=None, data_dir=folder, llm="gemini",  # type: ignore[call-arg]
                        gemini_api_keys=[SecretStr("test-key")], gemini_base_urls=[gemini.url])
    bot: Bot = build_bot(settings, demo_store, folder / "assistant-conversations.sqlite3")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    served = asyncio.run_coroutine_threadsafe(serve_http(bot, SECRET), loop).result(30)
    yield Pane(loop, served.fake, served.slack, gemini, served.url, served.session)
    asyncio.run_coroutine_threadsafe(served.stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    bot.close()
    gemini.stop()


@pytest.fixture(autouse=True)
def _fresh(pane: Pane) -> None:
    pane.gemini.reset()


def cited(body: dict[str, Any], which: int) -> tuple[str, str]:
    """(id, first sentence without its full stop) of the `which`-th most relevant paragraph in the prompt."""
    found = [(sub_id, text.strip().split(". ")[0].rstrip(".:")) for sub_id, text in
             PARAGRAPH.findall(FakeGemini.text_of(body)) if "&" not in text and "[" not in text]
    return found[::-1][which]


def test_the_pane_greets_with_prompts_from_the_knowledge_base_and_the_typed_commands(pane: Pane) -> None:
    channel, thread_ts = pane.start_thread()
    greeting = pane.run(pane.fake.wait_for("chat.postMessage", channel=channel))[0].args
    assert greeting["thread_ts"] == thread_ts and "Type `help`, `mood` or `reset`" in greeting["text"]
    prompts = next(c for c in pane.in_thread(channel) if c.method == "assistant.threads.setSuggestedPrompts").args
    assert prompts["thread_ts"] == thread_ts and len(prompts["prompts"]) == 4
    assert prompts["prompts"][1:] == COMMAND_PROMPTS
    assert prompts["prompts"][0]["message"].startswith("What should I know about ")


def test_a_question_in_the_pane_is_titled_shown_in_progress_and_streamed_with_buttons_at_the_end(pane: Pane) -> None:
    pane.gemini.stream_reply = lambda body: "{1} [{0}]. {3} [{2}].".format(*cited(body, 0), *cited(body, 1))
    channel, thread_ts = pane.start_thread()
    pane.ask(channel, thread_ts, QUESTION)
    calls = pane.in_thread(channel)
    methods = [c.method for c in calls]
    title = next(c for c in calls if c.method == "assistant.threads.setTitle").args
    assert (title["title"], title["thread_ts"]) == (QUESTION, thread_ts)
    statuses = [c.args["status"] for c in calls if c.method == "assistant.threads.setStatus"]
    assert statuses[0] == "Searching the SNAP rules…" and "Checking the quotes…" in statuses
    assert methods.index("assistant.threads.setStatus") < methods.index("chat.startStream")
    streamed = [m for m in methods if m in STREAM_METHODS]
    assert streamed[0] == "chat.startStream" and streamed[-1] == "chat.stopStream"
    assert len(streamed) >= 3  # the first sentence starts the stream, the second is appended, then the stop
    assert "reactions.add" not in methods  # the status shows work in the pane
    assert methods.count("chat.postMessage") == 1  # the greeting only: the answer is the streamed message
    stop = next(c for c in calls if c.method == "chat.stopStream")
    text = pane.fake.streamed(stop.args["ts"])
    assert text.count(r"\[1\]") == 1 and text.count(r"\[2\]") == 1
    kinds = [b["type"] for b in stop.args["blocks"]]
    assert "section" not in kinds[:1]  # the streamed text is the answer: no second copy of it in blocks
    assert "actions" in kinds and "context_actions" in kinds  # Show quotes, and 👍/👎, under the streamed text
    toggle = next(b for b in stop.args["blocks"] if b["type"] == "actions")["elements"][0]
    pane.click(channel, stop.args["ts"], thread_ts, toggle["action_id"], toggle["value"])
    [update] = pane.run(pane.fake.wait_for("chat.update", 1, channel))
    assert update.args["ts"] == stop.args["ts"]  # the streamed message opens in place to show its quotes
    assert [b for b in update.args["blocks"] if b["type"] == "rich_text"]


def test_a_second_sentence_citing_an_unretrieved_paragraph_is_never_streamed(pane: Pane) -> None:
    pane.gemini.stream_reply = lambda body: "{1} [{0}]. Call 1-900-555-0100 now [elsewhere::9.9].".format(
        *cited(body, 0))
    channel, thread_ts = pane.start_thread()
    pane.ask(channel, thread_ts, QUESTION)
    stop = next(c for c in pane.in_thread(channel) if c.method == "chat.stopStream")
    streamed = pane.fake.streamed(stop.args["ts"])
    assert streamed and "555-0100" not in streamed and "elsewhere" not in streamed
    assert all("555-0100" not in json.dumps(c.args) for c in pane.in_thread(channel))


def test_a_first_sentence_citing_an_unretrieved_paragraph_streams_nothing_and_posts_the_no_answer(
        pane: Pane) -> None:
    pane.gemini.stream_reply = lambda body: "Call 1-900-555-0100 now [elsewhere::9.9]. {1} [{0}].".format(
        *cited(body, 0))
    channel, thread_ts = pane.start_thread()
    pane.ask(channel, thread_ts, QUESTION)
    calls = pane.in_thread(channel)
    assert not [c for c in calls if c.method in STREAM_METHODS]
    answer = [c for c in calls if c.method == "chat.postMessage"][-1].args
    assert "couldn't find" in answer["text"] and "555-0100" not in json.dumps(answer)


def test_typed_commands_work_in_the_pane_and_do_not_title_it(pane: Pane) -> None:
    channel, thread_ts = pane.start_thread()
    pane.ask(channel, thread_ts, "help")
    pane.ask(channel, thread_ts, "mood")
    pane.ask(channel, thread_ts, "reset")
    posted = [c.args["text"] for c in pane.in_thread(channel) if c.method == "chat.postMessage"][1:]
    assert len(posted) == 3 and "reset" in posted[0] and "Mood" in posted[1] + posted[1].title()
    assert posted[2].startswith("Done: I forgot this conversation's history")
    assert not [c for c in pane.in_thread(channel) if c.method == "assistant.threads.setTitle"]


def test_a_threaded_dm_outside_the_pane_is_answered_as_before(pane: Pane) -> None:
    """Bolt routes every threaded DM through the assistant middleware: one not started in the pane gets the
    :eyes: reaction and no assistant calls, as a direct message always did."""
    channel = "D" + uuid.uuid4().hex[:9].upper()
    root = f"{int(time.time())}.000001"
    pane.ask(channel, root, QUESTION)
    methods = [c.method for c in pane.in_thread(channel)]
    assert "reactions.add" in methods
    assert not [m for m in methods if m.startswith("assistant.")]
