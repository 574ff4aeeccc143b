"""The conversation store on MongoDB (history, mood preferences, event ids, answers, feedback), and the wrapper
that keeps a turn answerable when MongoDB is lost mid-conversation.

Collections: `history` (TTL on `created`, capped per conversation by the writer), `preferences` (_id = key),
`events` (unique on platform + event id, short TTL), `answers` (_id = answer id) and `feedback` (unique on
answer + user). Answers and feedback have no TTL: they are the record of what navigators were told; but an
answer no one rated loses its question text after the retention (and on `reset`), as in the SQLite store.

An event is claimed with a lease ('claimed', owner, lease_until), completed ('done') when the reply is posted and
released when the turn fails. A claim whose lease ran out is taken over, and so is one made on this host by a
process that is gone (bot/conversations/event_owners.py: a restarted server answers a redelivery at once); the
owner of a claim made on another host cannot be asked, so only its lease frees it. Events of older versions have no
status: they were answered.
"""

from __future__ import annotations

import logging
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from bson import ObjectId
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import (
    ConnectionFailure,
    DuplicateKeyError,
    OperationFailure,
    PyMongoError,
)

from bot.conversations.event_owners import OwnerLocks
from bot.conversations.store import (
    EVENT_LEASE_SECONDS,
    AnswerRecord,
    ConversationStore,
    FeedbackRecord,
    HistoryTurn,
    RetentionSchedule,
    UnknownAnswer,
    channel_of_key,
)
from bot.port import FeedbackError
from rag.cite.rail import Citation
from rag.mongo.config import MongoConfig, MongoUnavailable
from rag.mongo.connection import MongoConnection

log = logging.getLogger(__name__)
T = TypeVar("T")

HISTORY, PREFERENCES, EVENTS, ANSWERS, FEEDBACK = "history", "preferences", "events", "answers", "feedback"
HISTORY_TTL, EVENTS_TTL = "history_ttl", "events_ttl"
_OPTIONS_CONFLICT = (85, 86)  # IndexOptionsConflict, IndexKeySpecsConflict
PAGE = 500  # answers read per round trip when iterating (an export never holds a month in one list)


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _answer(row: dict[str, Any]) -> AnswerRecord:
    return AnswerRecord(answer_id=row["_id"], conversation_key=row["conversation_key"], platform=row["platform"],
                        user=row["user"], question=row["question"], standalone=row["standalone"],
                        answer=row["answer"], kind=row["kind"], mood=row["mood"],
                        citations=[Citation(**c) for c in row["citations"]], created=row["created"],
                        latency_ms=row.get("latency_ms"),  # absent in answers saved by older versions
                        channel=row.get("channel", ""))  # filled in at open (backfill_answer_channels)


async def ensure_conversation_indexes(db: AsyncDatabase[dict[str, Any]], history_ttl_days: int,
                                      event_ttl_hours: int) -> None:
    """Create the indexes; a changed TTL updates the existing index in place (collMod) instead of failing."""
    await db[HISTORY].create_index([("conversation_key", 1), ("created", -1)], name="history_by_conversation")
    await db[EVENTS].create_index([("platform", 1), ("event_id", 1)], unique=True, name="events_unique")
    await db[FEEDBACK].create_index([("answer_id", 1), ("user", 1)], unique=True, name="feedback_unique")
    await db[FEEDBACK].create_index("created", name="feedback_by_time")
    # `navibot feedback export --since`
    await db[FEEDBACK].create_index([("updated", 1), ("_id", 1)], name="feedback_by_update")
    await db[ANSWERS].create_index([("created", 1), ("_id", 1)], name="answers_by_time")  # `navibot stats`
    for collection, name, seconds in ((HISTORY, HISTORY_TTL, history_ttl_days * 86400),
                                      (EVENTS, EVENTS_TTL, event_ttl_hours * 3600)):
        try:
            await db[collection].create_index("created", name=name, expireAfterSeconds=seconds)
        except OperationFailure as exc:
            if exc.code not in _OPTIONS_CONFLICT:
                raise
            await db.command({"collMod": collection, "index": {"name": name, "expireAfterSeconds": seconds}})


async def backfill_answer_channels(db: AsyncDatabase[dict[str, Any]]) -> int:
    """Answers saved before `channel` was a field of their own get it from their conversation key (at open; one
    pass over those answers only, a page at a time). Returns how many were filled in."""
    filled = 0
    missing: dict[str, Any] = {"channel": {"$exists": False}}
    while rows := await db[ANSWERS].find(missing, {"conversation_key": 1}).limit(PAGE).to_list(None):
        by_channel: dict[str, list[Any]] = {}
        for row in rows:
            by_channel.setdefault(channel_of_key(str(row.get("conversation_key") or "")), []).append(row["_id"])
        for channel, ids in by_channel.items():  # a page's answers come from a few chats: one update per channel
            done = await db[ANSWERS].update_many({"_id": {"$in": ids}, **missing}, {"$set": {"channel": channel}})
            filled += int(done.modified_count)
        if len(rows) < PAGE:
            break
    if filled:
        log.info("conversation store: the channel of %d older answers filled in from their keys", filled)
    return filled


class AsyncMongoConversations:
    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.db = db

    async def history(self, conversation_key: str, limit: int) -> list[HistoryTurn]:
        rows = await (self.db[HISTORY].find({"conversation_key": conversation_key})
                      .sort([("created", -1), ("_id", -1)]).limit(limit).to_list(None))
        return [HistoryTurn(r["question"], r["standalone"], r["answer"], list(r["cited_ids"])) for r in reversed(rows)]

    async def append_turn(self, conversation_key: str, turn: HistoryTurn, keep: int) -> None:
        await self.db[HISTORY].insert_one({
            "conversation_key": conversation_key, "question": turn.question, "standalone": turn.standalone,
            "answer": turn.answer, "cited_ids": list(turn.cited_ids), "created": _now()})
        older = await (self.db[HISTORY].find({"conversation_key": conversation_key}, {"_id": 1})
                       .sort([("created", -1), ("_id", -1)]).skip(keep).to_list(None))
        if older:
            await self.db[HISTORY].delete_many({"_id": {"$in": [r["_id"] for r in older]}})

    async def clear_history(self, conversation_key: str) -> int:
        removed = int((await self.db[HISTORY].delete_many({"conversation_key": conversation_key})).deleted_count)
        await self.blank_unrated_questions({"conversation_key": conversation_key})
        return removed

    async def blank_unrated_questions(self, where: dict[str, Any]) -> int:
        """Blanks the question text of the answers matching `where` that no one rated; returns how many."""
        with_text = {"$and": [where, {"$or": [{"question": {"$ne": ""}}, {"standalone": {"$ne": ""}}]}]}
        ids = [r["_id"] for r in await self.db[ANSWERS].find(with_text, {"_id": 1}).to_list(None)]
        blanked = 0
        for start in range(0, len(ids), PAGE):
            page = ids[start:start + PAGE]
            rated = {r["answer_id"] for r in
                     await self.db[FEEDBACK].find({"answer_id": {"$in": page}}, {"answer_id": 1}).to_list(None)}
            unrated = [i for i in page if i not in rated]
            if unrated:
                done = await self.db[ANSWERS].update_many({"_id": {"$in": unrated}},
                                                          {"$set": {"question": "", "standalone": ""}})
                blanked += int(done.modified_count)
        return blanked

    async def purge(self, at: datetime, retention: timedelta, event_ttl: timedelta) -> dict[str, int]:
        """The retention as of `at`: the TTL indexes expire history and event ids in their own time (within a
        minute); this deletes them at once and blanks the question text of older unrated answers."""
        cutoff = at - retention
        history = (await self.db[HISTORY].delete_many({"created": {"$lt": cutoff}})).deleted_count
        events = (await self.db[EVENTS].delete_many({"created": {"$lt": at - event_ttl}})).deleted_count
        questions = await self.blank_unrated_questions({"created": {"$lt": _iso(cutoff)}})
        return {"history": int(history), "events": int(events), "questions": questions}

    async def get_mood(self, preference_key: str) -> str | None:
        row = await self.db[PREFERENCES].find_one({"_id": preference_key})
        return str(row["mood"]) if row else None

    async def set_mood(self, preference_key: str, mood: str) -> None:
        await self.db[PREFERENCES].update_one({"_id": preference_key},
                                              {"$set": {"mood": mood, "updated": _now()}}, upsert=True)

    async def claim_event(self, platform: str, event_id: str, owner: str,
                          gone: Callable[[str], bool] = lambda _: False) -> bool:
        """See ConversationStore.claim_event; `gone(holder)` is True for a holder known to be dead."""
        moment = _now()
        lease = {"status": "claimed", "owner": owner, "lease_until": moment + timedelta(seconds=EVENT_LEASE_SECONDS),
                 "created": moment}
        key = {"platform": platform, "event_id": event_id}
        try:
            await self.db[EVENTS].insert_one({**key, **lease})
            return True
        except DuplicateKeyError:
            pass
        held = await self.db[EVENTS].find_one(key)
        if held is None or held.get("status") != "claimed":
            return False  # answered (or released and claimed again in between: that delivery answers it)
        # Taken over when its holder is gone or the lease ran out; one conditional update, so of two deliveries
        # at once only one wins.
        dead = gone(str(held.get("owner") or ""))
        where = {**key, "status": "claimed", **({"owner": held.get("owner")} if dead
                                                else {"lease_until": {"$lte": moment}})}
        taken = await self.db[EVENTS].find_one_and_update(where, {"$set": lease})
        if taken is not None:
            log.info("event %s: the claim of %s taken over (%s)", event_id, taken.get("owner"),
                     "its process is gone" if dead else "lease over")
        return taken is not None

    async def complete_event(self, platform: str, event_id: str) -> None:
        await self.db[EVENTS].update_one({"platform": platform, "event_id": event_id, "status": "claimed"},
                                         {"$set": {"status": "done"}, "$unset": {"lease_until": ""}})

    async def release_event(self, platform: str, event_id: str, owner: str) -> None:
        await self.db[EVENTS].delete_one({"platform": platform, "event_id": event_id, "status": "claimed",
                                          "owner": owner})

    async def save_answer(self, record: AnswerRecord) -> None:
        created = record.created or _iso(_now())
        await self.db[ANSWERS].insert_one({
            "_id": record.answer_id, "conversation_key": record.conversation_key, "platform": record.platform,
            "user": record.user, "question": record.question, "standalone": record.standalone,
            "answer": record.answer, "kind": record.kind, "mood": record.mood,
            "citations": [c.as_dict() for c in record.citations], "created": created,
            "latency_ms": record.latency_ms, "channel": record.channel})

    async def get_answer(self, answer_id: str) -> AnswerRecord | None:
        row = await self.db[ANSWERS].find_one({"_id": answer_id})
        return None if row is None else _answer(row)

    async def answers_page(self, after: tuple[str, str], limit: int) -> list[AnswerRecord]:
        """Up to `limit` answers after (created, id) in that order: `answers()` walks them a page at a time."""
        created, answer_id = after
        where = {"$or": [{"created": {"$gt": created}}, {"created": created, "_id": {"$gt": answer_id}}]}
        rows = await self.db[ANSWERS].find(where).sort([("created", 1), ("_id", 1)]).limit(limit).to_list(None)
        return [_answer(row) for row in rows]

    async def record_feedback(self, answer_id: str, user: str, helpful: bool, reason: str | None) -> FeedbackRecord:
        if await self.db[ANSWERS].find_one({"_id": answer_id}, {"_id": 1}) is None:
            raise UnknownAnswer(f"no answer with id {answer_id!r}")
        stamp = _iso(_now())
        await self.db[FEEDBACK].update_one(
            {"answer_id": answer_id, "user": user},
            {"$set": {"helpful": helpful, "reason": reason, "updated": stamp}, "$setOnInsert": {"created": stamp}},
            upsert=True)
        return next(f for f in await self.feedback(answer_id) if f.user == user)

    async def feedback(self, answer_id: str | None = None, since: datetime | None = None) -> list[FeedbackRecord]:
        where: dict[str, Any] = {} if answer_id is None else {"answer_id": answer_id}
        if since is not None:  # a rating counts from when it was last given (a changed rating is given anew)
            where["updated"] = {"$gte": _iso(_utc(since))}
        rows = await self.db[FEEDBACK].find(where).sort([("created", 1), ("_id", 1)]).to_list(None)
        return await self._with_answers(rows)

    async def ratings_page(self, after: tuple[str, ObjectId], limit: int) -> tuple[list[FeedbackRecord],
                                                                                    tuple[str, ObjectId] | None]:
        """Up to `limit` ratings after (updated, _id) in that order, and the key to continue from (None: done)."""
        updated, last = after
        where = {"$or": [{"updated": {"$gt": updated}}, {"updated": updated, "_id": {"$gt": last}}]}
        rows = await self.db[FEEDBACK].find(where).sort([("updated", 1), ("_id", 1)]).limit(limit).to_list(None)
        following = (rows[-1]["updated"], rows[-1]["_id"]) if len(rows) == limit else None
        return await self._with_answers(rows), following

    async def _with_answers(self, rows: list[dict[str, Any]]) -> list[FeedbackRecord]:
        """Feedback rows joined with the answers they rate (one query for the lot)."""
        ids = sorted({r["answer_id"] for r in rows})
        answers = {a["_id"]: a for a in await self.db[ANSWERS].find({"_id": {"$in": ids}}).to_list(None)} if ids else {}
        return [FeedbackRecord(r["answer_id"], r["user"], bool(r["helpful"]), r.get("reason"), a["question"],
                               a["standalone"], a["answer"], list(a["citations"]), a["platform"], r["created"],
                               r["updated"])
                for r in rows if (a := answers.get(r["answer_id"])) is not None]


class MongoConversationStore:
    """The synchronous ConversationStore: each call runs on the connection's event loop."""

    def __init__(self, connection: MongoConnection, history_ttl_days: int = 30, event_ttl_hours: int = 24,
                 clock: Callable[[], float] = time.monotonic, owners_folder: Path | None = None) -> None:
        self.connection = connection
        self.aio = AsyncMongoConversations(connection.db)
        self.retention = timedelta(days=history_ttl_days)
        self.event_ttl = min(timedelta(hours=event_ttl_hours), self.retention)
        # This process's claims are "<host>:<owner>"; a claim made on this host can be checked for a live owner.
        self._owners = OwnerLocks(owners_folder) if owners_folder is not None else None
        self._host = socket.gethostname()
        self.owner = f"{self._host}:{self._owners.owner if self._owners else uuid.uuid4().hex[:16]}"
        self._closed = False
        self._clock = clock
        self._purge_schedule = RetentionSchedule(self.purge, (PyMongoError,), clock)
        try:
            connection.run(ensure_conversation_indexes(connection.db, history_ttl_days, event_ttl_hours))
            connection.run(backfill_answer_channels(connection.db))
        except PyMongoError as exc:  # at start-up, e.g. a user without the right to create indexes: one line
            connection.close()
            raise MongoUnavailable(f"MongoDB at {connection.host} failed: {exc}") from exc
        except BaseException:
            connection.close()
            raise
        self._purge_schedule.apply()

    def purge(self, at: datetime | None = None) -> dict[str, int]:
        """Applies the retention as of `at` (now); see `AsyncMongoConversations.purge`."""
        removed = self.connection.run(self.aio.purge(at or _now(), self.retention, self.event_ttl))
        self._purge_schedule.applied_at = self._clock()
        return removed

    @classmethod
    def open(cls, config: MongoConfig, history_ttl_days: int = 30, event_ttl_hours: int = 24,
             owners_folder: Path | None = None) -> MongoConversationStore:
        return cls(MongoConnection.shared(config), history_ttl_days, event_ttl_hours, owners_folder=owners_folder)

    def _gone(self, holder: str) -> bool:
        """A holder on this host whose process is gone (never one on another host: it cannot be asked)."""
        host, _, owner = holder.rpartition(":")
        return self._owners is not None and host == self._host and not self._owners.alive(owner)

    def history(self, conversation_key: str, limit: int) -> list[HistoryTurn]:
        return self.connection.run(self.aio.history(conversation_key, limit))

    def append_turn(self, conversation_key: str, turn: HistoryTurn, keep: int) -> None:
        self._purge_schedule.apply_when_due()
        self.connection.run(self.aio.append_turn(conversation_key, turn, keep))

    def clear_history(self, conversation_key: str) -> int:
        return self.connection.run(self.aio.clear_history(conversation_key))

    def get_mood(self, preference_key: str) -> str | None:
        return self.connection.run(self.aio.get_mood(preference_key))

    def set_mood(self, preference_key: str, mood: str) -> None:
        self.connection.run(self.aio.set_mood(preference_key, mood))

    def claim_event(self, platform: str, event_id: str) -> bool:
        if self._owners is not None:
            self._owners.hold()
        return self.connection.run(self.aio.claim_event(platform, event_id, self.owner, self._gone))

    def complete_event(self, platform: str, event_id: str) -> None:
        self.connection.run(self.aio.complete_event(platform, event_id))

    def release_event(self, platform: str, event_id: str) -> None:
        self.connection.run(self.aio.release_event(platform, event_id, self.owner))

    def save_answer(self, record: AnswerRecord) -> None:
        self._purge_schedule.apply_when_due()
        self.connection.run(self.aio.save_answer(record))

    def get_answer(self, answer_id: str) -> AnswerRecord | None:
        return self.connection.run(self.aio.get_answer(answer_id))

    def record_feedback(self, answer_id: str, user: str, helpful: bool, reason: str | None) -> FeedbackRecord:
        return self.connection.run(self.aio.record_feedback(answer_id, user, helpful, reason))

    def answers(self, since: datetime | None = None) -> Iterator[AnswerRecord]:
        """Answers (and no-answers) saved at or after `since`, oldest first, read a page at a time."""
        after = ("", "") if since is None else (_iso(_utc(since)), "")
        while True:
            page = self.connection.run(self.aio.answers_page(after, PAGE))
            yield from page
            if len(page) < PAGE:
                return
            after = (page[-1].created, page[-1].answer_id)

    def feedback(self, answer_id: str | None = None, since: datetime | None = None) -> list[FeedbackRecord]:
        return self.connection.run(self.aio.feedback(answer_id, since))

    def ratings(self, since: datetime | None = None) -> Iterator[FeedbackRecord]:
        """Ratings as they stand, given or changed at or after `since`, in that order, read a page at a time."""
        after: tuple[str, ObjectId] | None = (_iso(_utc(since)) if since else "", ObjectId("0" * 24))
        while after is not None:
            page, after = self.connection.run(self.aio.ratings_page(after, PAGE))
            yield from page

    def close(self) -> None:
        if not self._closed:  # a shared connection counts its users: close it once
            self._closed = True
            self.connection.close()
            if self._owners is not None:
                self._owners.close()


def is_unavailable(exc: BaseException) -> bool:
    """A lost or timed-out connection (which a retry later may cure), not a bug or a refused write."""
    return isinstance(exc, ConnectionFailure) or (isinstance(exc, PyMongoError) and exc.timeout)


class HistoryOptional:
    """Keeps answering when the conversation store is unreachable: history reads as empty, the turn is not
    saved, the mood is the default and an event id counts as new (an event may then be answered twice, which
    beats not answering). Each lapse is a WARNING naming what was skipped. Commands that promise something
    (reset, mood <name>) and feedback still fail, so the navigator is never told a lie."""

    def __init__(self, inner: ConversationStore, where: str = "MongoDB", pause: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.inner = inner
        self.where = where
        # After a failure the optional calls are skipped for `pause` seconds: a turn then waits for at most one
        # server-selection timeout instead of one per call (history, mood, event, answer, turn).
        self.pause = pause
        self._clock = clock
        self._down_until = 0.0

    def _or(self, what: str, call: Callable[[], T], fallback: T) -> T:
        if self._clock() < self._down_until:
            log.warning("history unavailable (%s did not answer shortly before): %s skipped", self.where, what)
            return fallback
        try:
            return call()
        except PyMongoError as exc:
            if not is_unavailable(exc):
                raise
            self._down_until = self._clock() + self.pause
            log.warning("history unavailable (%s, %s): %s skipped: %s", self.where, type(exc).__name__, what, exc)
            return fallback

    def history(self, conversation_key: str, limit: int) -> list[HistoryTurn]:
        return self._or("reading the history", lambda: self.inner.history(conversation_key, limit), [])

    def append_turn(self, conversation_key: str, turn: HistoryTurn, keep: int) -> None:
        self._or("saving the turn", lambda: self.inner.append_turn(conversation_key, turn, keep), None)

    def clear_history(self, conversation_key: str) -> int:
        return self.inner.clear_history(conversation_key)

    def get_mood(self, preference_key: str) -> str | None:
        return self._or("reading the mood preference", lambda: self.inner.get_mood(preference_key), None)

    def set_mood(self, preference_key: str, mood: str) -> None:
        self.inner.set_mood(preference_key, mood)

    def claim_event(self, platform: str, event_id: str) -> bool:
        return self._or("the duplicate-event check", lambda: self.inner.claim_event(platform, event_id), True)

    def complete_event(self, platform: str, event_id: str) -> None:
        self._or("marking the event answered", lambda: self.inner.complete_event(platform, event_id), None)

    def release_event(self, platform: str, event_id: str) -> None:
        self._or("releasing the event", lambda: self.inner.release_event(platform, event_id), None)

    def save_answer(self, record: AnswerRecord) -> None:
        self._or(f"saving answer {record.answer_id}", lambda: self.inner.save_answer(record), None)

    def get_answer(self, answer_id: str) -> AnswerRecord | None:
        return self.inner.get_answer(answer_id)

    def record_feedback(self, answer_id: str, user: str, helpful: bool, reason: str | None) -> FeedbackRecord:
        try:
            return self.inner.record_feedback(answer_id, user, helpful, reason)
        except PyMongoError as exc:
            if not is_unavailable(exc):
                raise
            log.warning("feedback on answer %s not saved, %s unavailable: %s", answer_id, self.where, exc)
            raise FeedbackError("I can't save the rating right now (the conversation store cannot be reached); "
                                "please try again in a moment.") from exc

    def answers(self, since: datetime | None = None) -> Iterator[AnswerRecord]:
        return self.inner.answers(since)

    def feedback(self, answer_id: str | None = None, since: datetime | None = None) -> list[FeedbackRecord]:
        return self.inner.feedback(answer_id, since)

    def ratings(self, since: datetime | None = None) -> Iterator[FeedbackRecord]:
        return self.inner.ratings(since)

    def close(self) -> None:
        self.inner.close()
