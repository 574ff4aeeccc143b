"""The one aiohttp application of `navibot serve` (and of its aliases `navibot slack`, `navibot teams`): Slack and
Teams on one port, with /healthz and /metrics.

    POST /slack/events   Slack HTTP events, slash commands, buttons (SLACK_BOT_TOKEN + SLACK_SIGNING_SECRET)
    POST /api/messages   Teams (the three NAVIBOT_TEAMS_* credentials, or NAVIBOT_TEAMS_ALLOW_ANONYMOUS=true)
    GET  /healthz        200 when the stores answer and the models are loaded, else 503 with the reasons
    GET  /metrics        Prometheus text (bot.observability.metrics)

Slack Socket Mode (SLACK_APP_TOKEN) runs alongside in the same event loop, on the same Slack app.
`--only slack|teams` (and the aliases) serve one platform; `--mode socket|http` one way into Slack
(`choose_platforms`).

Shutdown (SIGTERM from a container stop, or Ctrl-C): /healthz turns 503 and new questions are refused with 503
(Slack and the Bot Connector retry them, on another instance behind a load balancer) while clicks, which are never
sent again, are still served; Socket Mode is closed,
the answers under way get up to NAVIBOT_SHUTDOWN_GRACE_SECONDS to be posted, then the listener closes.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import signal
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from aiohttp import web
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

from adapters.slack.app import (
    EVENTS_PATH,
    SlackApp,
    add_slack_routes,
    build_slack_app,
    keep_web_session,
    socket_mode_handler,
)
from adapters.slack.settings import Mode, SlackSettings, SlackSettingsError
from adapters.slack.tokens import check_app_token, check_token
from adapters.teams.settings import ENV_PREFIX as TEAMS_PREFIX
from adapters.teams.settings import MESSAGES_PATH, TeamsSettings
from bot.config.settings import Settings
from bot.errors import UserError
from bot.observability.metrics import CONTENT_TYPE, Metrics
from bot.server.admin import add_admin_routes
from bot.server.health import Health
from bot.wiring.runtime import Bot

if TYPE_CHECKING:
    from adapters.teams.agent import TeamsBot

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"
RETRY_AFTER_SECONDS = "5"
# Connections the kernel completes and queues while the event loop is busy. aiohttp's default, 128, is less than a
# burst of questions at once (Slack opens a connection per request): past it the kernel drops the SYNs and those
# clients try again after 1 s, so some acks took over a second. Capped by the kernel's net.core.somaxconn.
LISTEN_BACKLOG = 1024
NO_PLATFORM = ("no chat platform is configured: set SLACK_BOT_TOKEN with SLACK_SIGNING_SECRET (HTTP events) "
               "and/or SLACK_APP_TOKEN (Socket Mode), or NAVIBOT_TEAMS_CLIENT_ID, NAVIBOT_TEAMS_CLIENT_SECRET and "
               "NAVIBOT_TEAMS_TENANT_ID (or NAVIBOT_TEAMS_ALLOW_ANONYMOUS=true for a local Teams test)")
TEAMS_NOT_ASKED = ("Teams has no credentials: set NAVIBOT_TEAMS_CLIENT_ID, NAVIBOT_TEAMS_CLIENT_SECRET and "
                   "NAVIBOT_TEAMS_TENANT_ID, or NAVIBOT_TEAMS_ALLOW_ANONYMOUS=true for a local test (or run "
                   "`navibot teams`, which listens on 127.0.0.1 in anonymous mode)")
Only = Literal["slack", "teams"]
ONLY: tuple[Only, ...] = ("slack", "teams")
MODES: tuple[Mode, ...] = ("socket", "http")


@dataclass(frozen=True, slots=True)
class Platforms:
    """What this server answers, decided from the settings alone."""

    slack_http: bool = False
    slack_socket: bool = False
    teams: bool = False
    teams_anonymous: bool = False

    @property
    def slack(self) -> bool:
        return self.slack_http or self.slack_socket

    def describe(self) -> list[str]:
        parts = []
        if self.slack_http:
            parts.append(f"Slack HTTP events at {EVENTS_PATH}")
        if self.slack_socket:
            parts.append("Slack Socket Mode")
        if self.teams:
            mode = "LOCAL ANONYMOUS MODE" if self.teams_anonymous else "authenticated"
            parts.append(f"Teams at {MESSAGES_PATH} ({mode})")
        return parts


def choose_platforms(slack: SlackSettings | None, teams: TeamsSettings | None, *, only: Only | None = None,
                     slack_mode: Mode | None = None, allow_anonymous: bool = False) -> Platforms:
    """The platforms to serve; a half-configured one, none at all, or options that contradict each other are a
    UserError naming what to set. `only` ignores the other platform's settings (None: not read at all);
    `slack_mode` serves Slack that one way, and needs it configured; `allow_anonymous` serves Teams without
    credentials (`navibot teams`; `navibot serve` needs NAVIBOT_TEAMS_ALLOW_ANONYMOUS=true)."""
    if slack_mode is not None and only == "teams":
        raise UserError("--mode is Slack's connection mode (socket or http): it cannot go with --only teams")
    slack_http = slack_socket = False
    if slack is not None and only != "teams":
        slack_http, slack_socket = slack_ways(slack, slack_mode, required=only == "slack")
    serve_teams = anonymous = False
    if teams is not None and only != "slack":
        teams.check_credentials()  # all three or none
        anonymous = teams.anonymous
        serve_teams = not anonymous or teams.allow_anonymous or allow_anonymous
        if only == "teams" and not serve_teams:
            raise UserError(TEAMS_NOT_ASKED)
    platforms = Platforms(slack_http=slack_http, slack_socket=slack_socket, teams=serve_teams,
                          teams_anonymous=serve_teams and anonymous)
    if not platforms.slack and not platforms.teams:
        raise UserError(NO_PLATFORM)
    return platforms


def slack_ways(slack: SlackSettings, mode: Mode | None, required: bool) -> tuple[bool, bool]:
    """(HTTP events, Socket Mode): the one way `mode` names (its settings must be there), else every way the
    settings configure; `required`: Slack must be served (`--only slack`)."""
    if mode is not None:
        try:
            slack.check(mode)
        except SlackSettingsError as exc:
            raise UserError(str(exc)) from exc
        return mode == "http", mode == "socket"
    has_token = slack.slack_bot_token is not None
    has_secret = slack.slack_signing_secret is not None
    has_app_token = slack.slack_app_token is not None
    if required and not (has_token or has_secret or has_app_token):
        raise UserError("--only slack: Slack is not configured: set SLACK_BOT_TOKEN with SLACK_SIGNING_SECRET (HTTP "
                        "events at /slack/events) and/or SLACK_APP_TOKEN (Socket Mode)")
    if (has_secret or has_app_token) and not has_token:
        raise UserError("Slack needs SLACK_BOT_TOKEN (the Bot User OAuth Token, xoxb-...) as well: "
                        "SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set without it")
    if has_token and not (has_secret or has_app_token):
        raise UserError("Slack needs SLACK_SIGNING_SECRET (HTTP events at /slack/events) or SLACK_APP_TOKEN (Socket "
                        "Mode) besides SLACK_BOT_TOKEN")
    return has_token and has_secret, has_token and has_app_token


@dataclass(slots=True)
class ServerState:
    bot: Bot
    settings: Settings
    platforms: Platforms
    health: Health
    metrics: Metrics
    slack: SlackApp | None = None
    slack_settings: SlackSettings | None = None
    teams: TeamsBot | None = None
    socket: AsyncSocketModeHandler | None = None
    who: list[str] = field(default_factory=list)  # the Slack bot user and workspace, once auth.test answered
    command: str = "serve"  # the command that runs it (`navibot slack`, `teams`: aliases): its start-up line


STATE = web.AppKey("navibot_server", ServerState)


@web.middleware
async def refuse_when_shutting_down(request: web.Request,
                                    handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                                    ) -> web.StreamResponse:
    """After SIGTERM, new questions get 503 with Retry-After (the platforms redeliver them, to another instance
    behind a load balancer), while the requests already being handled finish. /healthz says why; /metrics stays
    readable to the last scrape."""
    state = request.app[STATE]
    if (state.health.shutting_down and request.path not in (HEALTH_PATH, METRICS_PATH)
            and await redelivered_if_refused(request)):
        return web.json_response({"status": "shutting down"}, status=503,
                                 headers={"Retry-After": RETRY_AFTER_SECONDS})
    return await handler(request)


async def redelivered_if_refused(request: web.Request) -> bool:
    """Slack redelivers an Events API callback (JSON) and the Bot Connector a message, so refusing them during the
    drain loses nothing. A click (a feedback button, the reason form) or a slash command (Slack, form-encoded) and
    a Teams invoke (a card button) are never sent again: refused, they would be lost, so they are served."""
    if request.path == EVENTS_PATH:
        return request.content_type == "application/json"
    if request.path == MESSAGES_PATH:
        try:
            body = json.loads(await request.read())  # kept by aiohttp: the handler reads it again
        except ValueError:
            return True
        return not (isinstance(body, dict) and body.get("type") == "invoke")
    return True


async def healthz(request: web.Request) -> web.Response:
    report = await request.app[STATE].health.report()
    return web.json_response(report.body(), status=200 if report.ok else 503,
                             headers={"Cache-Control": "no-store"})


async def metrics(request: web.Request) -> web.Response:
    body = request.app[STATE].metrics.render()
    return web.Response(body=body.encode("utf-8"), headers={"Content-Type": CONTENT_TYPE})


def build_server_app(bot: Bot, settings: Settings, slack_settings: SlackSettings | None,
                     teams_settings: TeamsSettings | None, platforms: Platforms | None = None,
                     command: str = "serve") -> web.Application:
    """The application, with the routes `platforms` (by default: what the settings configure) call for. It does not
    contact Slack: `start` checks the tokens, listens, and connects Socket Mode."""
    if platforms is None:
        platforms = choose_platforms(slack_settings, teams_settings)
    app = web.Application(middlewares=[refuse_when_shutting_down])
    watcher = Metrics()
    bot.observers.add(watcher)
    health = Health(bot)
    bot.observers.add(health)  # questions that fail on the store make /healthz say so
    state = ServerState(bot, settings, platforms, health, watcher, slack_settings=slack_settings, command=command)
    app[STATE] = state
    if platforms.slack and slack_settings is not None:
        # One Slack app for both ways in: HTTP requests are signature-checked; Socket Mode ones are not signed,
        # and Bolt skips the check for them.
        state.slack = build_slack_app(bot, slack_settings, "http" if platforms.slack_http else "socket")
        keep_web_session(app, state.slack)  # one pooled Web API session, not one per call
        if platforms.slack_http:
            add_slack_routes(app, state.slack)
    if platforms.teams and teams_settings is not None:
        if platforms.teams_anonymous:
            log.warning("Teams: no credentials (local anonymous mode): %s accepts UNAUTHENTICATED "
                        "requests from anyone who can reach this port and posts replies to the serviceUrl they "
                        "name (on loopback, or a host NAVIBOT_TEAMS_SERVICE_URLS lists). For a local test only; set "
                        "%sCLIENT_ID, CLIENT_SECRET and TENANT_ID in production.", MESSAGES_PATH, TEAMS_PREFIX)
            if any(key.startswith("teams:") for key in settings.access_groups):
                log.warning("Teams: NAVIBOT_ACCESS_GROUPS maps Teams teams, but in anonymous mode channelData.team.id "
                            "is whatever the request says: any caller can claim any team, so access groups protect "
                            "nothing on Teams. Set the Teams credentials before relying on them.")
        # The Agents SDK is imported only when Teams is served: ~1 s of a Slack-only start (adapters/teams/agent.py)
        from adapters.teams.agent import add_teams_routes

        state.teams = add_teams_routes(app, bot, teams_settings)
    add_admin_routes(app, bot, settings)  # /admin, when NAVIBOT_ADMIN_TOKEN or _PROXY_HEADER is set
    app.router.add_get(HEALTH_PATH, healthz)
    app.router.add_get(METRICS_PATH, metrics)
    return app


class Server:
    """One run of the application: `start` (check the Slack tokens, listen, connect Socket Mode), `stop` (an orderly
    shutdown). `run` below is the whole life of `navibot serve`; tests and benchmarks use the two halves."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self.state = app[STATE]
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> int:
        """Returns the port listened on (the real one when 0 was asked)."""
        state = self.state
        # The embedding model is loaded and the search's spelling lookup built before listening (both happen
        # lazily otherwise, ~0.15 s for the lookup): the first question does not pay for them, and a broken install
        # is one line at start-up rather than a failed turn.
        for part in (state.bot.core.embedder, getattr(state.bot.core, "retriever", None)):
            warm_up = getattr(part, "warm_up", None)
            if callable(warm_up):
                await asyncio.to_thread(warm_up)
        if state.slack is not None:  # a wrong token is a clear line at start-up, not a failure at the first question
            state.who = [await check_token(state.slack)]
            if state.platforms.slack_socket:
                await check_app_token(state.slack)
        # shutdown_timeout: how long requests still open (a Teams card click) may take once the listener closed.
        runner = web.AppRunner(self.app, access_log=None,
                               shutdown_timeout=max(1.0, state.settings.shutdown_grace_seconds))
        await runner.setup()
        site = web.TCPSite(runner, host, port, backlog=LISTEN_BACKLOG)
        try:
            await site.start()
        except OSError as exc:  # the port is taken, the interface does not exist
            await runner.cleanup()
            raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
        self.runner = runner
        sockets = getattr(site._server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        try:
            if state.slack is not None and state.platforms.slack_socket and state.slack_settings is not None:
                state.socket = socket_mode_handler(state.slack, state.slack_settings)
                await state.socket.connect_async()
        except BaseException:
            await runner.cleanup()
            raise
        shown = "localhost" if host in ("0.0.0.0", "::", "") else host
        url = f"http://{shown}:{self.port}"
        # A log record, not a print: under JSON logs (serve's default) every stderr line stays one JSON object.
        log.info("%s", startup_line(state, url), extra={"event": "listening", "url": url})
        return self.port

    async def stop(self) -> None:
        """Stop taking work (/healthz and new questions: 503; Socket Mode closed), let the answers under way be
        posted for at most NAVIBOT_SHUTDOWN_GRACE_SECONDS, then stop listening."""
        state, grace = self.state, self.state.settings.shutdown_grace_seconds
        state.health.shutting_down = True
        if state.socket is not None:
            with suppress(Exception):  # a connection already lost needs no closing
                await state.socket.close_async()
        under_way = (len(state.slack.tasks) if state.slack else 0) + (state.teams.pending if state.teams else 0)
        if under_way:
            log.info("navibot serve: stopping; up to %g s for %d answer(s) under way", grace, under_way)
        waits = []
        if state.slack is not None:
            waits.append(drain_slack(state.slack, grace))
        if state.teams is not None:
            waits.append(state.teams.drain(grace))  # cancels what is left after `grace`
        await asyncio.gather(*waits)
        if state.slack is not None and state.slack.tasks:
            log.warning("shutdown: %d Slack answer(s) still under way after %g s are not posted",
                        len(state.slack.tasks), grace)
            for task in list(state.slack.tasks):
                task.cancel()
            await asyncio.wait(set(state.slack.tasks), timeout=1.0)
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


def startup_line(state: ServerState, url: str) -> str:
    """What the server says once it listens. `navibot serve`: the URL, the Slack bot, the platforms; the aliases
    keep the lines their set-up guides show (`navibot slack: navibot in <workspace>, Socket Mode, connected`)."""
    platforms, who = state.platforms, state.who[0] if state.who else "?"
    served = f"{HEALTH_PATH}, {METRICS_PATH} (SIGTERM or Ctrl-C to stop)"
    if state.command == "slack":
        ways = ([f"HTTP mode, Request URL {url}{EVENTS_PATH}"] if platforms.slack_http else []) + \
               (["Socket Mode, connected"] if platforms.slack_socket else [])
        return f"navibot slack: {who}, {', '.join(ways)}; {url}: {served}"
    if state.command == "teams":
        mode = "local anonymous mode" if platforms.teams_anonymous else "authenticated"
        return f"navibot teams: Teams at {url}{MESSAGES_PATH} ({mode}); {url}: {served}"
    as_who = f" as {who}" if state.who else ""
    return f"navibot {state.command}: {url}{as_who}: {'; '.join(platforms.describe())}; {served}"


async def drain_slack(slack: SlackApp, grace: float) -> None:
    """Until every Slack answer is posted, at most `grace` seconds: including the work of a click served during
    the drain, which started after it (SlackApp.drain waits only for what was under way when it was called)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while slack.tasks and (left := deadline - loop.time()) > 0:
        await asyncio.wait(set(slack.tasks), timeout=left)


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop (libuv, in C) where it is installed (Linux, macOS), else None: asyncio's own. Accepting,
    reading, writing and closing the sockets cost the server's one thread less: with 200 Slack questions at once
    the ack p95 was lower with uvloop in each of four interleaved pairs on this busy 2-core machine
    (benchmarks/RESULTS.md)."""
    try:
        import uvloop
    except ImportError:  # Windows: uvloop does not build there
        return None
    return uvloop.new_event_loop


def freeze_startup_objects() -> int:
    """Move what start-up built (the model's vocabulary, the glossary, the store's tables: ~56,000 objects that
    live as long as the process) out of the garbage collector's sight, and return how many. A full collection
    walks them otherwise: ~30 ms with every thread stopped, the event loop's acks included, measured on this
    machine after `build_bot`; 0 ms once frozen. Python's own `gc.freeze`, called once before the server listens."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


async def until_stopped() -> None:
    """Until SIGTERM (a container stop) or Ctrl-C; both end in an orderly shutdown (`Server.stop`)."""
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


async def run(app: web.Application, host: str, port: int,
              stopped: Callable[[], Awaitable[None]] = until_stopped) -> None:
    """The whole life of `navibot serve` (and its aliases): start, wait for SIGTERM or Ctrl-C, shut down in order.
    The signal handlers are in place before the server starts: a SIGTERM during start-up (the model loading) stops
    it in order once started, rather than killing it."""
    stop = asyncio.ensure_future(stopped())
    await asyncio.sleep(0)  # the waiter's first step runs: its signal handlers are installed
    server = Server(app)
    try:
        await server.start(host, port)
    except BaseException:
        stop.cancel()
        with suppress(asyncio.CancelledError):
            await stop  # its handlers are removed
        raise
    try:
        await stop
    finally:
        await server.stop()
