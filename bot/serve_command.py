"""`navibot serve`: one server for Slack and Teams, with /healthz and /metrics (registered by bot/cli.py).

Work in progress in this commit: the parser is final, the server is being built (issue 8).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.errors import UserError
from bot.settings import Settings


def add_serve_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the bot for Slack and Teams in one server, with /healthz and /metrics",
        description="One HTTP server: Slack events at /slack/events, Teams at /api/messages, GET /healthz and "
                    "GET /metrics. Slack Socket Mode runs alongside when SLACK_APP_TOKEN is set.")
    serve.add_argument("--host", help="interface to listen on (default: NAVIBOT_HOST, 0.0.0.0)")
    serve.add_argument("--port", type=int, help="port (default: NAVIBOT_PORT, 8080)")
    serve.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    raise UserError("navibot serve is not built yet")
