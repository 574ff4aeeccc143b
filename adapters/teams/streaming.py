"""An answer streamed in a Teams personal chat, through the Agents SDK's `StreamingResponse` (context.
streaming_response): an informative update with the stage ("Searching the SNAP rules…") at once, then the answer
sentence by verified sentence, ending with the card (quotes toggle, feedback) in the stream's final message.

Teams streams only in personal chats; in channels and group chats the adapter keeps the typing indicator and the
finished card. The SDK paces the updates (Teams takes about one a second) and merges text queued meanwhile.

What is streamed is message text, which Teams reads as Markdown: document and model text is escaped, except the
[n] markers, which Teams ties to the citations of the final message (the SDK's set_citations).
"""

from __future__ import annotations

import logging
import re

from microsoft_agents.activity import ActionTypes, CardAction, SuggestedActions
from microsoft_agents.hosting.core import Citation as StreamCitation
from microsoft_agents.hosting.core import TurnContext

from adapters.teams.citation_entities import MAX_CITATIONS
from adapters.teams.messages import AnswerParts, answer_message, reply_parts
from bot.port import Reply, ReplyKind

log = logging.getLogger(__name__)

CARD_HEADING = "Sources and feedback for this answer"
_MARKDOWN = re.compile(r"([\\`*_~\[\]#|])")
_MARKER = re.compile(r"\\\[(\d{1,3})\\\]")


def markdown_escape(text: str) -> str:
    """Text as Teams shows it in a message: Markdown's control characters backslash-escaped, &, <, > as entities
    (no HTML), and our [n] markers left as they are so Teams links them to their citations."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKER.sub(r"[\1]", _MARKDOWN.sub(r"\\\1", text))


def starter_actions(questions: list[str]) -> SuggestedActions | None:
    """Questions offered as buttons under the welcome (imBack: a tap sends the question as the user's message)."""
    actions = [CardAction(type=ActionTypes.im_back, title=q if len(q) <= 60 else q[:59] + "…", value=q)
               for q in questions if q.strip()]
    return SuggestedActions(actions=actions) if actions else None


def is_personal(context: TurnContext) -> bool:
    conversation = context.activity.conversation
    return bool(conversation and conversation.conversation_type == "personal")


class TeamsAnswerStream:
    """One turn's progress in a personal chat. Nothing is sent until the bot reports something; `finish` closes
    the stream with the reply (True), or says that nothing was streamed (False: send the reply as usual)."""

    def __init__(self, context: TurnContext) -> None:
        self.response = context.streaming_response
        self.used = False  # the SDK started a stream (informative update or text): it must end with the reply
        self.streamed = ""  # the answer text shown so far

    async def status(self, words: str) -> None:
        if self.streamed:  # once text streams, an informative update no longer shows
            return
        self.response.queue_informative_update(words)
        self.used = True

    async def sentence(self, text: str) -> None:
        self.response.queue_text_chunk(markdown_escape(text))
        self.streamed += text
        self.used = True

    async def finish(self, reply: Reply) -> bool:
        """Ends the stream with the reply: its text (the streamed answer, or the whole reply when nothing streamed)
        and, for an answer or no-answer, the card with the quotes toggle and feedback buttons."""
        if not self.used:
            return False
        try:
            await self._end(reply)
        except Exception as exc:  # noqa: BLE001 - the reply then goes out as a normal message: nothing is lost
            log.warning("teams: ending the stream failed (%s: %s); sending the reply as a message",
                        type(exc).__name__, str(exc)[:200])
            return False
        return True

    async def _end(self, reply: Reply) -> None:
        if not self.streamed:  # the offline answer, a no-answer: the text arrives whole
            self.response.queue_text_chunk(markdown_escape(reply.text))
        elif reply.kind not in (ReplyKind.ANSWER, ReplyKind.NO_ANSWER):  # an error after the answer began
            self.response.queue_text_chunk("\n\n" + markdown_escape(reply.text))
        if reply.kind in (ReplyKind.ANSWER, ReplyKind.NO_ANSWER):
            parts = reply_parts(reply)
            # The card under the streamed text holds what the text does not: the quotes toggle and the feedback
            # buttons (the answer itself is the message text above it; the citations are the SDK's, set below).
            card = answer_message(AnswerParts(CARD_HEADING, parts.citations, parts.answer_id, parts.mood,
                                              labelled=False), citations=False)
            self.response.set_attachments(list(card.attachments or []))
        if reply.kind is ReplyKind.ANSWER and reply.citations:
            self.response.set_citations([StreamCitation(content=c.quote, title=c.title, url=c.url)
                                         for c in reply.citations[:MAX_CITATIONS]])
            self.response.set_generated_by_ai_label(True)
        await self.response.end_stream()
