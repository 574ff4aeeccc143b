"""`navibot feedback export` and `navibot stats`: what an admin asks of the conversation store
(registered by bot/cli/main.py; the figures and rows are computed in bot/observability/usage_report.py).

Both read the configured conversation store (SQLite, or MongoDB with NAVIBOT_STORE=mongodb). Questions, answers
and reasons are exported as stored: redacted when NAVIBOT_REDACT_PII was on when they were saved.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from bot.config.settings import Settings
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import ConversationStore
from bot.errors import UserError
from bot.observability.usage_report import compute_stats, export_rows, parse_since, stats_text, write_csv, write_jsonl
from bot.wiring.open_stores import open_conversation_store


def add_admin_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    feedback = subparsers.add_parser("feedback", help="export the navigators' ratings of answers")
    sub = feedback.add_subparsers(dest="feedback_command", required=True)
    export = sub.add_parser("export", help="write feedback (question, answer, citations, rating, reason, platform, "
                                           "time) as CSV or JSON Lines",
                            description="One row per rating, oldest first. Text is exported as stored: with "
                                        "NAVIBOT_REDACT_PII on (the default), SSNs, phone numbers, e-mails and dates "
                                        "of birth were replaced before it was saved. In CSV, a cell starting with "
                                        "= + - @ gets a leading apostrophe so a spreadsheet shows it as text.")
    export.add_argument("--since", help="only feedback given on or after this date (YYYY-MM-DD, UTC)")
    export.add_argument("--format", choices=("csv", "jsonl"), default="csv", help="output format (default: csv)")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.set_defaults(func=cmd_feedback_export)
    stats = subparsers.add_parser("stats", help="questions per day, answer and no-answer rates, helpful rate, "
                                                "median latency")
    stats.add_argument("--since", help="only questions asked on or after this date (YYYY-MM-DD, UTC)")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=cmd_stats)


@contextlib.contextmanager
def _store(settings: Settings) -> Iterator[ConversationStore]:
    """The configured conversation store; a store that fails while being read is one line, not a traceback."""
    store: ConversationStore
    if settings.store != "mongodb" and not settings.conversations_path.exists():
        store = SQLiteConversationStore(":memory:")  # nothing asked yet: report that, without creating the file
    else:
        store = open_conversation_store(settings)
    try:
        yield store
    except sqlite3.Error as exc:
        raise UserError(f"the conversation store {settings.conversations_path} failed: {exc}") from exc
    except Exception as exc:
        if type(exc).__module__.startswith(("pymongo", "bson")):  # lost mid-read (pymongo is imported lazily)
            raise UserError(f"the conversation store on MongoDB failed: {type(exc).__name__}: {exc}") from exc
        raise
    finally:
        store.close()


def _check_out(path: Path, settings: Settings) -> None:
    """Said before anything is read: a folder that does not exist, a path that is a folder, or one of the bot's own
    store files (the export would be renamed over it once written: every answer and rating gone)."""
    stores = {Path(f"{p.resolve()}{suffix}") for p in (settings.conversations_path, settings.store_path)
              for suffix in ("", "-wal", "-shm", "-journal")}
    if path.resolve() in stores:
        raise UserError(f"--out {path}: that is one of the bot's store files; give another file name")
    if path.is_dir():
        raise UserError(f"--out {path}: is a folder; give a file name")
    if not path.parent.is_dir():
        raise UserError(f"--out {path}: the folder {path.parent} does not exist")


def _write_atomically(path: Path, write: Callable[[TextIO], int]) -> int:
    """Written beside the target and renamed over it: a failed export never leaves half a file (or clobbers the
    last good one)."""
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:
        raise UserError(f"--out {path}: cannot write there ({exc.strerror})") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            count = write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except OSError as exc:
        raise UserError(f"--out {path}: cannot write there ({exc.strerror})") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return count


def _utf8_stdout() -> None:
    """The export is UTF-8 wherever it goes: standard output follows the locale (cp1252 on Windows, ASCII under
    LANG=C on older systems), which cannot hold a citation's › or a question in Spanish. No newline translation
    either: the csv module writes its own CRLF (Windows would make it CR CR LF)."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(encoding="utf-8", newline="")


def _redaction_note(settings: Settings) -> str:
    if settings.redact_pii:
        return ("personal data (SSNs, phone numbers, e-mails, dates of birth) was redacted when the text was stored "
                "(NAVIBOT_REDACT_PII is on)")
    return "NAVIBOT_REDACT_PII is off: questions and reasons are exported as typed"


def cmd_feedback_export(args: argparse.Namespace, settings: Settings) -> int:
    since = parse_since(args.since)
    if args.out is not None:
        _check_out(args.out, settings)
    writer = write_csv if args.format == "csv" else write_jsonl
    with _store(settings) as store:
        rows = export_rows(store, since)
        if args.out is None:
            _utf8_stdout()
            try:
                count = writer(rows, sys.stdout)
                sys.stdout.flush()
            except BrokenPipeError:  # `navibot feedback export | head`: the reader has seen enough
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
                return 0
            where = "standard output"
        else:
            count = _write_atomically(args.out, lambda out: writer(rows, out))
            where = str(args.out)
    print(f"feedback export: {count:,} rating{'s' if count != 1 else ''}"
          + (f" since {since.date().isoformat()}" if since else "") + f" -> {where} ({args.format}); "
          + _redaction_note(settings), file=sys.stderr)
    return 0


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    since = parse_since(args.since)
    with _store(settings) as store:
        stats = compute_stats(store, since)
    print(json.dumps(stats.as_dict(), indent=2) if args.json else stats_text(stats))
    return 0
