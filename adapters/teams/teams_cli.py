"""`navibot teams` and `navibot teams package`: run the Teams bot on its own, build the app package
(registered by bot/cli/main.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from adapters.teams.settings import load_teams_settings
from bot.config.settings import Settings
from bot.errors import UserError
from bot.wiring.runtime import build_bot


def add_teams_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `teams` command and its `package` subcommand."""
    teams = subparsers.add_parser(
        "teams", help="run the Microsoft Teams bot (POST /api/messages), or build its app package",
        description="Serve the Teams bot on http://HOST:PORT/api/messages. With NAVIBOT_TEAMS_CLIENT_ID, "
                    "NAVIBOT_TEAMS_CLIENT_SECRET and NAVIBOT_TEAMS_TENANT_ID set, every request must carry a valid "
                    "Bot Framework token; with none set it runs in local anonymous mode (Agents Playground).")
    teams.add_argument("--host", help="interface to listen on (default: NAVIBOT_TEAMS_HOST, else 0.0.0.0 with "
                                      "credentials and 127.0.0.1 in anonymous mode)")
    teams.add_argument("--port", type=int, help="port (default: NAVIBOT_TEAMS_PORT, 3978)")
    teams.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    teams.set_defaults(func=cmd_teams)
    sub = teams.add_subparsers(dest="teams_command")
    package = sub.add_parser("package", help="write the Teams app package (zip) to upload in Teams",
                             description="Fill manifests/teams/manifest.json from the NAVIBOT_TEAMS_* settings, "
                                         "check it and its icons, and write the zip an admin uploads.")
    package.add_argument("--out", type=Path, default=Path("navibot-teams.zip"),
                         help="zip file to write (default: navibot-teams.zip)")
    package.add_argument("--manifest-dir", type=Path,
                         help="folder with manifest.json, color.png and outline.png (default: manifests/teams of "
                              "the source checkout; needed when Navibot was installed from a wheel)")
    package.set_defaults(func=cmd_package)


def cmd_package(args: argparse.Namespace, _settings: Settings) -> int:
    from adapters.teams.package import build_package

    manifest = build_package(load_teams_settings(), args.out, args.manifest_dir)
    bot = manifest["bots"][0]["botId"]
    print(f"teams package: {args.out} (app {manifest['id']}, bot {bot}, version {manifest['version']})")
    return 0


def cmd_teams(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here, not at the top: every `navibot` command registers this one, and the Agents SDK takes
    # a quarter of a second to import.
    from aiohttp import web

    from adapters.teams.agent import MESSAGES_PATH, add_teams_routes

    teams_settings = load_teams_settings()
    teams_settings.check_credentials()
    # Anonymous mode answers anyone who can reach the port and posts to whatever serviceUrl a request names:
    # unless told otherwise, it listens on this machine only.
    host = args.host or teams_settings.host or ("127.0.0.1" if teams_settings.anonymous else "0.0.0.0")
    port = args.port if args.port is not None else teams_settings.port
    if not 1 <= port <= 65535:
        raise UserError("--port must be between 1 and 65535")
    bot = build_bot(settings, args.store)
    try:
        app = web.Application()
        add_teams_routes(app, bot, teams_settings)
        mode = "local anonymous mode" if teams_settings.anonymous else "authenticated"
        print(f"Navibot for Teams on http://{host}:{port}{MESSAGES_PATH} ({mode}); Ctrl-C to stop", file=sys.stderr)
        try:
            web.run_app(app, host=host, port=port, print=None)
        except OSError as exc:  # port in use, interface not available
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    finally:
        bot.close()
    return 0
