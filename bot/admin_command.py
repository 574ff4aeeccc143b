"""`navibot feedback export` and `navibot stats`: what an admin asks of the conversation store
(registered by bot/cli.py).

Work in progress in this commit: the parsers are final, the commands are being built (issue 8).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.errors import UserError
from bot.settings import Settings


def add_admin_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    feedback = subparsers.add_parser("feedback", help="export the navigators' ratings of answers")
    sub = feedback.add_subparsers(dest="feedback_command", required=True)
    export = sub.add_parser("export", help="write feedback (question, answer, citations, rating, reason, platform, "
                                           "time) as CSV or JSON Lines")
    export.add_argument("--since", help="only feedback given on or after this date (YYYY-MM-DD, UTC)")
    export.add_argument("--format", choices=("csv", "jsonl"), default="csv", help="output format (default: csv)")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.set_defaults(func=cmd_feedback_export)
    stats = subparsers.add_parser("stats", help="questions per day, answer and no-answer rates, helpful rate, "
                                                "median latency")
    stats.add_argument("--since", help="only questions asked on or after this date (YYYY-MM-DD, UTC)")
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=cmd_stats)


def cmd_feedback_export(args: argparse.Namespace, settings: Settings) -> int:
    raise UserError("navibot feedback export is not built yet")


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    raise UserError("navibot stats is not built yet")
