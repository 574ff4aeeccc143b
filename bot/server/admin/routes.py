"""The admin page's routes on the `navibot serve` application (registered by `add_admin_routes` when
NAVIBOT_ADMIN_TOKEN or NAVIBOT_ADMIN_PROXY_HEADER is set; otherwise /admin does not exist).

    GET  /admin              Overview             GET  /admin/feedback     Feedback
    GET  /admin/gaps         Knowledge gaps       GET  /admin/documents    Documents
    GET  /admin/gaps/{n}     one topic            GET  /admin/gaps.csv     the topics as CSV
    GET/POST /admin/login    POST /admin/logout   GET  /admin/static/...   script, styles, Chart.js

Every page is rendered by Jinja2 with autoescaping on (a question or a document title is shown as text, never as
markup), answers no-store, and carries a Content-Security-Policy that allows only the bot's own scripts and
styles: nothing loads from outside, so it works in a closed network. The stores are read in a worker thread.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

import jinja2
from aiohttp import web

from adapters.web_links import web_url
from bot.config.settings import Settings
from bot.errors import UserError
from bot.server.admin.auth import AdminAuth, Refused
from bot.server.admin.documents import documents_view
from bot.server.admin.feedback import feedback_page
from bot.server.admin.gaps import Topic, add_closest_documents, gap_questions, group_by_meaning, write_topics_csv
from bot.server.admin.overview import compute_overview
from bot.server.admin.period import CHOICES, Period, parse_period
from bot.server.admin.snapshot import Snapshot
from bot.wiring.runtime import Bot

log = logging.getLogger(__name__)
T = TypeVar("T")

PREFIX = "/admin"
STATIC = Path(__file__).parent / "static"
USER = web.RequestKey("navibot_admin_user", str)
MAX_URL_CHARS = 2000
THREADS = 2  # the admin page's worker threads: a supervisor or two at a time
TOPICS_SHOWN = 50  # topics on the gaps page (the CSV has them all)
CSV_DOCUMENTS_FOR = 1000  # topics of the CSV given their closest documents (a vector search each)
GAPS_CACHE_SECONDS = 300.0  # a topic page or the CSV right after the list reuses its grouping
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class AdminPage:
    def __init__(self, bot: Bot, settings: Settings) -> None:
        self.bot = bot
        self.settings = settings
        self.auth = AdminAuth(settings)
        self.templates = jinja2.Environment(loader=jinja2.PackageLoader("bot.server.admin", "templates"),
                                            autoescape=True, undefined=jinja2.StrictUndefined)
        # A document's URL is data (a crawled page chooses its own): linked only when the chat messages would
        # link it (absolute http(s), no invisible characters), else shown as text. Never a javascript: link.
        self.templates.filters["web_url"] = lambda url: web_url(url, MAX_URL_CHARS)
        self.snapshot = Snapshot(bot.conversations)
        self.warming: asyncio.Task[None] | None = None
        self.stopping = threading.Event()
        self.pool = ThreadPoolExecutor(THREADS, thread_name_prefix="navibot-admin")
        self.gaps_lock = threading.Lock()
        self.gaps_cache: OrderedDict[tuple[tuple[str, str], ...], tuple[float, list[Topic]]] = OrderedDict()

    def render(self, name: str, status: int = 200, **context: Any) -> web.Response:
        text = self.templates.get_template(name).render(prefix=PREFIX, choices=CHOICES, **context)
        return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """In the admin page's own threads, never asyncio's default pool: a view waiting for the start-up read
        must not hold up the chat adapters' quick store calls (bot.wiring.runtime.Bot.reply_posted uses that pool)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(work, *args))

    def read(self, view: Callable[[Snapshot, Period], T], period: Period) -> T:
        """A view of the snapshot, brought up to date first (in a worker thread: it reads the store)."""
        self.snapshot.refresh()
        return view(self.snapshot, period)

    def prepare(self) -> None:
        """The snapshot's first (whole) read, its columns, and the default period's knowledge-gap topics; given up
        when the server stops meanwhile (the stores are about to close)."""
        self.snapshot.refresh(self.stopping.is_set)
        if not self.stopping.is_set():
            self.snapshot.table()
            self.topics(parse_period({}))

    async def warm_up(self, _app: web.Application) -> None:
        """At start-up, `prepare` runs in the background: the first page view then finds it done, or waits only
        for what is left."""
        async def read() -> None:
            try:
                await self.run(self.prepare)
            except Exception as exc:  # noqa: BLE001  # any store's failure: the first page view reads again, says so
                log.warning("admin: reading the conversation store at start-up failed: %s", exc)
        self.warming = asyncio.create_task(read())

    async def settle(self, _app: web.Application) -> None:
        """At shutdown, before the stores close: the start-up read stops at its next look (at most CHECK_EVERY
        answers later) or after the step under way."""
        self.stopping.set()
        if self.warming is not None:
            await self.warming
        self.pool.shutdown(wait=False)

    def topics(self, period: Period, documents_for: int = 0) -> list[Topic]:
        """The grouping of a period, kept a few minutes (in a worker thread: it embeds every question), with the
        closest documents of its first `documents_for` topics. One at a time: two views of one period group once."""
        with self.gaps_lock:
            key = tuple(sorted(period.query().items()))
            cached = self.gaps_cache.get(key)
            if cached and time.monotonic() - cached[0] < GAPS_CACHE_SECONDS:
                topics = cached[1]
            else:
                topics = group_by_meaning(gap_questions(self.bot.conversations, period), self.bot.core.embedder)
                self.gaps_cache[key] = (time.monotonic(), topics)
                while len(self.gaps_cache) > 4:
                    self.gaps_cache.popitem(last=False)
            add_closest_documents(topics[:documents_for], self.bot.core.store)
            return topics


ADMIN = web.AppKey("navibot_admin", AdminPage)


def _page(request: web.Request) -> AdminPage:
    return request.app[ADMIN]


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def admin_guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every /admin path but the login form and the static files needs a signed-in user; every answer gets the
    security headers; bad input is a short message on the page, never a traceback."""
    if not request.path.startswith(PREFIX) or (request.path != PREFIX and not request.path.startswith(PREFIX + "/")):
        return await handler(request)
    page = _page(request)
    open_paths = (f"{PREFIX}/login", f"{PREFIX}/logout")
    try:
        if not request.path.startswith(f"{PREFIX}/static/") and request.path not in open_paths:
            user = page.auth.user(request)
            if user is None:
                if page.auth.serializer is None:  # proxy only: the proxy should have signed the user in
                    raise Refused(401, "Sign in through your organisation's single sign-on to open this page.")
                if request.path.endswith(".csv"):
                    raise Refused(401, "Log in to the admin page first.")
                raise web.HTTPSeeOther(f"{PREFIX}/login?{urlencode({'next': request.path_qs})}")
            request[USER] = user
        response = await handler(request)
    except Refused as refused:
        response = page.render("message.html", status=refused.status, title="Not allowed", message=refused.message)
    except UserError as exc:
        log.info("admin: %s: %s", request.path_qs, exc)
        response = page.render("message.html", status=400, title="Cannot show this", message=str(exc))
    except web.HTTPException as exc:
        for name, value in HEADERS.items():
            exc.headers.setdefault(name, value)
        raise
    except Exception as exc:  # noqa: BLE001  # a store that fails mid-read (SQLite, MongoDB): a page, not a 500
        log.warning("admin: %s failed: %s: %s", request.path_qs, type(exc).__name__, exc)
        response = page.render("message.html", status=503, title="The stores did not answer",
                               message=f"Reading the bot's stores failed ({type(exc).__name__}); try again shortly. "
                                       "The server log has the details.")
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _period(request: web.Request) -> Period:
    return parse_period(dict(request.query))


def _number(text: str | None, name: str, default: int = 1) -> int:
    if text is None or text == "":
        return default
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"{name}={text!r}: give a whole number from 1")
    return int(text)


def _base(request: web.Request, period: Period, active: str) -> dict[str, Any]:
    return {"period": period, "period_query": urlencode(period.query()), "active": active,
            "user": request.get(USER, ""), "plain": _page(request).settings.admin_plain_http}


async def overview(request: web.Request) -> web.Response:
    page, period = _page(request), _period(request)
    data = await page.run(page.read, compute_overview, period)
    return page.render("overview.html", overview=data, totals=data.total.as_dict(), chart=data.chart_data(),
                       **_base(request, period, "overview"))


async def gaps(request: web.Request) -> web.Response:
    page, period = _page(request), _period(request)

    topics = await page.run(page.topics, period, TOPICS_SHOWN)
    return page.render("gaps.html", topics=topics[:TOPICS_SHOWN], topic_count=len(topics),
                       question_count=sum(len(t.questions) for t in topics), **_base(request, period, "gaps"))


async def gap_topic(request: web.Request) -> web.Response:
    page, period = _page(request), _period(request)
    number = _number(request.match_info["number"], "topic")

    def work() -> Topic | None:
        topics = page.topics(period, number)
        return topics[number - 1] if number <= len(topics) else None

    topic = await page.run(work)
    if topic is None:
        raise UserError(f"there is no topic {number} in this period (the list may have changed: open Knowledge "
                        "gaps again)")
    return page.render("gap.html", topic=topic, **_base(request, period, "gaps"))


async def gaps_csv(request: web.Request) -> web.Response:
    page, period = _page(request), _period(request)

    def work() -> str:
        topics = page.topics(period, CSV_DOCUMENTS_FOR)
        out = io.StringIO()
        write_topics_csv(topics, out)
        return out.getvalue()

    body = await page.run(work)
    start = period.since.date().isoformat() if period.since else "all"
    return web.Response(body=body.encode("utf-8"), content_type="text/csv", charset="utf-8",
                        headers={"Content-Disposition": f'attachment; filename="knowledge-gaps-{start}.csv"'})


async def feedback(request: web.Request) -> web.Response:
    page, period = _page(request), _period(request)
    channel = request.query.get("channel") or None
    number = _number(request.query.get("page"), "page")
    data = await page.run(page.read, lambda snapshot, p: feedback_page(snapshot, p, channel, number), period)
    query = {**period.query(), **({"channel": channel} if channel else {})}
    return page.render("feedback.html", feedback=data, channel=channel or "", filter_query=urlencode(query),
                       **_base(request, period, "feedback"))


async def documents(request: web.Request) -> web.Response:
    page, period = _page(request), _period(request)
    settings = page.settings
    data = await page.run(page.read, lambda snapshot, p: documents_view(
        snapshot, page.bot.core.store, settings.store_path, p, settings.admin_stale_days), period)
    return page.render("documents.html", documents=data, stale_days=page.settings.admin_stale_days,
                       **_base(request, period, "documents"))


def _next(text: str | None) -> str:
    """Where to go after logging in: a path of this page only (never another site)."""
    if text and text.startswith(PREFIX) and not text.startswith("//") and "\\" not in text:
        return text
    return PREFIX


async def login_form(request: web.Request) -> web.StreamResponse:
    page = _page(request)
    if page.auth.user(request):
        raise web.HTTPSeeOther(_next(request.query.get("next")))
    if page.auth.serializer is None:
        raise Refused(401, "Sign in through your organisation's single sign-on to open this page.")
    return page.render("login.html", next=_next(request.query.get("next")), error="")


async def login(request: web.Request) -> web.StreamResponse:
    page = _page(request)
    page.auth.check_origin(request)
    form = await request.post()
    target = _next(str(form.get("next") or ""))
    try:
        user = page.auth.check_token(request, str(form.get("token") or ""))
    except Refused as refused:
        return page.render("login.html", status=refused.status, next=target, error=refused.message)
    response = web.HTTPSeeOther(target)
    page.auth.set_session(response, user)
    raise response


async def logout(request: web.Request) -> web.StreamResponse:
    page = _page(request)
    page.auth.check_origin(request)
    response = web.HTTPSeeOther(f"{PREFIX}/login")
    page.auth.end_session(response)
    raise response


def add_admin_routes(app: web.Application, bot: Bot, settings: Settings) -> bool:
    """Adds /admin when the settings turn it on; returns whether they did. A half-made configuration (a proxy
    header without its users) is a UserError at start-up."""
    if not settings.admin_enabled:
        return False
    page = app[ADMIN] = AdminPage(bot, settings)
    app.on_startup.append(page.warm_up)
    app.on_shutdown.append(page.settle)
    app.middlewares.append(admin_guard)
    app.router.add_get(PREFIX, overview)
    app.router.add_get(f"{PREFIX}/", overview)  # as a proxy's path prefix routes it
    app.router.add_get(f"{PREFIX}/gaps", gaps)
    app.router.add_get(f"{PREFIX}/gaps.csv", gaps_csv)
    app.router.add_get(f"{PREFIX}/gaps/{{number}}", gap_topic)
    app.router.add_get(f"{PREFIX}/feedback", feedback)
    app.router.add_get(f"{PREFIX}/documents", documents)
    app.router.add_get(f"{PREFIX}/login", login_form)
    app.router.add_post(f"{PREFIX}/login", login)
    app.router.add_post(f"{PREFIX}/logout", logout)
    app.router.add_static(f"{PREFIX}/static/", STATIC, show_index=False, follow_symlinks=False)
    how = ("the token login" if settings.admin_token else "") + (
        " and " if settings.admin_token and settings.admin_proxy_header else "") + (
        f"the {settings.admin_proxy_header} header of the proxy" if settings.admin_proxy_header else "")
    log.info("admin page at %s (read-only), signed in by %s", PREFIX, how)
    return True
