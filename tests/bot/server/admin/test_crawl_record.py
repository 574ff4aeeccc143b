"""What the crawl leaves for the admin page's Documents view: the pages the last crawl could not fetch (replaced
by each crawl) and, per document, when its page was last crawled successfully (a 304 counts)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.wiring.runtime import Core
from rag.crawl.state import CrawlState, state_path_for
from tests.fakes.crawl_site import Site, fixture_site
from tests.rag.crawl.test_crawl import PDF, _small_site, run


def test_navibot_crawl_records_the_pages_it_could_not_fetch(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "k.sqlite3"
    with fixture_site(PDF) as site:
        assert main(["crawl", site.url("/benefits/"), "--delay", "0", "--store", str(store)]) == 0
        state = CrawlState(state_path_for(store))
        try:
            failed = {url: reason for url, reason, _ in state.failures()}
        finally:
            state.close()
    capsys.readouterr()
    assert failed[site.url("/benefits/missing.html")] == "HTTP 404 (gone)"
    assert failed[site.url("/benefits/loop-a.html")].startswith("redirect loop:")
    state = CrawlState(state_path_for(store))
    try:
        state.record_failures({})  # the next crawl's list replaces it
        assert state.failures() == []
    finally:
        state.close()


def test_a_page_that_answers_not_modified_counts_as_crawled_now(core: Core) -> None:
    routes = _small_site()
    routes["/kb/wic.html"].last_modified = "Sun, 01 Mar 2026 12:00:00 GMT"
    path = state_path_for(core.store.path)  # type: ignore[attr-defined]
    with Site(routes) as local:
        run(core, local.url("/kb/"))
        with sqlite3.connect(path) as db:
            db.execute("UPDATE pages SET seen_at = '2020-01-01T00:00:00+00:00'")
        second = run(core, local.url("/kb/"))
    assert second.not_modified >= 1
    state = CrawlState(path)
    try:
        seen = state.last_seen()
    finally:
        state.close()
    wic = next(when for url, when in seen.values() if url.endswith("/kb/wic.html"))
    assert wic > "2026"
