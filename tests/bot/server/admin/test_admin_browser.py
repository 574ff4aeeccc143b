"""The admin page in a real headless Chromium (Debian's `chromium`, driven by Playwright; no browser is ever
downloaded), served by `navibot serve`'s application on a seeded store: refused without login, log in, the
overview's figures and charts, a knowledge-gap topic, the CSV download.

Set NAVIBOT_ADMIN_SCREENSHOTS=<folder> to also save a screenshot of each view (docs/images/admin-*.png are made
this way)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from aiohttp import web
from pydantic import SecretStr

from adapters.slack.settings import SlackSettings
from adapters.teams.settings import TeamsSettings
from bot.config.settings import Settings
from bot.server.app import build_server_app
from bot.wiring.runtime import Bot, build_bot
from rag.crawl.state import CrawlState, state_path_for
from tests.fakes.admin_seed import DAY0, seed

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright_api = pytest.importorskip("playwright.async_api", reason="playwright (the dev extra) is not installed")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Debian's chromium is not installed (.ci/run installs it: apt-get install "
                                       "chromium)")

TOKEN = "correct-horse-battery-staple"
SINCE = DAY0.date().isoformat()


async def serve(bot: Bot, settings: Settings) -> tuple[web.AppRunner, int]:
    teams = TeamsSettings(_env_file=None, allow_anonymous=True)  # type: ignore[call-arg]
    app = build_server_app(bot, settings, SlackSettings(_env_file=None), teams)  # type: ignore[call-arg]
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


def test_admin_page_in_headless_chromium(demo_store: Path, tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, admin_token=SecretStr(TOKEN),  # type: ignore[call-arg]
                        admin_plain_http=True, admin_stale_days=200)
    state = CrawlState(state_path_for(settings.store_path))  # the last crawl missed a page
    state.record_failures({"https://www.fns.usda.gov/wic/moved-page": "HTTP 404 (gone)"})
    state.close()
    bot = build_bot(settings, demo_store, tmp_path / "conversations.sqlite3")
    seed(bot.conversations)
    shots = os.environ.get("NAVIBOT_ADMIN_SCREENSHOTS")
    try:
        asyncio.run(drive(bot, settings, tmp_path, Path(shots) if shots else None))
    finally:
        bot.close()


async def drive(bot: Bot, settings: Settings, tmp_path: Path, shots: Path | None) -> None:
    runner, port = await serve(bot, settings)
    base = f"http://127.0.0.1:{port}"
    problems: list[str] = []
    try:
        async with playwright_api.async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True)
            context = await browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
            page = await context.new_page()
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
            page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
            page.on("request", lambda r: None if r.url.startswith(base) else problems.append(f"outside: {r.url}"))

            # refused without login: the page sends to the login form, the CSV is 401
            await page.goto(f"{base}/admin?since={SINCE}")
            assert page.url.startswith(f"{base}/admin/login")
            assert (await page.request.get(f"{base}/admin/gaps.csv?since={SINCE}")).status == 401
            await page.fill("#token", "a-wrong-token-for-sure")
            await page.click("button[type=submit]")
            assert "That token is not right." in await page.inner_text("main")
            if shots:
                await page.screenshot(path=str(shots / "admin-login.png"))

            await page.fill("#token", TOKEN)
            await page.click("button[type=submit]")
            await page.wait_for_url(f"{base}/admin?since={SINCE}")
            assert await page.inner_text("#questions") == "10"
            assert await page.inner_text("#answer-rate") == "50.0%"
            assert await page.inner_text("#helpful-rate") == "80.0%"
            assert await page.inner_text("#latency-median") == "610 ms"
            await page.wait_for_selector("body[data-charts=drawn]")
            width = await page.eval_on_selector("#per-day", "c => c.width")
            assert width > 300  # Chart.js sized and drew the canvas
            for chart in ("#by-platform", "#by-channel"):
                assert await page.eval_on_selector(chart, "c => c.width") > 100
            if shots:
                await page.screenshot(path=str(shots / "admin-overview.png"), full_page=True)

            await page.click("text=Knowledge gaps")
            await page.wait_for_selector(".topic-link")
            if shots:
                await page.screenshot(path=str(shots / "admin-gaps.png"), full_page=True)
            await page.click(".topic-link >> nth=0")
            await page.wait_for_selector("#topic-title")
            assert "LIHEAP" in await page.inner_text("#topic-title")
            assert await page.inner_text("#topic-count") == "3"
            await page.go_back()
            async with page.expect_download() as download_info:
                await page.click("#download-csv")
            download = await download_info.value
            saved = tmp_path / "gaps.csv"
            await download.save_as(saved)
            text = saved.read_text(encoding="utf-8-sig")
            assert text.startswith("topic,questions,no_answer,thumbs_down,examples,closest_documents")
            assert "LIHEAP" in text.splitlines()[1]

            await page.click("text=Feedback")
            assert "It left out the age limit" in await page.inner_text("main")
            if shots:
                await page.screenshot(path=str(shots / "admin-feedback.png"), full_page=True)
            await page.click("text=Documents")
            shown = await page.inner_text("main")
            assert "Never cited in this period" in shown and "updated 2026-01-15" in shown  # the demo pages' date
            assert "https://www.fns.usda.gov/wic/moved-page" in shown
            if shots:
                await page.screenshot(path=str(shots / "admin-documents.png"), full_page=True)

            await page.click("text=Log out")
            await page.wait_for_url(f"{base}/admin/login")
            await page.goto(f"{base}/admin")
            assert page.url.startswith(f"{base}/admin/login")  # the session is over
            await browser.close()
    finally:
        await runner.cleanup()
    # no script error, no CSP violation, nothing fetched from elsewhere; only the wrong token's 401
    login = f"{base}/admin/login"
    assert [p for p in problems if p not in (f"401 {login}", "Failed to load resource: the server responded with a "
                                             "status of 401 (Unauthorized)")] == []
