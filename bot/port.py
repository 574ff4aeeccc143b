"""What the chat platforms exchange with the bot: a `Turn` in, a `Reply` out. Adapters translate only these."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from rag.cite.rail import Citation


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
    def conversation_key(self) -> str:
        return "|".join((self.platform, self.workspace, self.channel, self.thread))

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
