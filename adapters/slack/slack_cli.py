"""`navibot slack`: registered by bot/cli/main.py; the app itself is imported only when the command runs, because
every `navibot` command registers this one and slack-bolt takes a quarter of a second to import."""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.config.settings import Settings


def add_slack_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `slack` command."""
    parser = subparsers.add_parser(
        "slack", help="run the Slack app (Socket Mode with SLACK_APP_TOKEN, else HTTP at /slack/events)",
        description="Answer mentions, direct messages and /navibot in Slack. Settings: SLACK_BOT_TOKEN, and "
                    "SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode); SLACK_API_URL for GovSlack. "
                    "Create the app from manifests/slack/manifest.yaml.")
    parser.add_argument("--mode", choices=["socket", "http"],
                        help="connection mode (default: socket when SLACK_APP_TOKEN is set, else http)")
    parser.add_argument("--host", default="0.0.0.0", help="HTTP mode: address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=3000, help="HTTP mode: port to listen on (default 3000)")
    parser.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    parser.set_defaults(func=cmd_slack)


def cmd_slack(args: argparse.Namespace, settings: Settings) -> int:
    from adapters.slack.serve import serve

    return serve(args, settings)
