"""`navibot slack`: run the Slack app on its own (the command is registered by adapters/slack/slack_cli.py).

Socket Mode when SLACK_APP_TOKEN is set (the app connects out; no public URL), HTTP mode otherwise (Slack POSTs
to http://HOST:PORT/slack/events). A missing or refused token is one clear line and exit 2, like every command.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from contextlib import suppress

import aiohttp
from aiohttp import web
from pydantic import ValidationError
from slack_sdk.errors import SlackApiError

from adapters.slack.app import (
    EVENTS_PATH,
    SlackApp,
    add_slack_routes,
    build_slack_app,
    socket_mode_handler,
)
from adapters.slack.settings import Mode, SlackSettings, SlackSettingsError
from bot.config.settings import Settings
from bot.errors import UserError
from bot.wiring.open_stores import store_description
from bot.wiring.runtime import build_bot

log = logging.getLogger(__name__)


def load_slack_settings(mode: Mode | None) -> tuple[SlackSettings, Mode]:
    """Slack's settings and the mode, or a UserError naming what is missing or wrong."""
    try:
        settings = SlackSettings()
    except ValidationError as exc:
        problems = "; ".join(f"{'_'.join(map(str, e['loc'])).upper()}: " + str(e["msg"]).removeprefix("Value error, ")
                             for e in exc.errors())
        raise UserError(f"invalid setting: {problems}") from exc
    chosen = settings.mode(mode)
    try:
        settings.check(chosen)
    except SlackSettingsError as exc:
        raise UserError(str(exc)) from exc
    return settings, chosen


async def check_token(slack: SlackApp) -> str:
    """auth.test before serving, so a wrong token or API URL is reported at start-up, not at the first question."""
    try:
        auth = await slack.client.auth_test()
    except SlackApiError as exc:
        raise UserError(f"Slack refused SLACK_BOT_TOKEN ({exc.response.get('error')}); copy the Bot User OAuth "
                        "Token (xoxb-...) from the app's OAuth & Permissions page") from exc
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UserError(f"cannot reach the Slack Web API at {slack.settings.slack_api_url} ({exc!r}); "
                        "check the network or SLACK_API_URL") from exc
    return f"{auth.get('user', '?')} in {auth.get('team', '?')}"


async def run_http(slack: SlackApp, host: str, port: int) -> None:
    who = await check_token(slack)
    web_app = web.Application()
    add_slack_routes(web_app, slack)
    runner = web.AppRunner(web_app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
        print(f"navibot slack: {who}, HTTP mode, Request URL http://{host}:{port}{EVENTS_PATH} "
              "(Ctrl-C to stop)", file=sys.stderr)
        await until_stopped()
    finally:
        await runner.cleanup()  # runs on_shutdown: answers in progress are finished first


async def check_app_token(slack: SlackApp) -> None:
    """Checked once before connecting: the Socket Mode client itself retries a refused token forever."""
    app_token = slack.settings.slack_app_token.get_secret_value() if slack.settings.slack_app_token else ""
    try:
        await slack.client.apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        raise UserError(f"Slack refused SLACK_APP_TOKEN ({exc.response.get('error')}); create an App-Level Token "
                        "with the connections:write scope on the app's Basic Information page") from exc


async def run_socket(slack: SlackApp) -> None:
    who = await check_token(slack)
    await check_app_token(slack)
    handler = socket_mode_handler(slack, slack.settings)
    await handler.connect_async()
    print(f"navibot slack: {who}, Socket Mode, connected (Ctrl-C to stop)", file=sys.stderr)
    try:
        await until_stopped()
    finally:
        await slack.drain()
        await handler.close_async()


async def until_stopped() -> None:
    """Until SIGTERM (a container stop) or Ctrl-C; both end in an orderly shutdown. (`navibot serve` too.)"""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with suppress(NotImplementedError, RuntimeError):  # not on Windows, nor outside the main thread
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


def serve(args: argparse.Namespace, settings: Settings) -> int:
    slack_settings, mode = load_slack_settings(args.mode)
    if not 0 < args.port < 65536:
        raise UserError("--port must be between 1 and 65535")
    bot = build_bot(settings, args.store)
    try:
        bot.warn_if_empty(store_description(settings, args.store))  # the file, or the MongoDB host and database
        slack = build_slack_app(bot, slack_settings, mode)
        asyncio.run(run_socket(slack) if mode == "socket" else run_http(slack, args.host, args.port))
    finally:
        bot.close()
    return 0
