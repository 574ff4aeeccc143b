"""The turn handler: everything between a platform's event and its rendered reply, whatever the platform.

Commands, history, moods, the answer engine, saving the turn, feedback. Adapters reach it only through the
`ChatBot` protocol of bot/port.py (bot.wiring.runtime.Bot delegates here); they never touch retrieval or the stores.

A turn with an event id claims it first (a redelivery of an event being answered or answered is dropped); the
claim is released when the turn fails, and completed by the adapter through `reply_posted` once the reply is
out, so a question cut short by a crash or a failed post is answered when it comes again, and only once.
"""

from __future__ import annotations

import errno
import logging
import sqlite3
import time
import uuid
from collections.abc import Callable

from bot.chat.chat_commands import HELP, parse_command
from bot.conversations.store import AnswerRecord, ConversationStore, FeedbackRecord, HistoryTurn, UnknownAnswer
from bot.observability.observers import Observers, TurnEvent, current_trace
from bot.port import Chat, FeedbackError, Reply, ReplyKind, StoredAnswer, Turn
from rag.answer.moods import MoodBook
from rag.answer.progress import AnswerProgress
from rag.answer.rewrite import Exchange
from rag.engine import Engine

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 2000
STORE_DOWN = ("Sorry, my conversation store is not responding, so I could not answer this one. Please try again in "
              "a minute; if it keeps happening, tell your admin (trace id {trace}).")
DISK_FULL = ("Sorry, the disk of my conversation store is full, so I could not answer this one (an answer I cannot "
             "save is not sent). Please tell your admin that the disk needs space (trace id {trace}).")
KNOWLEDGE_DOWN = ("Sorry, my knowledge store (the documents I quote) could not be read, so I could not answer this "
                  "one. Please tell your admin (trace id {trace}).")
INTERNAL = "Sorry, something went wrong on my side. Please try again in a moment (trace id {trace})."
FAILURE_REPLIES = {"store": STORE_DOWN, "disk_full": DISK_FULL, "knowledge_store": KNOWLEDGE_DOWN}
MONGO_OUT_OF_DISK = 14031  # MongoDB's OutOfDiskSpace error code


GroupsFor = Callable[[Turn], list[str] | None]  # the access groups a turn's channel may see; None: no limit


class KnowledgeStoreError(RuntimeError):
    """Reading the knowledge store failed during a turn (a damaged file, MongoDB lost): not the conversation
    store, which the other store errors of a turn are."""


def is_store_error(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.Error) or type(exc).__module__.startswith(("pymongo", "bson"))


def is_disk_full(exc: BaseException) -> bool:
    """A write refused for lack of space: SQLITE_FULL, ENOSPC, or MongoDB's OutOfDiskSpace."""
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
    if isinstance(exc, OSError):
        return exc.errno == errno.ENOSPC
    return is_store_error(exc) and getattr(exc, "code", None) == MONGO_OUT_OF_DISK


def error_kind(exc: BaseException) -> str:
    """The kind of a failed turn, for the metrics and /healthz: the knowledge store, a full disk, the
    conversation store ("store": SQLite, MongoDB), or anything else."""
    if isinstance(exc, KnowledgeStoreError):
        return "knowledge_store"
    if is_disk_full(exc):
        return "disk_full"
    if is_store_error(exc):
        return "store"
    return "internal"


class TurnHandler:
    def __init__(self, engine: Engine, conversations: ConversationStore, moods: MoodBook, history_turns: int = 6,
                 max_question_chars: int = 4000, observers: Observers | None = None,
                 groups_for: GroupsFor | None = None) -> None:
        self.engine = engine
        self.conversations = conversations
        self.moods = moods
        self.history_turns = history_turns
        self.max_question_chars = max_question_chars
        self.observers = observers if observers is not None else Observers()
        self.groups_for = groups_for

    def handle(self, turn: Turn, mood_override: str | None = None, progress: AnswerProgress | None = None) -> Reply:
        """Never raises: a failure becomes an error reply with a trace id that is also in the log. Every turn is
        reported to the observers (metrics, the per-turn log line) with its trace id."""
        trace = uuid.uuid4().hex[:12]
        token = current_trace.set(trace)
        started = time.perf_counter()
        groups: list[str] | None = None
        error: str | None = None
        claimed = False
        try:
            if turn.event_id and not (claimed := self.conversations.claim_event(turn.platform, turn.event_id)):
                reply = Reply(ReplyKind.DUPLICATE, "")
            else:
                groups = self.groups_for(turn) if self.groups_for is not None else None
                reply = self._handle(turn, mood_override, groups, progress)
                if reply.kind is ReplyKind.ERROR:
                    error = "too_long"
        except Exception as exc:
            error = error_kind(exc)
            log.exception("turn failed (trace %s, conversation %s): %s", trace, turn.chat.key,
                          "the disk is full" if error == "disk_full" else error.replace("_", " "))
            reply = Reply(ReplyKind.ERROR, FAILURE_REPLIES.get(error, INTERNAL).format(trace=trace))
            if claimed:  # not answered: a redelivery or retry of this event must be answered
                self.reply_not_posted(turn)
        finally:
            current_trace.reset(token)
        reply.trace_id = trace
        if "total" not in reply.timings_ms:
            reply.timings_ms["total"] = (time.perf_counter() - started) * 1000
        self.observers.turn(TurnEvent(
            trace_id=trace, platform=turn.platform, kind=reply.kind.value, question=turn.text,
            timings_ms=dict(reply.timings_ms), fallbacks=list(reply.fallbacks), citations=len(reply.citations),
            answer_id=reply.answer_id, mood=reply.mood, groups=list(groups or []), error=error))
        return reply

    def _handle(self, turn: Turn, mood_override: str | None, groups: list[str] | None,
                progress: AnswerProgress | None = None) -> Reply:
        text = turn.text.strip()
        if not text:
            return Reply(ReplyKind.COMMAND, HELP)
        if len(text) > self.max_question_chars:
            return Reply(ReplyKind.ERROR,
                         f"That message is {len(text):,} characters long; I can take questions of up to "
                         f"{self.max_question_chars:,}. Please ask one short question at a time.")
        command = parse_command(text)
        if command is not None:
            return self._command(turn, command.name, command.argument)
        mood = self.moods.resolve(mood_override or self.conversations.get_mood(turn.preference_key))
        history = self.conversations.history(turn.chat.key, self.history_turns)
        try:  # the engine reads only the knowledge store: a store error in here is the knowledge store's
            earlier = [Exchange(h.question, h.answer, h.standalone, tuple(h.cited_ids)) for h in history]
            outcome = self.engine.answer(text, earlier, mood, groups=groups, progress=progress)
        except Exception as exc:
            if is_store_error(exc):
                raise KnowledgeStoreError(f"knowledge store: {exc}") from exc
            raise
        if outcome.kind == "smalltalk":
            return Reply(ReplyKind.COMMAND, outcome.text, mood=mood.name)
        kind = ReplyKind.ANSWER if outcome.kind == "answer" else ReplyKind.NO_ANSWER
        answer_id = uuid.uuid4().hex
        # Saved before the reply goes out: feedback on it and the next follow-up can rely on it.
        self.conversations.save_answer(AnswerRecord(
            answer_id=answer_id, conversation_key=turn.chat.key, platform=turn.platform, channel=turn.channel,
            user=turn.user, question=text, standalone=outcome.standalone, answer=outcome.text, kind=kind.value,
            mood=mood.name, citations=outcome.citations, latency_ms=round(outcome.timings_ms.get("total", 0.0), 1)))
        if kind is ReplyKind.ANSWER:  # a no-answer is not context for the next question
            self.conversations.append_turn(turn.chat.key, HistoryTurn(
                text, outcome.standalone, outcome.answer, [c.sub_id for c in outcome.citations]),
                keep=self.history_turns)
        return Reply(kind, outcome.text, outcome.citations, mood.name, answer_id, outcome.standalone,
                     timings_ms=dict(outcome.timings_ms), fallbacks=list(outcome.fallbacks))

    def _command(self, turn: Turn, name: str, argument: str | None) -> Reply:
        if name == "help":
            return Reply(ReplyKind.COMMAND, HELP)
        if name == "reset":
            removed = self.conversations.clear_history(turn.chat.key)
            return Reply(ReplyKind.COMMAND, "Done: I forgot this conversation's history "
                                            f"({removed} earlier question{'s' if removed != 1 else ''}). "
                                            "The next question starts fresh.")
        current = self.conversations.get_mood(turn.preference_key)
        if argument is None:
            return Reply(ReplyKind.COMMAND, self.moods.listing(current), mood=self.moods.resolve(current).name)
        mood = self.moods.get(argument)
        if mood is None:
            return Reply(ReplyKind.COMMAND, f"I don't know the mood {argument!r}.\n{self.moods.listing(current)}",
                         mood=self.moods.resolve(current).name)
        self.conversations.set_mood(turn.preference_key, mood.name)
        return Reply(ReplyKind.COMMAND, f"Mood set to {mood.name}: {mood.description} "
                                        "(for you, in this channel).", mood=mood.name)

    def reply_posted(self, turn: Turn) -> None:
        """The adapter posted the reply to this turn: its event is answered for good. Never raises (the answer is
        out; a failure here is a warning, and at worst a redelivery is answered again once its lease is over)."""
        self._settle(turn, "completing", self.conversations.complete_event)

    def reply_not_posted(self, turn: Turn) -> None:
        """The turn failed or its reply could not be posted: a redelivery or retry of its event is answered."""
        self._settle(turn, "releasing", self.conversations.release_event)

    def _settle(self, turn: Turn, doing: str, call: Callable[[str, str], None]) -> None:
        if not turn.event_id:
            return
        try:
            call(turn.platform, turn.event_id)
        except Exception as exc:  # noqa: BLE001 - see reply_posted
            log.warning("%s event %s failed: %s", doing, turn.event_id, exc)

    def answer_in_chat(self, answer_id: str, chat: Chat) -> AnswerRecord | None:
        """A stored answer, only when it was given in this chat (same platform and channel). A button's answer id
        comes back from the client: without this check a click could render another chat's answer, with quotes it
        may not see. An answer whose channel is unknown is given in no chat."""
        record = self.conversations.get_answer(answer_id)
        if record is None or not record.channel:
            return None
        return record if (record.platform, record.channel) == (chat.platform, chat.channel) else None

    def stored_answer(self, answer_id: str, chat: Chat) -> StoredAnswer | None:
        """`answer_in_chat` as the adapters see it (bot.port.StoredAnswer)."""
        record = self.answer_in_chat(answer_id, chat)
        if record is None:
            return None
        return StoredAnswer(record.answer_id, record.question, record.standalone, record.answer, record.kind,
                            record.mood, tuple(record.citations))

    def record_feedback(self, answer_id: str, user: str, helpful: bool, reason: str | None = None,
                        chat: Chat | None = None, click: bool = True) -> FeedbackRecord:
        """One rating per user and answer; clicking again updates it. Raises FeedbackError with a clear message.
        With `chat` the answer must have been given in that chat. `click=False` when the call only adds the reason
        to a rating already counted (Slack's reason form after a 👎): not a second click."""
        reason = (reason or "").strip() or None
        if reason and len(reason) > MAX_REASON_CHARS:
            raise FeedbackError(f"The reason is too long ({len(reason):,} characters; at most "
                                f"{MAX_REASON_CHARS:,}).")
        if chat is not None and self.answer_in_chat(answer_id, chat) is None:
            raise FeedbackError("I can't find that answer in this chat, so the rating was not saved "
                                f"(answer id {answer_id!r}).")
        try:
            record = self.conversations.record_feedback(answer_id, user, helpful, reason)
        except UnknownAnswer as exc:
            raise FeedbackError("I can't find that answer any more, so the rating was not saved "
                                f"(answer id {answer_id!r}).") from exc
        if click:
            self.observers.feedback(record.platform, helpful)
        return record
