"""The one door between the chat platforms and the bot: the `ChatBot` protocol and the values that pass through it.

Adapters (adapters/slack, adapters/teams) import from bot/ only this module (and bot.errors for their settings):
a `Turn` in, a `Reply` out, a `Vote` for feedback, a `StoredAnswer` to re-render a message after a click. What
is behind the door (the turn handler, the stores, the observers, the moods, the settings) is the bot's own
business; `bot.wiring.runtime.Bot` implements the protocol. Layers checked by import-linter (pyproject.toml).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from rag.cite.rail import Citation

__all__ = ["Chat", "ChatBot", "Citation", "FeedbackError", "Reply", "ReplyKind", "StoredAnswer", "Turn", "TurnProgress",
           "Vote"]


class FeedbackError(ValueError):
    """Feedback that cannot be recorded (unknown answer id, an answer of another chat, a bad reason, the store out
    of reach); the message is written for the navigator and can be shown as is."""


@dataclass(frozen=True, slots=True)
class Chat:
    """Where a conversation happens: a thread (or reply chain) of a channel (a DM is its own channel)."""

    platform: str  # "slack", "teams", "cli"
    workspace: str  # Slack team id / Teams tenant id
    channel: str
    thread: str

    @property
    def key(self) -> str:
        """The conversation stores' index value for this chat's history. Built here only, and never parsed: the
        stores keep `platform` and `channel` of an answer as fields of their own."""
        return "|".join((self.platform, self.workspace, self.channel, self.thread))


@dataclass(frozen=True, slots=True)
class Turn:
    """One message to the bot. `thread` is the thread (or reply chain) id; a DM is its own channel."""

    platform: str  # "slack", "teams", "cli"
    workspace: str  # Slack team id / Teams tenant id
    channel: str
    thread: str
    user: str
    text: str
    event_id: str | None = None  # the platform's id of the delivery, to answer a redelivered event once
    team: str = ""  # Teams: the team of a channel conversation (access groups are granted per team); else empty

    @property
    def chat(self) -> Chat:
        return Chat(self.platform, self.workspace, self.channel, self.thread)

    @property
    def conversation_key(self) -> str:
        return self.chat.key

    @property
    def preference_key(self) -> str:
        """Moods are chosen per user in a channel."""
        return "|".join((self.platform, self.workspace, self.channel, self.user))


class ReplyKind(StrEnum):
    ANSWER = "answer"
    NO_ANSWER = "no_answer"
    COMMAND = "command"  # result of reset / mood / help, and friendly replies to greetings and thanks
    ERROR = "error"
    DUPLICATE = "duplicate"  # a redelivered event already answered: adapters post nothing


@dataclass(slots=True)
class Reply:
    kind: ReplyKind
    text: str
    citations: list[Citation] = field(default_factory=list)
    mood: str | None = None
    answer_id: str | None = None  # feedback refers to it; set on answers and no-answers
    standalone_question: str | None = None
    trace_id: str | None = None  # also in the log line of the turn; shown in error replies
    timings_ms: dict[str, float] = field(default_factory=dict)  # per stage: rewrite, retrieve, rerank, generate, total
    fallbacks: list[str] = field(default_factory=list)  # "stage: cause" for each model stage that fell back

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["kind"] = self.kind.value
        return data


@dataclass(frozen=True, slots=True)
class Vote:
    """A 👍 or 👎 on an answer, clicked in `chat`: the answer must have been given in that chat (its id comes back
    from the client). `click=False` when the call only adds the reason to a rating already counted (Slack's reason
    form after a 👎): not a second click for the metrics."""

    answer_id: str
    user: str
    helpful: bool
    chat: Chat
    reason: str | None = None
    click: bool = True


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """An answer as it was given, to render its message again (a button click): citations already as values."""

    answer_id: str
    question: str  # blank once the retention or `reset` removed it (an unrated answer)
    standalone: str  # the question as the bot understood it (rewritten with the conversation)
    answer: str
    kind: str  # "answer" or "no_answer"
    mood: str
    citations: tuple[Citation, ...] = ()


class TurnProgress(Protocol):
    """What an adapter shows while a question is answered: the stage in words, then, when a language model writes
    the answer, each sentence once the citation rail passed it (rag/cite/sentence_rail.py). Reports arrive in
    order, on the adapter's event loop, before `handle` returns; a report that raises is logged and skipped."""

    async def status(self, words: str) -> None:
        """The stage the answer is at, in words ("Searching the SNAP rules…"); replaces the previous one."""
        ...

    async def sentence(self, text: str) -> None:
        """The next verified sentence(s) of a streamed answer, to append to what is shown."""
        ...


class ChatBot(Protocol):
    """What a chat adapter may ask of the bot. Implemented by bot.wiring.runtime.Bot (delegating to the turn
    handler, the conversation store, the observers and the moods); a test may drive an adapter with a fake."""

    @property
    def max_reason_chars(self) -> int:
        """The longest feedback reason accepted (the reason form's limit)."""
        ...

    async def handle(self, turn: Turn, mood_override: str | None = None,
                     progress: TurnProgress | None = None) -> Reply:
        """Answers a turn (a question or a chat command). Never raises: a failure is an ERROR reply with a trace id.
        A redelivered event already answered or being answered is a DUPLICATE reply: post nothing. With `progress`,
        a question's stages and streamed sentences are reported to it; the reply's text is then what was streamed."""
        ...

    async def suggested_questions(self) -> list[str]:
        """Questions to offer a navigator who starts a conversation (the admin's list, or the knowledge base's
        public topics): Slack's assistant-pane prompts, Teams' suggested actions."""
        ...

    async def reply_posted(self, turn: Turn) -> None:
        """The reply to `turn` is out: its event is answered for good (a redelivery is dropped). Never raises."""
        ...

    async def reply_not_posted(self, turn: Turn) -> None:
        """The reply to `turn` could not be posted: a redelivery of its event is answered. Never raises."""
        ...

    async def record_feedback(self, vote: Vote) -> None:
        """One rating per user and answer (clicking again updates it). Raises FeedbackError (a message to show)."""
        ...

    async def stored_answer(self, answer_id: str, chat: Chat) -> StoredAnswer | None:
        """The answer with this id, only when it was given in `chat` (same platform and channel); else None."""
        ...

    def report_error(self, kind: str | None, platform: str, exc: BaseException | None = None) -> None:
        """Counts a failure outside a turn for the metrics and /healthz: `kind` when the adapter knows it
        ("bad_request", "slack_api", "teams_send"), else the kind of `exc` as the bot sees it (its conversation
        or knowledge store, a full disk, or "internal"). The adapter logs the failure itself."""
        ...

    def help_text(self) -> str:
        """What the bot does and its chat commands (the `help` command's reply)."""
        ...

    def is_chat_command(self, text: str) -> bool:
        """True when the whole text is a chat command (reset, mood, help); else it is a question."""
        ...

    def known_mood(self, name: str | None) -> str | None:
        """The mood's canonical name when it is one the bot knows; None otherwise (text from a client)."""
        ...
