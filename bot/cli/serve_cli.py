"""`navibot serve [--only slack|teams] [--mode socket|http]`, its aliases `navibot slack` and `navibot teams`, and
`navibot teams package` (registered by bot/cli/main.py).

One code path: every alias is `serve --only <platform>` with that platform's old defaults (Slack: port 3000, the
mode from its tokens; Teams: NAVIBOT_TEAMS_HOST/PORT, 3978, anonymous mode allowed on 127.0.0.1), and each gets
/healthz and /metrics. The server itself is bot/server/app.py; this module reads the settings, builds the bot and
runs it. It imports the server (slack-bolt, the Agents SDK) only when a command runs: every `navibot` command
registers these.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from pydantic import ValidationError

from bot.config.settings import Settings
from bot.errors import UserError

if TYPE_CHECKING:
    from adapters.slack.settings import Mode, SlackSettings
    from adapters.teams.settings import TeamsSettings

ONLY = ("slack", "teams")
MODES = ("socket", "http")
SLACK_PORT = 3000  # `navibot slack`'s port since before `navibot serve`, in the Slack set-up guide


@dataclass(frozen=True, slots=True)
class ServerPlan:
    """One server run, whichever command asked for it."""

    command: str  # "serve", "slack", "teams": the start-up line says it
    host: str
    port: int
    only: Literal["slack", "teams"] | None
    slack_mode: Mode | None
    slack: SlackSettings | None  # None: not read (the platform is not served)
    teams: TeamsSettings | None
    allow_anonymous: bool = False


def add_serve_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser(
        "serve", help="run the bot for Slack and Teams in one server, with /healthz and /metrics",
        description="One HTTP server: Slack events at /slack/events, Teams at /api/messages, GET /healthz and "
                    "GET /metrics. Slack Socket Mode runs alongside when SLACK_APP_TOKEN is set. Teams needs its three "
                    "NAVIBOT_TEAMS_* credentials (anonymous mode only with NAVIBOT_TEAMS_ALLOW_ANONYMOUS=true). "
                    "SIGTERM or Ctrl-C: the answers under way are finished first. `navibot slack` and "
                    "`navibot teams` are this command with --only.")
    serve.add_argument("--only", metavar="{slack,teams}",
                       help="serve this platform alone; the other one's settings are not read")
    serve.add_argument("--mode", metavar="{socket,http}",
                       help="Slack: only this connection mode (default: every one the SLACK_* settings configure)")
    serve.add_argument("--host", help="interface to listen on (default: NAVIBOT_HOST, 0.0.0.0)")
    serve.add_argument("--port", type=int, help="port (default: NAVIBOT_PORT, 8080; 0: any free port)")
    serve.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    serve.set_defaults(func=cmd_serve)


def add_slack_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "slack", help="run the Slack app alone: `navibot serve --only slack` on port 3000",
        description="Answer mentions, direct messages and /navibot in Slack (`navibot serve --only slack`, with "
                    "/healthz and /metrics on the same port). Settings: SLACK_BOT_TOKEN, and SLACK_APP_TOKEN "
                    "(Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode); SLACK_API_URL for GovSlack. Create the app "
                    "from manifests/slack/manifest.yaml.")
    parser.add_argument("--mode", metavar="{socket,http}",
                        help="connection mode (default: socket when SLACK_APP_TOKEN is set, else http)")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=SLACK_PORT,
                        help=f"port of /slack/events (HTTP mode), /healthz and /metrics (default {SLACK_PORT})")
    parser.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    parser.set_defaults(func=cmd_slack)


def add_teams_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds the `teams` command and its `package` subcommand."""
    teams = subparsers.add_parser(
        "teams", help="run the Microsoft Teams bot alone (POST /api/messages), or build its app package",
        description="Serve the Teams bot on http://HOST:PORT/api/messages (`navibot serve --only teams`, with "
                    "/healthz and /metrics on the same port). With NAVIBOT_TEAMS_CLIENT_ID, "
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


def choice(option: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    """An option's value checked here rather than by argparse: a wrong one is the usual one line and exit 2."""
    if value is not None and value not in allowed:
        raise UserError(f"{option} must be {' or '.join(allowed)} (got {value!r})")
    return value


def load_slack_settings() -> SlackSettings:
    from adapters.slack.settings import SlackSettings

    try:
        return SlackSettings()
    except ValidationError as exc:  # bot.cli.main would name these NAVIBOT_*: Slack's settings have Slack's names
        problems = "; ".join(f"{'_'.join(map(str, e['loc'])).upper()}: " + str(e["msg"]).removeprefix("Value error, ")
                             for e in exc.errors())
        raise UserError(f"invalid setting: {problems}") from exc


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from adapters.teams.settings import load_teams_settings

    only = cast('Literal["slack", "teams"] | None', choice("--only", args.only, ONLY))
    mode = cast("Mode | None", choice("--mode", args.mode, MODES))
    host = args.host if args.host is not None else settings.host
    port = args.port if args.port is not None else settings.port
    return serve(ServerPlan("serve", host, port, only, mode, load_slack_settings() if only != "teams" else None,
                     load_teams_settings() if only != "slack" else None), settings, args.store)


def cmd_slack(args: argparse.Namespace, settings: Settings) -> int:
    """`navibot slack` = `serve --only slack`, in one mode: Socket Mode when SLACK_APP_TOKEN is set, else HTTP."""
    mode = cast("Mode | None", choice("--mode", args.mode, MODES))
    slack = load_slack_settings()
    plan = ServerPlan("slack", args.host, args.port, "slack", slack.mode(mode), slack, None)
    return serve(plan, settings, args.store)


def cmd_teams(args: argparse.Namespace, settings: Settings) -> int:
    """`navibot teams` = `serve --only teams` on NAVIBOT_TEAMS_HOST/PORT; anonymous mode (no credentials) is
    allowed, and then listens on this machine only unless told otherwise: it answers anyone who can reach the port
    and posts to whatever serviceUrl a request names."""
    from adapters.teams.settings import load_teams_settings

    teams = load_teams_settings()
    teams.check_credentials()  # a partial set is refused before the anonymous default is chosen
    host = args.host or teams.host or ("127.0.0.1" if teams.anonymous else "0.0.0.0")
    port = args.port if args.port is not None else teams.port
    plan = ServerPlan("teams", host, port, "teams", None, None, teams, allow_anonymous=True)
    return serve(plan, settings, args.store)


def serve(plan: ServerPlan, settings: Settings, store: Path | None) -> int:
    """Check everything that needs no network, build the bot, and run the server until SIGTERM or Ctrl-C."""
    from bot.server.app import build_server_app, choose_platforms, event_loop_factory, freeze_startup_objects, run
    from bot.wiring.open_stores import store_description
    from bot.wiring.runtime import build_bot

    if not 0 <= plan.port <= 65535:  # 0: a free port chosen by the system (shown in the start-up line)
        raise UserError("--port must be between 1 and 65535 (or 0 for any free port)")
    platforms = choose_platforms(plan.slack, plan.teams, only=plan.only, slack_mode=plan.slack_mode,
                                 allow_anonymous=plan.allow_anonymous)  # before the bot is built: a quick refusal
    bot = build_bot(settings, store)
    try:
        bot.warn_if_empty(store_description(settings, store))  # for every platform (the adapters only see a ChatBot)
        app = build_server_app(bot, settings, plan.slack, plan.teams, platforms, plan.command)
        freeze_startup_objects()
        asyncio.run(run(app, plan.host, plan.port), loop_factory=event_loop_factory())
    finally:
        bot.close()  # turn threads finish and save before the stores close
    return 0


def cmd_package(args: argparse.Namespace, _settings: Settings) -> int:
    from adapters.teams.package import build_package
    from adapters.teams.settings import load_teams_settings

    manifest = build_package(load_teams_settings(), args.out, args.manifest_dir)
    bot = manifest["bots"][0]["botId"]
    print(f"teams package: {args.out} (app {manifest['id']}, bot {bot}, version {manifest['version']})")
    return 0
