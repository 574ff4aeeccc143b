"""The embedded conversation store: one SQLite file beside the knowledge store.

WAL with synchronous=FULL: a committed write survives a crash or power cut, which is what "durable before the
reply is returned" needs; each method commits before it returns.

Event ids are claimed with a lease and an owner (bot/conversations/event_owners.py), completed when the reply is
posted and released when the turn fails, so a question cut short by a crash is answered on redelivery, and only once.
Retention: history turns and event ids older than the retention are deleted, and so is the question text of
older answers no one rated; on open and then at most once an hour, on a write.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.conversations.event_owners import OwnerLocks
from bot.conversations.store import (
    EVENT_LEASE_SECONDS,
    AnswerRecord,
    FeedbackRecord,
    HistoryTurn,
    RetentionSchedule,
    UnknownAnswer,
    channel_of_key,
)
from rag.cite.rail import Citation

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_key TEXT NOT NULL,
    question TEXT NOT NULL,
    standalone TEXT NOT NULL,
    answer TEXT NOT NULL,
    cited_ids TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS history_by_conversation ON history(conversation_key, id);
CREATE TABLE IF NOT EXISTS preferences (
    preference_key TEXT PRIMARY KEY,
    mood TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    platform TEXT NOT NULL,
    event_id TEXT NOT NULL,
    created TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'done',  -- 'claimed' while being answered, 'done' once the reply is posted
    owner TEXT,  -- the claiming process (bot/conversations/event_owners.py)
    lease_until REAL,  -- epoch seconds: after it, a claim may be taken over whoever holds it
    PRIMARY KEY (platform, event_id)
);
CREATE TABLE IF NOT EXISTS answers (
    answer_id TEXT PRIMARY KEY,
    conversation_key TEXT NOT NULL,
    platform TEXT NOT NULL,
    user TEXT NOT NULL,
    question TEXT NOT NULL,
    standalone TEXT NOT NULL,
    answer TEXT NOT NULL,
    kind TEXT NOT NULL,
    mood TEXT NOT NULL,
    citations TEXT NOT NULL,
    created TEXT NOT NULL,
    latency_ms REAL,
    channel TEXT NOT NULL DEFAULT ''  -- where it was given (with platform); see AnswerRecord.channel
);
CREATE TABLE IF NOT EXISTS feedback (
    answer_id TEXT NOT NULL REFERENCES answers(answer_id),
    user TEXT NOT NULL,
    helpful INTEGER NOT NULL,
    reason TEXT,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (answer_id, user)
);
"""
# After the tables exist (and old files have been upgraded): the admin commands read answers and feedback by time.
INDEXES = """
CREATE INDEX IF NOT EXISTS answers_by_time ON answers(created, answer_id);
CREATE INDEX IF NOT EXISTS feedback_by_time ON feedback(updated);
CREATE INDEX IF NOT EXISTS history_by_time ON history(created);
CREATE INDEX IF NOT EXISTS events_by_time ON events(created);
"""
# Columns added since the first release: (table, column, definition). Rows of older files read the default:
# an event id saved by an older version was answered when it was saved ('done'); an answer's channel is then
# filled in from its conversation key (BACKFILLS).
UPGRADES = (("answers", "latency_ms", "REAL"), ("events", "status", "TEXT NOT NULL DEFAULT 'done'"),
            ("events", "owner", "TEXT"), ("events", "lease_until", "REAL"),
            ("answers", "channel", "TEXT NOT NULL DEFAULT ''"))
# Run once, in the transaction that adds the column: (table, column) -> the statement that fills it in.
BACKFILLS = {("answers", "channel"): "UPDATE answers SET channel = channel_of_key(conversation_key)"}
PAGE = 500  # rows read per query when iterating answers: the lock is never held for a whole export
FEEDBACK_COLUMNS = ("f.answer_id, f.user, f.helpful, f.reason, a.question, a.standalone, a.answer, a.citations,"
                    " a.platform, f.created, f.updated")
ANSWER_COLUMNS = ("answer_id, conversation_key, platform, user, question, standalone, answer, kind, mood, citations,"
                  " created, latency_ms, channel")


def stamp(moment: datetime) -> str:
    """The stored form of a time: ISO 8601 in UTC with milliseconds, so that text order is time order."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def now() -> str:
    return stamp(datetime.now(UTC))


def _answer(row: tuple[Any, ...]) -> AnswerRecord:
    return AnswerRecord(answer_id=row[0], conversation_key=row[1], platform=row[2], user=row[3], question=row[4],
                        standalone=row[5], answer=row[6], kind=row[7], mood=row[8],
                        citations=[Citation(**c) for c in json.loads(row[9])], created=row[10], latency_ms=row[11],
                        channel=row[12])


def _rating(r: tuple[Any, ...]) -> FeedbackRecord:
    return FeedbackRecord(r[0], r[1], bool(r[2]), r[3], r[4], r[5], r[6], json.loads(r[7]), r[8], r[9], r[10])


class SQLiteConversationStore:
    def __init__(self, path: str | Path, retention_days: int = 30, event_ttl_hours: int = 24,
                 clock: Callable[[], float] = time.monotonic) -> None:
        path = Path(path)
        self.retention = timedelta(days=retention_days)
        self.event_ttl = min(timedelta(hours=event_ttl_hours), self.retention)
        self._clock = clock
        self._purge_schedule = RetentionSchedule(self.purge, (sqlite3.Error,), clock)
        self._owners = OwnerLocks(path.with_name(path.name + "-owners"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(SCHEMA)
            self._upgrade()
            self._db.executescript(INDEXES)
        except (OSError, sqlite3.Error) as exc:
            raise RuntimeError(f"cannot open the conversation store {path}: {exc}") from exc
        self._lock = threading.Lock()  # one connection shared by the adapters' threads
        self._purge_schedule.apply()

    def _upgrade(self) -> None:
        """Files written by older versions lack columns added since: add them, and fill in those that can be worked
        out from the row (BACKFILLS), each column with its backfill in one transaction: a crash in between leaves
        the file as it was, to be upgraded at the next open."""
        self._db.create_function("channel_of_key", 1, channel_of_key, deterministic=True)
        for table, column, definition in UPGRADES:
            if column not in {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
                    if (backfill := BACKFILLS.get((table, column))) is not None:
                        filled = self._db.execute(backfill).rowcount
                        log.info("conversation store: %s.%s added and filled in for %d rows", table, column, filled)
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT under the lock. On SQLITE_FULL (and I/O errors) SQLite has already rolled
        the transaction back: a second ROLLBACK would fail with 'no transaction is active' and hide the cause."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    try:
                        self._db.execute("ROLLBACK")
                    except sqlite3.Error as again:  # the first error is the one worth raising
                        log.warning("conversation store: rollback failed: %s", again)
                raise

    def _write(self, sql: str, params: tuple[object, ...]) -> sqlite3.Cursor:
        self._purge_schedule.apply_when_due()
        with self._lock:
            return self._db.execute(sql, params)

    # --- retention ------------------------------------------------------------------------------------------------

    def purge(self, at: datetime | None = None) -> dict[str, int]:
        """Applies the retention as of `at` (now): history turns and event ids older than it are deleted, and older
        answers no one rated lose their question text. Returns what was removed or blanked, per kind."""
        at = at or datetime.now(UTC)
        cutoff, events_cutoff = stamp(at - self.retention), stamp(at - self.event_ttl)
        with self._transaction():
            history = self._db.execute("DELETE FROM history WHERE created < ?", (cutoff,)).rowcount
            events = self._db.execute("DELETE FROM events WHERE created < ?", (events_cutoff,)).rowcount
            questions = self._db.execute(
                "UPDATE answers SET question = '', standalone = '' WHERE created < ? AND (question != ''"
                " OR standalone != '') AND NOT EXISTS (SELECT 1 FROM feedback f WHERE f.answer_id = answers.answer_id)",
                (cutoff,)).rowcount
        self._purge_schedule.applied_at = self._clock()
        return {"history": history, "events": events, "questions": questions}

    def history(self, conversation_key: str, limit: int) -> list[HistoryTurn]:
        with self._lock:
            rows = self._db.execute(
                "SELECT question, standalone, answer, cited_ids FROM history WHERE conversation_key = ?"
                " ORDER BY id DESC LIMIT ?", (conversation_key, limit)).fetchall()
        return [HistoryTurn(q, s, a, json.loads(c)) for q, s, a, c in reversed(rows)]

    def append_turn(self, conversation_key: str, turn: HistoryTurn, keep: int) -> None:
        self._purge_schedule.apply_when_due()
        with self._transaction():
            self._db.execute(
                "INSERT INTO history(conversation_key, question, standalone, answer, cited_ids, created)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (conversation_key, turn.question, turn.standalone, turn.answer, json.dumps(turn.cited_ids), now()))
            self._db.execute(
                "DELETE FROM history WHERE conversation_key = ? AND id NOT IN (SELECT id FROM history"
                " WHERE conversation_key = ? ORDER BY id DESC LIMIT ?)", (conversation_key, conversation_key, keep))

    def clear_history(self, conversation_key: str) -> int:
        with self._transaction():
            removed = self._db.execute("DELETE FROM history WHERE conversation_key = ?", (conversation_key,)).rowcount
            self._db.execute(
                "UPDATE answers SET question = '', standalone = '' WHERE conversation_key = ? AND (question != ''"
                " OR standalone != '') AND NOT EXISTS (SELECT 1 FROM feedback f WHERE f.answer_id = answers.answer_id)",
                (conversation_key,))
        return int(removed)

    def get_mood(self, preference_key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT mood FROM preferences WHERE preference_key = ?",
                                   (preference_key,)).fetchone()
        return row[0] if row else None

    def set_mood(self, preference_key: str, mood: str) -> None:
        self._write("INSERT INTO preferences(preference_key, mood, updated) VALUES (?, ?, ?)"
                    " ON CONFLICT(preference_key) DO UPDATE SET mood = excluded.mood, updated = excluded.updated",
                    (preference_key, mood, now()))

    def claim_event(self, platform: str, event_id: str) -> bool:
        self._purge_schedule.apply_when_due()
        owner = self._owners.hold()
        with self._transaction():
            row = self._db.execute("SELECT status, owner, lease_until FROM events WHERE platform = ? AND event_id = ?",
                                   (platform, event_id)).fetchone()
            moment = time.time()
            if row is not None:
                status, holder, lease_until = row
                if status != "claimed" or (moment < (lease_until or 0.0) and self._owners.alive(holder)):
                    return False  # answered, or being answered by a live process
                log.info("event %s: the claim of %s taken over (%s)", event_id, holder,
                         "lease over" if moment >= (lease_until or 0.0) else "its process is gone")
            self._db.execute(
                "INSERT INTO events(platform, event_id, created, status, owner, lease_until)"
                " VALUES (?, ?, ?, 'claimed', ?, ?) ON CONFLICT(platform, event_id) DO UPDATE SET"
                " created = excluded.created, status = 'claimed', owner = excluded.owner,"
                " lease_until = excluded.lease_until",
                (platform, event_id, now(), owner, moment + EVENT_LEASE_SECONDS))
        return True

    def complete_event(self, platform: str, event_id: str) -> None:
        self._write("UPDATE events SET status = 'done', lease_until = NULL WHERE platform = ? AND event_id = ?"
                    " AND status = 'claimed'", (platform, event_id))

    def release_event(self, platform: str, event_id: str) -> None:
        self._write("DELETE FROM events WHERE platform = ? AND event_id = ? AND status = 'claimed' AND owner = ?",
                    (platform, event_id, self._owners.owner))

    def save_answer(self, record: AnswerRecord) -> None:
        self._write(
            f"INSERT INTO answers({ANSWER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record.answer_id, record.conversation_key, record.platform, record.user, record.question,
             record.standalone, record.answer, record.kind, record.mood,
             json.dumps([c.as_dict() for c in record.citations], ensure_ascii=False), record.created or now(),
             record.latency_ms, record.channel))

    def get_answer(self, answer_id: str) -> AnswerRecord | None:
        with self._lock:
            row = self._db.execute(f"SELECT {ANSWER_COLUMNS} FROM answers WHERE answer_id = ?",
                                   (answer_id,)).fetchone()
        return None if row is None else _answer(row)

    def answers(self, since: datetime | None = None) -> Iterator[AnswerRecord]:
        """Answers (and no-answers) saved at or after `since`, oldest first, read a page at a time."""
        after = ("", "") if since is None else (stamp(since), "")
        while True:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {ANSWER_COLUMNS} FROM answers WHERE (created, answer_id) > (?, ?)"
                    " ORDER BY created, answer_id LIMIT ?", (*after, PAGE)).fetchall()
            yield from (_answer(row) for row in rows)
            if len(rows) < PAGE:
                return
            after = (rows[-1][10], rows[-1][0])

    def record_feedback(self, answer_id: str, user: str, helpful: bool, reason: str | None) -> FeedbackRecord:
        stamp = now()
        with self._lock:
            if self._db.execute("SELECT 1 FROM answers WHERE answer_id = ?", (answer_id,)).fetchone() is None:
                raise UnknownAnswer(f"no answer with id {answer_id!r}")
            self._db.execute(
                "INSERT INTO feedback(answer_id, user, helpful, reason, created, updated) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(answer_id, user) DO UPDATE SET helpful = excluded.helpful,"
                " reason = excluded.reason, updated = excluded.updated",
                (answer_id, user, int(helpful), reason, stamp, stamp))
        return next(f for f in self.feedback(answer_id) if f.user == user)

    def feedback(self, answer_id: str | None = None, since: datetime | None = None) -> list[FeedbackRecord]:
        sql = f"SELECT {FEEDBACK_COLUMNS} FROM feedback f JOIN answers a USING (answer_id) WHERE 1"
        params: tuple[object, ...] = ()
        if answer_id is not None:
            sql, params = sql + " AND f.answer_id = ?", (*params, answer_id)
        if since is not None:  # a rating counts from when it was last given (a changed rating is given anew)
            sql, params = sql + " AND f.updated >= ?", (*params, stamp(since))
        with self._lock:
            rows = self._db.execute(sql + " ORDER BY f.created", params).fetchall()
        return [_rating(r) for r in rows]

    def ratings(self, since: datetime | None = None) -> Iterator[FeedbackRecord]:
        """Ratings as they stand, given or changed at or after `since`, in that order, read a page at a time."""
        after: tuple[str, int] = (stamp(since) if since else "", 0)
        while True:
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {FEEDBACK_COLUMNS}, f.rowid FROM feedback f JOIN answers a USING (answer_id)"
                    " WHERE (f.updated, f.rowid) > (?, ?) ORDER BY f.updated, f.rowid LIMIT ?",
                    (*after, PAGE)).fetchall()
            yield from (_rating(r) for r in rows)
            if len(rows) < PAGE:
                return
            after = (rows[-1][10], rows[-1][11])

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self._owners.close()
