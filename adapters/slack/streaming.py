"""An answer streamed into a Slack thread: the stage in words while it is worked out (the assistant pane's status),
then, when a language model writes it, each verified sentence as it comes (slack_sdk's `chat_stream` helper over
chat.startStream / appendStream / stopStream); the quotes and feedback buttons arrive with the final message.

The bot decides what is shown (rag/cite/sentence_rail.py passed every sentence); this module only carries it. Every
Slack call here is best effort: if a stream cannot start or breaks, the caller posts the finished answer as a
normal message (`finish` returns False), so nothing is lost.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import Block, Message

log = logging.getLogger(__name__)

LOADING_MESSAGES = ["Searching the knowledge base…", "Reading the sources…", "Writing a short answer…",
                    "Checking the quotes…"]  # rotated by Slack under the status while an answer is worked out
STREAM_BUFFER = 1  # characters: each verified sentence is sent at once (the sentences are the rail's batches)
_MARKDOWN = re.compile(r"([\\`*_~\[\]<>|#])")


def markdown_escape(text: str) -> str:
    """Answer text as chat streams take it (markdown_text): Markdown's control characters and Slack's <...> markup
    backslash-escaped, so a document or a model cannot format, link or mention anyone through it."""
    return _MARKDOWN.sub(r"\\\1", text)


def closing_blocks(message: Message) -> list[Block]:
    """The blocks that follow the answer text in `answer_message` (context line, quotes, buttons): what the final
    stopStream adds under the streamed text. The answer's own text blocks are the leading sections."""
    blocks = list(message.blocks or [])
    first = next((i for i, block in enumerate(blocks) if block.get("type") != "section"), len(blocks))
    return blocks[first:]


class SlackAnswerStream:
    """One answer's progress in one thread. `status` shows the stage (assistant threads only: elsewhere the :eyes:
    reaction shows work, as before); `sentence` streams verified text; `finish` ends the stream with the buttons."""

    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str, user: str, team: str,
                 assistant: bool = False, loading_messages: list[str] | None = None) -> None:
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.user = user
        self.team = team
        self.assistant = assistant
        self.loading_messages = loading_messages
        self._stream: AsyncChatStream | None = None
        self.broken = False  # a stream call failed: the finished answer goes out as a normal message
        self.streamed = ""  # what the navigator has seen of the answer

    async def status(self, words: str) -> None:
        if not self.assistant:
            return
        try:
            await self.client.assistant_threads_setStatus(channel_id=self.channel, thread_ts=self.thread_ts,
                                                          status=words, loading_messages=self.loading_messages)
        except Exception as exc:  # noqa: BLE001 - a status is a courtesy; the answer goes on
            log.warning("slack: assistant.threads.setStatus failed: %s", _why(exc))

    async def sentence(self, text: str) -> None:
        if self.broken or not text:
            return
        try:
            if self._stream is None:
                # In a DM the recipient is implied; in a channel thread Slack wants to know whose request it is.
                recipient: dict[str, Any] = {} if self.channel.startswith("D") else {
                    "recipient_user_id": self.user, "recipient_team_id": self.team}
                self._stream = await self.client.chat_stream(channel=self.channel, thread_ts=self.thread_ts,
                                                             buffer_size=STREAM_BUFFER, **recipient)
            await self._stream.append(markdown_text=markdown_escape(text))
            self.streamed += text
        except Exception as exc:  # noqa: BLE001 - the finished answer will be posted instead
            self.broken = True
            log.warning("slack: streaming the answer failed (%s); it will be posted when finished", _why(exc))

    async def finish(self, message: Message, answered: bool = True) -> bool:
        """True when the streamed message was closed with the answer's buttons (nothing more to post); False when
        nothing was streamed, the stream broke, or the turn did not end in an answer (`answered` False: an error
        after the stream began): the stream is closed as it is and the caller posts `message` as usual."""
        if self._stream is None:
            return False
        try:
            if not self.broken and answered:
                await self._stream.stop(blocks=closing_blocks(message))
                return True
            if self._stream.ts is not None:  # close what was shown; the whole answer follows as a normal message
                await self._stream.stop()
        except Exception as exc:  # noqa: BLE001 - posting the finished answer is the way out
            log.warning("slack: chat.stopStream failed (%s); posting the answer as a message", _why(exc))
        return False


def _why(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    error = response.get("error") if response is not None and hasattr(response, "get") else None
    return str(error or f"{type(exc).__name__}: {exc}")[:200]
