"""The admin page over HTTP (aiohttp's test client against the real routes, on the demo knowledge base and a seeded
conversation store): off unless configured, the login and its cookie, the proxy header, the views' figures (equal
to `navibot stats`), escaping, the CSV, bad input. The browser test is test_admin_browser.py."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from adapters.slack.settings import SlackSettings
from adapters.teams.settings import TeamsSettings
from bot.cli.main import main
from bot.config.settings import Settings
from bot.conversations.mongo import MongoConversationStore
from bot.conversations.sqlite import SQLiteConversationStore
from bot.conversations.store import AnswerRecord
from bot.observability.usage_report import compute_stats
from bot.server.admin import add_admin_routes
from bot.server.admin.documents import DocumentRow, DocumentsView
from bot.server.admin.period import parse_period
from bot.server.admin.routes import ADMIN, AdminPage
from bot.server.app import build_server_app
from bot.wiring.runtime import Bot, build_bot
from rag.crawl.state import CrawlState, PageState, state_path_for
from rag.mongo.bridge import AsyncBridge
from rag.mongo.connection import MongoConnection
from tests.fakes.admin_seed import DAY0, seed
from tests.fakes.fake_mongo import FakeDatabase

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")

TOKEN = "correct-horse-battery-staple"
SINCE = DAY0.date().isoformat()


def admin_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"admin_token": SecretStr(TOKEN), **overrides}
    return Settings(_env_file=None, data_dir=tmp_path, **values)  # type: ignore[call-arg]


@pytest.fixture
def seeded(demo_store: Path, tmp_path: Path) -> Iterator[Bot]:
    built = build_bot(admin_settings(tmp_path), demo_store, tmp_path / "conversations.sqlite3")
    seed(built.conversations)
    yield built
    built.close()


Client = TestClient[web.Request, web.Application]


def with_client(bot: Bot, settings: Settings, test: Callable[[Client], Awaitable[None]]) -> None:
    async def go() -> None:
        app = web.Application()
        add_admin_routes(app, bot, settings)
        async with TestClient(TestServer(app)) as client:
            await test(client)
    asyncio.run(go())


async def log_in(client: Client, token: str = TOKEN, origin: str | None = "same") -> Any:
    headers = {} if origin is None else {"Origin": str(client.make_url("")).rstrip("/") if origin == "same" else origin}
    return await client.post("/admin/login", data={"token": token, "next": "/admin/gaps"}, headers=headers,
                             allow_redirects=False)


def figure(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}">([^<]*)<', html)
    assert found, element_id
    return found.group(1)


# ------------------------------------------------------------------------------------------------ signing in


def test_the_admin_page_is_off_unless_configured(seeded: Bot, tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    app = web.Application()
    assert add_admin_routes(app, seeded, settings) is False
    assert not [r for r in app.router.routes() if r.resource and r.resource.canonical.startswith("/admin")]
    # navibot serve's application registers it when configured (and only then)
    teams = TeamsSettings(_env_file=None, allow_anonymous=True)  # type: ignore[call-arg]
    slack = SlackSettings(_env_file=None)  # type: ignore[call-arg]
    served = build_server_app(seeded, admin_settings(tmp_path), slack, teams)
    assert "/admin" in {r.resource.canonical for r in served.router.routes() if r.resource}
    plain = build_server_app(seeded, settings, slack, teams)
    assert "/admin" not in {r.resource.canonical for r in plain.router.routes() if r.resource}


def test_login_sets_a_signed_strict_http_only_secure_cookie(seeded: Bot, tmp_path: Path) -> None:
    async def test(client: Client) -> None:
        refused = await client.get("/admin", allow_redirects=False)
        assert refused.status == 303 and refused.headers["Location"].startswith("/admin/login?next=")
        assert (await client.get("/admin/gaps.csv")).status == 401
        wrong = await log_in(client, "not-the-token-at-all")
        assert wrong.status == 401 and "That token is not right." in await wrong.text()
        assert (await log_in(client, origin=None)).status == 403  # a post from no page at all
        assert (await log_in(client, origin="https://evil.example")).status == 403  # from another site
        good = await log_in(client)
        assert good.status == 303 and good.headers["Location"] == "/admin/gaps"
        cookie = good.headers["Set-Cookie"]
        assert cookie.startswith("__Host-navibot_admin=")
        assert all(part in cookie for part in ("HttpOnly", "SameSite=Strict", "Secure", "Path=/"))
        value = cookie.split(";")[0].split("=", 1)[1]
        headers = {"Cookie": f"__Host-navibot_admin={value}"}  # the test client keeps no Secure cookie on http
        assert (await client.get("/admin", headers=headers)).status == 200
        assert (await client.get("/admin/", headers=headers)).status == 200
        tampered = value[:-2] + ("AA" if not value.endswith("AA") else "BB")
        assert (await client.get("/admin", headers={"Cookie": f"__Host-navibot_admin={tampered}"},
                                 allow_redirects=False)).status == 303
        page = await client.get("/admin", headers=headers)
        assert page.headers["Cache-Control"] == "no-store" and "frame-ancestors 'none'" in page.headers[
            "Content-Security-Policy"] and "script-src 'self'" in page.headers["Content-Security-Policy"]
    with_client(seeded, admin_settings(tmp_path), test)


def test_wrong_tokens_make_an_address_wait_and_plain_http_drops_secure(seeded: Bot, tmp_path: Path) -> None:
    async def test(client: Client) -> None:
        for _ in range(5):
            assert (await log_in(client, "wrong-token-wrong-token")).status == 401
        blocked = await log_in(client)
        assert blocked.status == 429 and "wait ten minutes" in await blocked.text()
    with_client(seeded, admin_settings(tmp_path), test)

    async def plain(client: Client) -> None:
        good = await log_in(client)
        cookie = good.headers["Set-Cookie"]
        assert cookie.startswith("navibot_admin=") and "Secure" not in cookie and "HttpOnly" in cookie
        assert (await client.get("/admin")).status == 200  # the client keeps it on http://127.0.0.1
    with_client(seeded, admin_settings(tmp_path, admin_plain_http=True), plain)


def test_a_token_too_short_is_refused_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 16 characters"):
        admin_settings(tmp_path, admin_token=SecretStr("short"))


def test_the_proxy_header_from_a_trusted_proxy_for_a_listed_user(seeded: Bot, tmp_path: Path) -> None:
    settings = admin_settings(tmp_path, admin_token=None, admin_proxy_header="X-Forwarded-Email",
                              admin_users=["Lead@Agency.gov", "other@agency.gov"])

    async def test(client: Client) -> None:
        assert (await client.get("/admin")).status == 401  # no proxy in front: no way in
        ok = await client.get("/admin", headers={"X-Forwarded-Email": "lead@agency.gov"})
        assert ok.status == 200 and "lead@agency.gov" in await ok.text()
        stranger = await client.get("/admin", headers={"X-Forwarded-Email": "someone@gmail.com"})
        assert stranger.status == 403 and "NAVIBOT_ADMIN_USERS" in await stranger.text()
        assert (await log_in(client)).status == 403  # no token login in proxy-only mode
    with_client(seeded, settings, test)

    async def untrusted(client: Client) -> None:  # the header from an address that is not the proxy's
        refused = await client.get("/admin", headers={"X-Forwarded-Email": "lead@agency.gov"})
        assert refused.status == 403
    with_client(seeded, admin_settings(tmp_path, admin_proxy_header="X-Forwarded-Email",
                                       admin_users=["lead@agency.gov"], admin_proxy_ips=["10.0.0.0/8"]), untrusted)
    with pytest.raises(Exception, match="NAVIBOT_ADMIN_USERS"):
        add_admin_routes(web.Application(), seeded, admin_settings(tmp_path, admin_proxy_header="X-User"))


# ------------------------------------------------------------------------------------------------ the views


@contextmanager
def mongo_conversations(bot: Bot) -> Iterator[Bot]:
    store = MongoConversationStore(MongoConnection(AsyncBridge(), FakeDatabase()))
    sqlite_store = bot.conversations
    bot.conversations = store
    try:
        seed(store)
        yield bot
    finally:
        bot.conversations = sqlite_store
        store.close()


@pytest.mark.parametrize("backend", ["sqlite", "mongodb"])
def test_overview_figures_are_navibot_stats_for_the_same_period(seeded: Bot, tmp_path: Path, backend: str,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_DATA_DIR", str(tmp_path))  # `navibot stats` reads the seeded store
    with contextlib_for(backend, seeded) as bot:
        stats = compute_stats(bot.conversations, parse_period({"since": SINCE}).since)
        assert stats.questions == 10

        async def test(client: Client) -> None:
            await log_in(client)
            html = await (await client.get(f"/admin?since={SINCE}", headers=cookie_of(client))).text()
            assert figure(html, "questions") == "10"
            assert figure(html, "answer-rate") == "50.0%" and figure(html, "no-answer-rate") == "50.0%"
            assert figure(html, "helpful-rate") == "80.0%"  # 4 of 5 ratings
            assert figure(html, "latency-median") == f"{stats.latency_median_ms:,.0f} ms" == "610 ms"
            assert figure(html, "latency-p95") == f"{stats.latency_p95_ms:,.0f} ms" == "1,200 ms"
            data = json.loads(re.search(r'id="chart-data">([^<]*)<', html).group(1))  # type: ignore[union-attr]
            assert sum(data["answered"]) == stats.answered and sum(data["not_answered"]) == stats.not_answered
            assert data["platforms"] == ["slack", "teams"]
            assert data["channels"][0] == "slack:C1" and data["channel_answered"][0] == 3  # the busiest first
            assert "slack:C1" in html and "teams:19:team@thread.tacv2" in html
        with_client(bot, admin_settings(tmp_path, admin_plain_http=True), test)
    if backend == "sqlite":  # the command's own output, for the same period
        capsys.readouterr()
        assert main(["stats", "--since", SINCE, "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert (printed["questions"], printed["answer_rate"], printed["helpful_rate"],
                printed["latency_median_ms"], printed["latency_p95_ms"]) == (10, 0.5, 0.8, 610.0, 1200.0)


@contextmanager
def contextlib_for(backend: str, bot: Bot) -> Iterator[Bot]:
    if backend == "sqlite":
        yield bot
    else:
        with mongo_conversations(bot) as on_mongo:
            yield on_mongo


def cookie_of(client: Client) -> dict[str, str]:
    """The plain-http session cookie the client keeps (sent explicitly: clearer in the tests)."""
    morsel = client.session.cookie_jar.filter_cookies(client.make_url("/admin")).get("navibot_admin")
    return {"Cookie": f"navibot_admin={morsel.value}"} if morsel else {}


@pytest.mark.parametrize("backend", ["sqlite", "mongodb"])
def test_knowledge_gaps_group_by_meaning_largest_first_with_csv(seeded: Bot, tmp_path: Path, backend: str) -> None:
    with contextlib_for(backend, seeded) as bot:
        async def test(client: Client) -> None:
            await log_in(client)
            html = await (await client.get(f"/admin/gaps?since={SINCE}")).text()
            topics = re.findall(r'class="topic-link" href="([^"]+)">([^<]+)</a>\s*<span class="count"[^>]*>(\d+)', html)
            assert [int(n) for _, _, n in topics] == sorted((int(n) for _, _, n in topics), reverse=True)
            first_href, first_title, first_count = topics[0]
            assert "LIHEAP" in first_title and first_count == "3"  # three wordings of one question
            appeal = [t for t in topics if "appeal" in t[1].lower()]
            assert len(appeal) == 1 and appeal[0][2] == "2"
            assert any("Who can get WIC?" in t[1] for t in topics)  # the 👎 answer is a gap too
            assert "Closest documents:" in html and "LIHEAP energy assistance" in html
            detail = await (await client.get(first_href.replace("&amp;", "&"))).text()
            assert detail.count("LIHEAP office") >= 2 and "no answer" in detail
            response = await client.get(f"/admin/gaps.csv?since={SINCE}")
            assert response.status == 200 and response.headers["Content-Type"].startswith("text/csv")
            assert "attachment" in response.headers["Content-Disposition"]
            body = await response.text()
            assert body.startswith("\ufeff")
            rows = list(csv.DictReader(io.StringIO(body[1:])))
            assert rows[0]["questions"] == "3" and "LIHEAP" in rows[0]["examples"]
            assert sum(int(r["questions"]) for r in rows) == 6  # 5 no-answers and one 👎
            missing = await client.get(f"/admin/gaps/99?since={SINCE}")
            assert missing.status == 400 and "no topic 99" in await missing.text()
        with_client(bot, admin_settings(tmp_path, admin_plain_http=True), test)


def test_feedback_shows_each_thumbs_down_and_thumbs_up_per_document(seeded: Bot, tmp_path: Path) -> None:
    async def test(client: Client) -> None:
        await log_in(client)
        html = await (await client.get(f"/admin/feedback?since={SINCE}")).text()
        assert "It left out the age limit" in html and "Who can get WIC?" in html
        assert "· teams:19:team@thread.tacv2</p>" in html  # where it was asked
        assert "The rules of WIC for women, infants and children in one paragraph." in html  # its quote
        assert re.search(r"SNAP for college students <span class=\"muted\">demo_kb/snap-students</span></td><td>3",
                         html)
        other = await (await client.get(f"/admin/feedback?since={SINCE}&channel=slack:C1")).text()
        assert "It left out the age limit" not in other and "No 👎 in this period in slack:C1" in other
        assert (await client.get("/admin/feedback?page=x")).status == 400
    with_client(seeded, admin_settings(tmp_path, admin_plain_http=True), test)


def test_documents_most_never_cited_stale_and_failed_pages(seeded: Bot, tmp_path: Path) -> None:
    settings = admin_settings(tmp_path, admin_plain_http=True, admin_stale_days=30)
    state = CrawlState(state_path_for(settings.store_path))
    state.put(PageState("https://agency.example/liheap", "agency.example/", "demo_kb/liheap", "h"))
    state.record_failures({"https://agency.example/gone": "HTTP 404 (gone)"})
    state.close()
    with sqlite3.connect(state_path_for(settings.store_path)) as db:
        db.execute("UPDATE pages SET seen_at = '2024-01-02T00:00:00+00:00'")

    async def test(client: Client) -> None:
        await log_in(client)
        html = await (await client.get(f"/admin/documents?since={SINCE}")).text()
        most = html[html.index('id="most-cited"'):html.index("</table>", html.index('id="most-cited"'))]
        assert most.index("SNAP for college students") < most.index("WIC for women")
        never = html[html.index('id="never-cited"'):]
        assert "Child Tax Credit" in never.split("</ul>")[0]
        assert "SNAP for college students" not in never.split("</ul>")[0]
        assert "last crawled 2024-01-02" in html and "https://agency.example/gone" in html
        assert "HTTP 404 (gone)" in html
    with_client(seeded, settings, test)


def test_text_is_escaped_and_bad_input_is_a_short_message(seeded: Bot, tmp_path: Path) -> None:
    seeded.conversations.save_answer(AnswerRecord(
        "evil", "slack|T1|C9|x", "slack", "U9", '<script>alert("x")</script> & <b>bold</b>', "", "no", "no_answer",
        "concise", [], datetime.now(UTC).isoformat(timespec="milliseconds"), 10.0))

    async def test(client: Client) -> None:
        await log_in(client)
        html = await (await client.get("/admin/gaps?days=7")).text()
        assert "<script>alert" not in html and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;b&gt;" in html
        for bad, words in (("since=2026-13-01", "write the date as YYYY-MM-DD"), ("days=abc", "give a number of days"),
                           ("since=2026-03-05&until=2026-03-01", "is before")):
            response = await client.get(f"/admin?{bad}")
            text = await response.text()
            assert response.status == 400 and words in text and "Traceback" not in text
        script = await client.get("/admin/static/admin.js")
        assert script.status == 200 and "chart-data" in await script.text()
        assert (await client.get("/admin/static/chart.umd.min.js")).status == 200
        assert (await client.get("/admin/static/../routes.py")).status in (403, 404)
        page = await (await client.get("/admin")).text()
        assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing loads from elsewhere
    with_client(seeded, admin_settings(tmp_path, admin_plain_http=True), test)


def test_the_views_follow_new_answers_and_changed_ratings(seeded: Bot, tmp_path: Path) -> None:
    async def test(client: Client) -> None:
        await log_in(client)
        assert figure(await (await client.get(f"/admin?since={SINCE}")).text(), "questions") == "10"
        seeded.conversations.save_answer(AnswerRecord(
            "late", "slack|T1|C7|z", "slack", "U7", "Is SSI counted as income for SNAP?", "", "Yes [1].", "answer",
            "concise", [], datetime.now(UTC).isoformat(timespec="milliseconds"), 100.0))
        seeded.conversations.record_feedback("a0", "U0", False, "Outdated")  # a 👍 changed to 👎
        html = await (await client.get(f"/admin?since={SINCE}")).text()
        assert figure(html, "questions") == "11" and figure(html, "helpful-rate") == "60.0%"
        assert "slack:C7" in html
        feedback = await (await client.get(f"/admin/feedback?since={SINCE}")).text()
        assert "Outdated" in feedback
        stats = compute_stats(seeded.conversations, parse_period({"since": SINCE}).since)
        assert (stats.questions, stats.helpful, stats.ratings) == (11, 3, 5)  # the same as navibot stats
    with_client(seeded, admin_settings(tmp_path, admin_plain_http=True), test)


def test_a_store_that_fails_is_a_short_page_not_a_500(seeded: Bot, tmp_path: Path) -> None:
    async def test(client: Client) -> None:
        await log_in(client)
        seeded.conversations.close()  # every read now fails (sqlite3.ProgrammingError)
        response = await client.get("/admin")
        text = await response.text()
        assert response.status == 503 and "Reading the bot&#39;s stores failed" in text and "Traceback" not in text
    with_client(seeded, admin_settings(tmp_path, admin_plain_http=True), test)
    seeded.conversations = SQLiteConversationStore(tmp_path / "conversations.sqlite3")  # for the fixture's close


def test_a_document_url_is_linked_only_when_it_is_a_web_address(seeded: Bot, tmp_path: Path) -> None:
    page = AdminPage(seeded, admin_settings(tmp_path))
    rows = [DocumentRow("d1", "Good <page>", "https://agency.example/a?b=1&c=2"),
            DocumentRow("d2", "Bad page", "javascript:alert(document.cookie)"),
            DocumentRow("d3", "Hidden turn", "https://agency.example/\u202egpj.exe")]
    html = page.render("documents.html", documents=DocumentsView(3, never=rows), stale_days=30,
                       period=parse_period({}), period_query="days=30", active="documents", user="admin",
                       plain=False).text or ""
    assert '<a href="https://agency.example/a?b=1&amp;c=2" rel="noopener noreferrer">Good &lt;page&gt;</a>' in html
    assert "javascript:" not in html and "<li>Bad page</li>" in html
    assert "\u202e" not in html and "<li>Hidden turn</li>" in html


def test_the_wait_after_wrong_tokens_ends_and_quiet_addresses_are_forgotten(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path) -> None:
    from aiohttp.test_utils import make_mocked_request

    from bot.server.admin import auth as auth_module
    from bot.server.admin.auth import AdminAuth, Refused

    now = [0.0]
    guard = AdminAuth(admin_settings(tmp_path), clock=lambda: now[0])
    monkeypatch.setattr(auth_module, "MAX_ADDRESSES", 3)

    def attempt(address: str, token: str) -> int:
        request = make_mocked_request("POST", "/admin/login")
        monkeypatch.setattr(type(request), "remote", property(lambda _self: address))
        try:
            guard.check_token(request, token)
        except Refused as refused:
            return refused.status
        return 200

    assert [attempt("10.0.0.1", "wrong-token-wrong-token") for _ in range(5)] == [401] * 5
    assert attempt("10.0.0.1", TOKEN) == 429
    now[0] += 601  # ten minutes later
    assert attempt("10.0.0.1", TOKEN) == 200 and "10.0.0.1" not in guard.failures
    for n in range(5):
        attempt(f"10.0.1.{n}", "wrong-token-wrong-token")
        now[0] += 700
    assert len(guard.failures) <= 3  # the quiet ones were forgotten


def test_admin_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NAVIBOT_ADMIN_PROXY_HEADER", "X-Forwarded-Email")
    monkeypatch.setenv("NAVIBOT_ADMIN_USERS", " lead@agency.gov, content@agency.gov ,")
    monkeypatch.setenv("NAVIBOT_ADMIN_PROXY_IPS", "10.0.0.0/8, ::1")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.admin_enabled and settings.admin_token is None
    assert settings.admin_users == ["lead@agency.gov", "content@agency.gov"]
    assert settings.admin_proxy_ips == ["10.0.0.0/8", "::1"]
    monkeypatch.setenv("NAVIBOT_ADMIN_PROXY_IPS", "the-proxy")
    with pytest.raises(ValueError, match="'the-proxy' is not an IP address or network"):
        Settings(_env_file=None)  # type: ignore[call-arg]
    monkeypatch.delenv("NAVIBOT_ADMIN_PROXY_HEADER")
    monkeypatch.delenv("NAVIBOT_ADMIN_PROXY_IPS")
    assert not Settings(_env_file=None).admin_enabled  # type: ignore[call-arg]


def test_views_waiting_for_the_start_up_read_leave_the_default_thread_pool_free(seeded: Bot, tmp_path: Path) -> None:
    import threading

    release = threading.Event()

    async def go() -> None:
        app = web.Application()
        add_admin_routes(app, seeded, admin_settings(tmp_path, admin_plain_http=True))
        page = app[ADMIN]
        slow = page.snapshot.refresh
        page.snapshot.refresh = lambda *args: (release.wait(10), slow(*args))[1]  # type: ignore[method-assign]
        async with TestClient(TestServer(app)) as client:
            await log_in(client)
            views = [asyncio.ensure_future(client.get("/admin")) for _ in range(8)]  # all wait for the read
            await asyncio.sleep(0.2)
            # meanwhile the chat adapters' quick store calls (asyncio's default pool) go through at once
            quick = await asyncio.wait_for(asyncio.gather(*(asyncio.to_thread(lambda: 1) for _ in range(16))), 2)
            assert quick == [1] * 16 and not any(v.done() for v in views)
            release.set()
            assert [(await v).status for v in views] == [200] * 8
    asyncio.run(go())


def test_two_views_of_one_period_group_its_gaps_once(seeded: Bot, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.server.admin import gaps, routes

    calls: list[int] = []
    real = gaps.group_by_meaning

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        time.sleep(0.5)  # slow enough for the second view to arrive while the first groups
        return real(*args, **kwargs)

    monkeypatch.setattr(routes, "group_by_meaning", counted)

    async def test(client: Client) -> None:
        await log_in(client)
        assert isinstance(client.server, TestServer)
        warming = client.server.app[ADMIN].warming
        assert warming is not None
        await warming
        calls.clear()  # the start-up grouping of the default period
        first, second = await asyncio.gather(client.get("/admin/gaps?days=7"), client.get("/admin/gaps.csv?days=7"))
        assert (first.status, second.status) == (200, 200)
        assert calls == [1]
    with_client(seeded, admin_settings(tmp_path, admin_plain_http=True), test)
