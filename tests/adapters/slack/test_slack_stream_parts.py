"""The parts of the assistant pane and of streamed answers, against the local fake Slack with the real
AsyncWebClient (slack_sdk's chat_stream helper): the end-to-end path is in test_slack_assistant.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.assistant import COMMAND_PROMPTS, MAX_PROMPTS, greeting, suggested_prompts, thread_title
from adapters.slack.blocks import AnswerView, Message, answer_message
from adapters.slack.streaming import SlackAnswerStream, closing_blocks, markdown_escape
from bot.port import Citation
from tests.fakes.fake_slack import FakeSlack

ANSWER_BLOCKS: list[dict[str, Any]] = [
    {"type": "section", "text": {"type": "mrkdwn", "text": "Students need 20 hours. [1]"}},
                 {"type": "context", "elements": [{"type": "mrkdwn", "text": "1 source"}]},
                 {"type": "actions", "elements": [{"type": "button", "action_id": "x", "value": "a",
                                                   "text": {"type": "plain_text", "text": "Show quotes"}}]}]


def run[T](work: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(work)


async def with_fake(body: Any) -> None:
    fake = FakeSlack()
    await fake.start()
    try:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.api_url)
        await body(fake, client)
    finally:
        await fake.stop()


def test_prompts_keep_the_three_commands_within_slacks_four() -> None:
    prompts = suggested_prompts(["Can college students get SNAP?", "Who can get WIC?"])
    assert len(prompts) == MAX_PROMPTS and prompts[1:] == COMMAND_PROMPTS
    assert prompts[0] == {"title": "Can college students get SNAP?", "message": "Can college students get SNAP?"}
    assert suggested_prompts([]) == COMMAND_PROMPTS


def test_the_greeting_escapes_questions_and_names_the_typed_commands() -> None:
    text = greeting(["What about <!channel> & co?"])
    assert "&lt;!channel&gt; &amp; co?" in text and "<!channel>" not in text
    assert "`help`, `mood` or `reset`" in text
    assert thread_title("  Can   college students\nget SNAP? " + "x" * 200).startswith("Can college students get SNAP?")
    assert len(thread_title("x" * 500)) == 80


def test_markdown_in_streamed_text_cannot_format_link_or_mention() -> None:
    assert markdown_escape("*bold* <@U123> [x](http://e.vil) # h") == r"\*bold\* \<@U123\> \[x\](http://e.vil) \# h"


def test_sentences_stream_and_the_buttons_close_the_stream() -> None:
    async def body(fake: FakeSlack, client: AsyncWebClient) -> None:
        stream = SlackAnswerStream(client, "C0CHAN", "1.000001", "U0ALICE", "T0NAVI", assistant=True,
                                   loading_messages=["Reading…"])
        await stream.status("Searching the SNAP rules…")
        await stream.sentence("Students need 20 hours a week [1]. ")
        await stream.sentence("Work study counts [2].")
        assert await stream.finish(Message("fallback", ANSWER_BLOCKS)) is True
        status = fake.of("assistant.threads.setStatus")[0].args
        assert status["status"] == "Searching the SNAP rules…" and status["loading_messages"] == ["Reading…"]
        assert [c.method for c in fake.calls if "Stream" in c.method] == [
            "chat.startStream", "chat.appendStream", "chat.stopStream"]
        start = fake.of("chat.startStream")[0].args
        assert (start["recipient_user_id"], start["recipient_team_id"], start["thread_ts"]) == (
            "U0ALICE", "T0NAVI", "1.000001")
        ts = fake.of("chat.stopStream")[0].args["ts"]
        assert fake.streamed(ts) == r"Students need 20 hours a week \[1\]. Work study counts \[2\]."
        assert fake.of("chat.stopStream")[0].args["blocks"] == closing_blocks(Message("", ANSWER_BLOCKS))
        assert closing_blocks(Message("", ANSWER_BLOCKS)) == ANSWER_BLOCKS[1:]
    run(with_fake(body))


def test_outside_the_pane_no_status_and_a_refused_stream_leaves_the_answer_to_a_normal_post() -> None:
    async def body(fake: FakeSlack, client: AsyncWebClient) -> None:
        fake.fail_next("chat.startStream", "not_allowed")
        stream = SlackAnswerStream(client, "C0CHAN", "1.000001", "U0ALICE", "T0NAVI")
        await stream.status("Searching…")
        await stream.sentence("Students need 20 hours a week [1]. ")
        assert stream.broken and await stream.finish(Message("fallback", ANSWER_BLOCKS)) is False
        assert fake.of("assistant.threads.setStatus") == [] and fake.of("chat.stopStream") == []
        nothing = SlackAnswerStream(client, "D0DM", "1.000002", "U0ALICE", "T0NAVI")
        assert await nothing.finish(Message("fallback", ANSWER_BLOCKS)) is False  # nothing streamed
    run(with_fake(body))


def test_in_a_dm_the_stream_needs_no_recipient() -> None:
    async def body(fake: FakeSlack, client: AsyncWebClient) -> None:
        stream = SlackAnswerStream(client, "D0DM", "1.000003", "U0ALICE", "T0NAVI")
        await stream.sentence("Students need 20 hours a week [1].")
        assert await stream.finish(Message("fallback", ANSWER_BLOCKS))
        assert "recipient_user_id" not in fake.of("chat.startStream")[0].args
    run(with_fake(body))


SLACK_TYPES = Path(__file__).parents[2] / "node"


@pytest.mark.skipif(not (SLACK_TYPES / "node_modules" / "@slack" / "types").is_dir(),
                    reason="run `npm ci --prefix tests/node` (as .ci/run does) for the official @slack/types check")
def test_what_a_stream_sends_type_checks_against_the_official_slack_types() -> None:
    """The chunks sent by chat.startStream/appendStream/stopStream and the blocks that close the stream (of a real
    answer message, hostile text included), as TypeScript literals typed with @slack/types under tsc --strict."""
    citation = Citation(1, "d", "d::0", "d::0.0", "<!here> *title*", ["H"], "https://example.org/a", None,
                        "Quote with <@U123> and `code`")
    message = answer_message(AnswerView("a1", "Students need 20 hours [1].", "concise", [citation], "q", "q"))

    sent: dict[str, Any] = {}

    async def body(fake: FakeSlack, client: AsyncWebClient) -> None:
        stream = SlackAnswerStream(client, "C0CHAN", "1.000009", "U0ALICE", "T0NAVI")
        await stream.sentence("Work *20* hours <!channel> [1]. ")
        await stream.sentence("Then `report` it.")
        assert await stream.finish(message)
        sent["chunks"] = [c for call in fake.calls if call.method.endswith("Stream")
                          for c in call.args.get("chunks") or []]
        sent["closing"] = fake.of("chat.stopStream")[0].args["blocks"]
    run(with_fake(body))
    source = SLACK_TYPES / f"navibot_stream_{uuid.uuid4().hex[:8]}.ts"
    source.write_text('import type { KnownBlock, MarkdownTextChunk } from "@slack/types";\n'
                      f"export const chunks: MarkdownTextChunk[] = {json.dumps(sent['chunks'])};\n"
                      f"export const closing: KnownBlock[] = {json.dumps(sent['closing'])};\n", encoding="utf-8")
    try:
        done = subprocess.run([str(SLACK_TYPES / "node_modules" / ".bin" / "tsc"), "--strict", "--noEmit",
                               "--target", "es2022", "--module", "nodenext", str(source)], cwd=SLACK_TYPES,
                              capture_output=True, text=True, timeout=300, check=False)
    finally:
        source.unlink()
    assert len(sent["chunks"]) == 2 and done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_an_error_after_the_stream_began_closes_it_and_leaves_the_apology_to_a_normal_post() -> None:
    async def body(fake: FakeSlack, client: AsyncWebClient) -> None:
        stream = SlackAnswerStream(client, "C0CHAN", "1.000010", "U0ALICE", "T0NAVI")
        await stream.sentence("Students need 20 hours a week [1]. ")
        assert await stream.finish(Message("Sorry, something went wrong (trace id x).", []), answered=False) is False
        (stop,) = fake.of("chat.stopStream")
        assert stop.args.get("blocks") is None  # closed as it was: no buttons for an answer that was not saved
    run(with_fake(body))
