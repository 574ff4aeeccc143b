"""Slack's AI assistant pane ("Agents & AI Apps"): a navigator opens Navibot beside any channel and asks there.

Built on slack-bolt's `AsyncAssistant` middleware: `assistant_thread_started` greets and sets the suggested prompts
(the admin's list, or questions about the knowledge base's own topics, plus the typed commands); the first question
of a thread becomes its title; the answer itself goes through the same path as a direct message (the app's `ask`),
with the stage shown as the thread's status (adapters/slack/streaming.py).

Bolt routes every threaded direct message through this middleware, whether or not the workspace turned the pane
on. A thread is treated as an assistant thread only when this process saw it start; any other threaded DM is
answered exactly as a direct message always was (a reaction while working, the finished answer).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import AsyncSetSuggestedPrompts
from slack_bolt.context.set_title.async_set_title import AsyncSetTitle
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.slack.blocks import escape

log = logging.getLogger(__name__)

MAX_PROMPTS = 4  # Slack shows at most four suggested prompts
COMMAND_PROMPTS = [  # slash commands do not run in assistant threads: the typed commands do
    {"title": "What can you do?", "message": "help"},
    {"title": "Change the answer style", "message": "mood"},
    {"title": "Start a new topic", "message": "reset"},
]
PROMPTS_TITLE = "Try one of these"
GREETING = ("Hi, I'm Navibot. Ask me about benefits rules while you're on a call: I answer in plain words and quote "
            "the exact source paragraphs, or say honestly that I couldn't find it.")
TITLE_LIMIT = 80
THREADS_KEPT = 10_000

# (event, body, context, request, in an assistant thread) -> the answer is worked on in the background
Ask = Callable[[dict[str, Any], dict[str, Any], AsyncBoltContext, AsyncBoltRequest, bool], Awaitable[None]]
Questions = Callable[[], Awaitable[list[str]]]


def suggested_prompts(questions: list[str]) -> list[dict[str, str]]:
    """Questions first (as many as leave room for the three commands), then the commands."""
    room = max(MAX_PROMPTS - len(COMMAND_PROMPTS), 0)
    asked = [{"title": _short(q, 75), "message": q} for q in questions if q.strip()][:room]
    return [*asked, *COMMAND_PROMPTS][:MAX_PROMPTS]


def greeting(questions: list[str]) -> str:
    """The first message of a thread, in mrkdwn: what Navibot does, a few example questions, the typed commands."""
    examples = [f"• {escape(q)}" for q in questions[:3] if q.strip()]
    lines = [GREETING, *(["For example:", *examples] if examples else []),
             "Type `help`, `mood` or `reset` here at any time."]
    return "\n".join(lines)


def thread_title(question: str) -> str:
    return _short(" ".join(question.split()), TITLE_LIMIT)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class AssistantPane:
    """The assistant middleware and what it remembers: the threads started in the pane (most recent kept) and
    which of them already have a title."""

    def __init__(self, ask: Ask, questions: Questions, is_command: Callable[[str], bool]) -> None:
        self.ask = ask
        self.questions = questions
        self.is_command = is_command
        self._threads: OrderedDict[tuple[str, str], bool] = OrderedDict()  # (channel, thread) -> has a title
        self.middleware = AsyncAssistant(logger=log)
        self.middleware.thread_started(self._started)
        self.middleware.thread_context_changed(self._context_changed)
        self.middleware.user_message(self._user_message)

    def is_assistant_thread(self, channel: str, thread_ts: str) -> bool:
        return (channel, thread_ts) in self._threads

    def _remember(self, channel: str, thread_ts: str, titled: bool) -> None:
        self._threads[(channel, thread_ts)] = titled
        self._threads.move_to_end((channel, thread_ts))
        while len(self._threads) > THREADS_KEPT:
            self._threads.popitem(last=False)

    async def _started(self, event: dict[str, Any], say: AsyncSay,
                       set_suggested_prompts: AsyncSetSuggestedPrompts) -> None:
        thread = event.get("assistant_thread") or {}
        channel, thread_ts = str(thread.get("channel_id", "")), str(thread.get("thread_ts", ""))
        self._remember(channel, thread_ts, titled=False)
        try:
            questions = await self.questions()
        except Exception as exc:  # noqa: BLE001 - the commands and the greeting still help
            log.warning("slack: could not list suggested questions: %r", exc)
            questions = []
        try:
            await say(text=greeting(questions))
            await set_suggested_prompts(prompts=suggested_prompts(questions), title=PROMPTS_TITLE)
        except Exception as exc:  # noqa: BLE001 - the pane still takes questions without a greeting
            log.warning("slack: greeting the assistant thread failed: %r", exc)

    async def _context_changed(self) -> None:
        """The navigator moved to another channel beside the pane: answers do not depend on it (nothing kept)."""

    async def _user_message(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext,
                            request: AsyncBoltRequest, set_title: AsyncSetTitle) -> None:
        channel, thread_ts = str(event.get("channel", "")), str(event.get("thread_ts", ""))
        if event.get("subtype") or event.get("bot_id"):
            return
        pane = self._threads.get((channel, thread_ts))
        await self.ask(event, body, context, request, pane is not None)  # first: the answer's work starts now
        if pane is not None and not pane:
            text = str(event.get("text", "")).strip()
            if text and not self.is_command(text):
                self._remember(channel, thread_ts, titled=True)
                try:
                    await set_title(thread_title(text))
                except Exception as exc:  # noqa: BLE001 - an untitled thread still works
                    log.warning("slack: assistant.threads.setTitle failed: %r", exc)
