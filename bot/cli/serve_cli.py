"""`navibot serve`: one server for Slack and Teams, with /healthz and /metrics (registered by bot/cli/main.py).

The server itself is bot/server/app.py; this module reads the settings, builds the bot and runs it. It imports the
server (slack-bolt, the Agents SDK) only when the command runs: every `navibot` command registers this one.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from bot.config.settings import Settings
from bot.errors import UserError

if TYPE_CHECKING:
    from adapters.slack.settings import SlackSettings


def add_serve_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the bot for Slack and Teams in one server, with /healthz and /metrics",
        description="One HTTP server: Slack events at /slack/events, Teams at /api/messages, GET /healthz and "
                    "GET /metrics. Slack Socket Mode runs alongside when SLACK_APP_TOKEN is set. Teams needs its three "
                    "NAVIBOT_TEAMS_* credentials (anonymous mode only with NAVIBOT_TEAMS_ALLOW_ANONYMOUS=true). "
                    "SIGTERM or Ctrl-C: the answers under way are finished first.")
    serve.add_argument("--host", help="interface to listen on (default: NAVIBOT_HOST, 0.0.0.0)")
    serve.add_argument("--port", type=int, help="port (default: NAVIBOT_PORT, 8080)")
    serve.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    serve.set_defaults(func=cmd_serve)


def load_slack_settings() -> SlackSettings:
    from adapters.slack.settings import SlackSettings

    try:
        return SlackSettings()
    except ValidationError as exc:  # bot.cli.main would name these NAVIBOT_*: Slack's settings have Slack's names
        problems = "; ".join(f"{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        raise UserError(f"invalid Slack setting: {problems}") from exc


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from adapters.teams.settings import load_teams_settings
    from bot.server.app import build_server_app, choose_platforms, run
    from bot.wiring.open_stores import store_description
    from bot.wiring.runtime import build_bot

    host = args.host if args.host is not None else settings.host
    port = args.port if args.port is not None else settings.port
    if not 0 <= port <= 65535:  # 0: a free port chosen by the system (shown in the start-up line)
        raise UserError("--port must be between 1 and 65535 (or 0 for any free port)")
    slack_settings = load_slack_settings()
    teams_settings = load_teams_settings()
    platforms = choose_platforms(slack_settings, teams_settings)  # before the bot is built: a quick refusal
    bot = build_bot(settings, args.store)
    try:
        if not platforms.teams:  # the Teams routes say it themselves
            bot.warn_if_empty(store_description(settings, args.store))
        app = build_server_app(bot, settings, slack_settings, teams_settings)
        asyncio.run(run(app, host, port))
    finally:
        bot.close()  # turn threads finish and save before the stores close
    return 0

