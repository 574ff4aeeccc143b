"""The crawler end to end: the real aiohttp client against a local aiohttp site served from test fixtures."""

from __future__ import annotations

import asyncio
import io
import re
import socket
import sqlite3
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.cli.main import main
from bot.wiring.runtime import Core
from rag.crawl import crawler
from rag.crawl.crawler import CrawlConfig, CrawlResult, crawl
from rag.crawl.fetch import FetchPolicy
from rag.crawl.pages import Page, build_page
from rag.crawl.state import CrawlState, state_path_for
from rag.search.sqlite_store import SQLiteKnowledgeStore
from tests.conftest import write
from tests.fakes.crawl_site import Resp, Site, fixture_site, redirect
from tests.rag.ingest.test_loaders import _pdf_bytes

PDF = _pdf_bytes([["SNAP application form", "Fill in every section of this application for SNAP benefits."],
                  ["Signatures", "Sign and date the last page before you return the form."]])
FAST = FetchPolicy(timeout=2.0, retries=1, backoff=0.01, max_backoff=0.05)


def run(core: Core, *starts: str, progress: io.StringIO | None = None, **options: object) -> CrawlResult:
    config = CrawlConfig(start_urls=list(starts), delay=options.pop("delay", 0.0),  # type: ignore[arg-type]
                         policy=options.pop("policy", FAST), **options)  # type: ignore[arg-type]
    state = CrawlState(state_path_for(core.store.path))  # type: ignore[attr-defined]
    try:
        return asyncio.run(crawl(config, core.ingestor, state, progress))
    finally:
        state.close()


def stored(core: Core) -> dict[str, str]:
    """doc_id → all chunk text of the document."""
    texts: dict[str, str] = {d.doc_id: "" for d in core.store.documents()}
    with sqlite3.connect(core.store.path) as db:  # type: ignore[attr-defined]
        ids = [cid for (cid,) in db.execute("SELECT chunk_id FROM chunks ORDER BY doc_id, ordinal")]
    for chunk in core.store.get_chunks(ids):  # the store keeps a chunk's text as its paragraphs (issue 21)
        texts[chunk.doc_id] += chunk.text + "\n"
    return texts


def web_id(site: Site, path: str) -> str:
    return f"web/127.0.0.1:{site.port}/{path}".rstrip("/")


def page(title: str, text: str, links: str = "") -> str:
    return (f"<html><head><title>{title}</title></head>"
            f"<body><main><h1>{title}</h1><p>{text}</p>{links}</main></body></html>")


@pytest.fixture
def site() -> Iterator[Site]:
    with fixture_site(PDF) as served:
        yield served


# ------------------------------------------------------------------------------------- one crawl of the fixtures


def test_crawl_follows_nested_pages_stays_in_scope_and_fetches_each_url_once(core: Core, site: Site) -> None:
    result = run(core, site.url("/benefits/"))

    docs = stored(core)
    expected = {"benefits", "benefits/snap", "benefits/snap/students.html", "benefits/snap/work-rules.html",
                "benefits/medicaid.html", "benefits/wic.html", "benefits/contact.html", "files/snap-application.pdf"}
    assert set(docs) == {web_id(site, p) for p in expected}
    assert result.ingest.added == len(expected) and result.complete
    # Main content only: no cookie banner, menu or footer text; the title comes from the page's h1.
    index = docs[web_id(site, "benefits")]
    assert "proof of income and identity" in index
    assert "Cookie settings" not in index and "100 Main Street" not in index and "Contact a navigator" not in index
    titles = {d.doc_id: d.title for d in core.store.documents()}
    assert titles[web_id(site, "benefits")] == "Benefits for families"
    assert "half-time" in docs[web_id(site, "benefits/snap/students.html")]  # nested two levels down

    paths = site.paths()
    assert Counter(paths).most_common(1)[0][1] == 1, "a URL was fetched twice"
    assert paths[0] == "/robots.txt"
    for outside in ("/other/outside.html", "/cookies.html", "/privacy.html", "/static/logo.png",
                    "/benefits/private/staff-notes.html", "/benefits/snap/students.html?print=1"):
        assert outside not in paths  # out of scope, not a page, or disallowed by robots.txt
    assert {h.host for h in site.hits} == {f"127.0.0.1:{site.port}"}  # the localhost mirror link is another host
    assert all(h.headers["User-Agent"].startswith("Navibot/0.1 (+https://") for h in site.hits)
    assert result.skipped[site.url("/benefits/private/staff-notes.html")] == "disallowed by robots.txt"


def test_canonical_url_names_the_document_fetched_under_a_variant_url(core: Core, site: Site) -> None:
    result = run(core, site.url("/benefits/snap/"), concurrency=1)  # one worker: the variant is visited first
    ids = set(stored(core))
    assert web_id(site, "benefits/snap/work-rules.html") in ids
    assert not any("ref=menu" in i for i in ids)
    urls = {d.source_path for d in core.store.documents()}
    assert site.url("/benefits/snap/work-rules.html") in urls
    # The canonical URL itself, linked from another page and queued meanwhile, needs no request of its own.
    assert "/benefits/snap/work-rules.html" not in site.paths()
    assert "canonical" in result.skipped[site.url("/benefits/snap/work-rules.html")]


def test_redirect_loop_and_404_are_reported_and_the_crawl_goes_on(core: Core, site: Site) -> None:
    result = run(core, site.url("/benefits/"))
    assert result.failures[site.url("/benefits/missing.html")] == "HTTP 404 (gone)"
    assert result.failures[site.url("/benefits/loop-a.html")].startswith("redirect loop:")
    assert site.paths().count("/benefits/loop-a.html") == 1 and site.paths().count("/benefits/loop-b.html") == 1
    assert web_id(site, "benefits/wic.html") in stored(core)


def test_linked_pdf_outside_the_start_path_is_ingested_with_its_pages(core: Core, site: Site) -> None:
    run(core, site.url("/benefits/"))
    text = stored(core)[web_id(site, "files/snap-application.pdf")]
    assert "Fill in every section" in text and "Sign and date the last page" in text
    with sqlite3.connect(core.store.path) as db:  # type: ignore[attr-defined]
        pages = {p for (p,) in db.execute(
            "SELECT s.page FROM subchunks s JOIN chunks c ON s.chunk = c.id WHERE c.chunk_id LIKE ?", ("%pdf%",))}
    assert pages == {1, 2}


def test_sitemap_index_leads_to_pages_no_page_links(core: Core, site: Site) -> None:
    result = run(core, site.url("/benefits/"), sitemaps=[site.url("/sitemap_index.xml")])
    assert web_id(site, "benefits/orphan.html") in stored(core)
    paths = site.paths()
    assert paths.count("/sitemaps/benefits.xml") == 1 and paths.count("/sitemaps/snap.xml") == 1
    assert "/other/outside.html" not in paths and result.complete


def test_sitemap_alone_starts_the_crawl(core: Core, site: Site) -> None:
    result = run(core, sitemaps=[site.url("/sitemaps/benefits.xml")])
    ids = set(stored(core))
    assert web_id(site, "benefits/orphan.html") in ids and web_id(site, "benefits/medicaid.html") in ids
    assert result.fetched >= 3


def test_gzipped_sitemap_and_a_broken_one(core: Core) -> None:
    urlset = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
              '<url><loc>{base}/a.html</loc></url></urlset>')
    with Site({"/a.html": Resp(page("Food banks", "Food banks give groceries at no cost.")),
               "/sitemap.xml.gz": Resp(urlset, content_type="application/gzip", gzip=True),
               "/bad.xml": Resp("<urlset><url><loc>", content_type="application/xml")}) as local:
        result = run(core, sitemaps=[local.url("/sitemap.xml.gz"), local.url("/bad.xml")], prune=True)
    assert web_id(local, "a.html") in stored(core)
    assert result.failures[local.url("/bad.xml")].startswith("sitemap: not valid XML")
    assert not result.pruned  # an unreadable sitemap may have listed pages we did not see


# ------------------------------------------------------------------------------------- redirects


def test_redirect_is_followed_and_the_final_url_names_the_document(core: Core, site: Site) -> None:
    run(core, site.url("/benefits/old-wic.html"))
    docs = core.store.documents()
    wic = [d for d in docs if d.doc_id == web_id(site, "benefits/wic.html")]
    assert wic and wic[0].source_path == site.url("/benefits/wic.html")
    assert not any("old-wic" in d.doc_id for d in docs)


def test_a_start_url_that_moved_takes_the_scope_with_it(core: Core, site: Site) -> None:
    site.routes["/welcome"] = redirect("/benefits/")
    result = run(core, site.url("/welcome"))
    assert web_id(site, "benefits/snap/students.html") in stored(core)
    assert result.complete


# ------------------------------------------------------------------------------------- sync with the site


def _small_site() -> dict[str, Resp]:
    links = "".join(f'<a href="/kb/{name}.html">{name}</a> ' for name in ("snap", "wic", "liheap"))
    return {
        "/kb/": Resp(page("Knowledge base", "Program pages for navigators.", links)),
        "/kb/snap.html": Resp(page("SNAP", "SNAP helps households buy food.")),
        "/kb/wic.html": Resp(page("WIC", "WIC serves mothers and young children.")),
        "/kb/liheap.html": Resp(page("LIHEAP", "LIHEAP helps pay heating bills.")),
    }


def test_pages_removed_or_unlinked_are_pruned_only_with_prune(core: Core, tmp_path: Path) -> None:
    # Documents from elsewhere must survive: a local file, and another section of the same host.
    notes = write(tmp_path / "notes" / "intake.md", "# Intake\n\nAsk for the household size first.\n")
    core.ingestor.ingest_paths([notes.parent])
    with Site(_small_site()) as local:
        local.routes["/other/news.html"] = Resp(page("News", "County news for residents."))
        run(core, local.url("/other/news.html"))
        first = run(core, local.url("/kb/"))
        assert first.ingest.added == 4
        del local.routes["/kb/wic.html"]  # now a 404
        local.routes["/kb/"] = Resp(page("Knowledge base", "Program pages.", '<a href="/kb/snap.html">s</a> '
                                         '<a href="/kb/wic.html">w</a>'))  # liheap no longer linked
        kept = run(core, local.url("/kb/"))
        assert kept.ingest.removed == 0 and not kept.pruned
        assert web_id(local, "kb/liheap.html") in stored(core)
        pruned = run(core, local.url("/kb/"), prune=True)
    assert pruned.pruned and pruned.ingest.removed == 2
    assert pruned.failures[local.url("/kb/wic.html")] == "HTTP 404 (gone)"
    ids = set(stored(core))
    assert web_id(local, "kb/wic.html") not in ids and web_id(local, "kb/liheap.html") not in ids
    assert {web_id(local, "kb"), web_id(local, "kb/snap.html"), web_id(local, "other/news.html"),
            "notes/intake"} <= ids


def test_an_incomplete_crawl_never_prunes(core: Core) -> None:
    with Site(_small_site()) as local:
        run(core, local.url("/kb/"))
        local.routes["/kb/"] = Resp("<h1>Down for maintenance</h1>", status=503)  # the start page fails
        down = run(core, local.url("/kb/"), prune=True)
        local.routes.update(_small_site())
        local.routes["/kb/snap.html"] = Resp(status=500)  # a page fails: its links may be missed
        flaky = run(core, local.url("/kb/"), prune=True)
        cut = run(core, local.url("/kb/"), prune=True, max_pages=2)
    for result in (down, flaky, cut):
        assert not result.pruned and result.ingest.removed == 0 and result.incomplete
    assert any("max-pages" in reason for reason in cut.incomplete) and cut.unvisited == 2
    assert len(stored(core)) == 4


def test_second_run_sends_conditional_requests_and_reembeds_nothing(core: Core) -> None:
    routes = _small_site()
    routes["/kb/"].etag = '"kb-v1"'
    for name in ("snap", "wic", "liheap"):
        routes[f"/kb/{name}.html"].last_modified = "Sun, 01 Mar 2026 12:00:00 GMT"
    with Site(routes) as local:
        run(core, local.url("/kb/"))
        before = {d.doc_id: d.content_hash for d in core.store.documents()}
        with sqlite3.connect(core.store.path) as db:  # type: ignore[attr-defined]
            ingested_at = dict(db.execute("SELECT doc_id, ingested_at FROM documents"))
        local.hits.clear()
        second = run(core, local.url("/kb/"), prune=True)
    assert local.hits_for("/kb/")[0].headers.get("If-None-Match") == '"kb-v1"'
    assert local.hits_for("/kb/wic.html")[0].headers.get("If-Modified-Since") == "Sun, 01 Mar 2026 12:00:00 GMT"
    # The pages behind the 304 start page were still visited: its links were remembered.
    assert second.not_modified == 4 and second.fetched == 4
    assert (second.ingest.added, second.ingest.updated, second.ingest.chunks) == (0, 0, 0)
    assert second.pruned and second.ingest.removed == 0  # not modified means seen
    with sqlite3.connect(core.store.path) as db:  # type: ignore[attr-defined]
        assert dict(db.execute("SELECT doc_id, ingested_at FROM documents")) == ingested_at
    assert {d.doc_id: d.content_hash for d in core.store.documents()} == before


def test_validators_are_not_trusted_for_a_document_missing_from_the_store(core: Core) -> None:
    routes = _small_site()
    routes["/kb/snap.html"].etag = '"snap-v1"'
    with Site(routes) as local:
        run(core, local.url("/kb/"))
        core.store.delete_documents([web_id(local, "kb/snap.html")])  # e.g. removed by hand
        local.hits.clear()
        again = run(core, local.url("/kb/"))
    assert "If-None-Match" not in local.hits_for("/kb/snap.html")[0].headers
    assert again.ingest.added == 1 and web_id(local, "kb/snap.html") in stored(core)


def test_new_tags_are_applied_even_to_pages_that_did_not_change(core: Core) -> None:
    routes = _small_site()
    for spec in routes.values():
        spec.etag = '"v1"'
    with Site(routes) as local:
        run(core, local.url("/kb/"))
        local.hits.clear()
        tagged = run(core, local.url("/kb/"), tags=["snap"])
    assert not any("If-None-Match" in h.headers for h in local.hits)  # validators were for the old tags
    assert tagged.not_modified == 0 and tagged.ingest.updated == 4
    assert {hit.chunk.doc_id for hit in core.retriever.search("SNAP food", tags=["snap"])} >= {web_id(local, "kb")}


def test_a_re_crawl_without_groups_keeps_restricted_pages_restricted(core: Core) -> None:
    """A scheduled re-crawl of an intranet section crawled with --groups, run without them, must not publish its
    pages to every chat."""
    with Site(_small_site()) as local:
        run(core, local.url("/kb/"), groups=["medicaid-staff"])
        again = run(core, local.url("/kb/"))
    assert again.ingest.kept_restricted == 4 and again.ingest.added == 0
    assert {d.groups for d in core.store.documents()} == {("medicaid-staff",)}
    assert not core.retriever.search("SNAP food", groups=["all"])


def test_forbidden_page_blocks_prune_but_a_non_page_link_does_not(core: Core) -> None:
    routes = _small_site()
    routes["/kb/"].body = str(routes["/kb/"].body).replace("</main>", '<a href="/kb/data">data</a></main>')
    routes["/kb/data"] = Resp('{"a": 1}', content_type="application/json")
    with Site(routes) as local:
        clean = run(core, local.url("/kb/"), prune=True)
        local.routes["/kb/wic.html"] = Resp("Forbidden", status=403)  # a firewall, say: its links are hidden
        blocked = run(core, local.url("/kb/"), prune=True)
    assert clean.pruned and clean.failures[local.url("/kb/data")].startswith("not a web page or PDF")
    assert not blocked.pruned and blocked.failures[local.url("/kb/wic.html")] == "HTTP 403"
    assert web_id(local, "kb/wic.html") in stored(core)


def test_unchanged_content_without_validators_is_not_reembedded(core: Core) -> None:
    with Site(_small_site()) as local:
        run(core, local.url("/kb/"))
        local.routes["/kb/wic.html"] = Resp(page("WIC", "WIC now also serves fathers."))
        second = run(core, local.url("/kb/"))
    assert (second.ingest.added, second.ingest.updated, second.ingest.unchanged) == (0, 1, 3)
    assert "fathers" in stored(core)[web_id(local, "kb/wic.html")]


# ------------------------------------------------------------------------------------- limits and failures


def test_max_pages_stops_the_crawl(core: Core) -> None:
    links = "".join(f'<a href="/p/{i}.html">page {i}</a> ' for i in range(20))
    routes = {"/p/": Resp(page("Index", "All pages.", links))}
    routes.update({f"/p/{i}.html": Resp(page(f"Page {i}", f"Text of page {i}.")) for i in range(20)})
    with Site(routes) as local:
        result = run(core, local.url("/p/"), max_pages=5, concurrency=3)
    assert len([p for p in local.paths() if p != "/robots.txt"]) == 5
    assert result.unvisited == 16 and not result.complete


def test_slow_page_times_out_without_stopping_the_run(core: Core) -> None:
    routes = _small_site()
    routes["/kb/liheap.html"] = Resp(page("LIHEAP", "Slow."), delay=3.0)
    policy = FetchPolicy(timeout=0.5, retries=1, backoff=0.01)
    with Site(routes) as local:
        result = run(core, local.url("/kb/"), policy=policy, prune=True)
    assert result.failures[local.url("/kb/liheap.html")] == "timed out after 0.5 s"
    assert local.paths().count("/kb/liheap.html") == 2  # retried once
    assert result.ingest.added == 3 and not result.pruned  # a timed-out page may hide links


def test_huge_page_is_not_read_past_the_limit(core: Core) -> None:
    big = page("Huge", "word " * 100_000)  # ~500 KB
    routes = _small_site()
    routes["/kb/snap.html"] = Resp(big)
    routes["/kb/wic.html"] = Resp(big, stream=True)  # no Content-Length: cut off while reading
    policy = FetchPolicy(timeout=2.0, retries=0, max_bytes=100_000)
    with Site(routes) as local:
        result = run(core, local.url("/kb/"), policy=policy)
    assert result.failures[local.url("/kb/snap.html")].startswith("too large (0.5 MB")
    assert result.failures[local.url("/kb/wic.html")].startswith("too large (more than")
    assert web_id(local, "kb/liheap.html") in stored(core)


def test_503_is_retried_with_backoff_honouring_retry_after(core: Core) -> None:
    calls: list[int] = []

    def flaky(_: web.Request) -> Resp:
        calls.append(1)
        if len(calls) == 1:
            return Resp("busy", status=503, headers={"Retry-After": "1"})
        return Resp(page("SNAP", "SNAP helps households buy food."))

    routes = _small_site()
    routes["/kb/snap.html"] = flaky  # type: ignore[assignment]
    with Site(routes) as local:
        result = run(core, local.url("/kb/"))
    hits = local.hits_for("/kb/snap.html")
    assert len(hits) == 2 and hits[1].at - hits[0].at >= 0.9  # waited as the server asked
    assert not result.failures and web_id(local, "kb/snap.html") in stored(core)


def test_polite_delay_spaces_requests_to_one_host_and_progress_is_shown(core: Core) -> None:
    progress = io.StringIO()
    with Site(_small_site()) as local:
        run(core, local.url("/kb/"), delay=0.15, concurrency=4, progress=progress)
    times = [h.at for h in local.hits]
    assert len(times) == 5 and all(b - a >= 0.1 for a, b in pairwise(times))  # 0.15 s, less arrival jitter
    assert re.search(r"crawl: [1-4] fetched, \d+ queued, 0 failed, [\d.]+ pages/s", progress.getvalue())


def test_robots_crawl_delay_and_noindex_are_respected(core: Core) -> None:
    routes = _small_site()
    routes["/robots.txt"] = Resp("User-agent: navibot\nCrawl-delay: 0.2\nDisallow: /kb/liheap\n",
                                 content_type="text/plain")
    routes["/kb/snap.html"] = Resp('<html><head><meta name="robots" content="noindex"></head><body><main>'
                                   '<h1>Draft</h1><p>Not ready.</p><a href="/kb/extra.html">x</a></main></body></html>')
    routes["/kb/extra.html"] = Resp(page("Extra", "Linked from a noindex page."))
    with Site(routes) as local:
        result = run(core, local.url("/kb/"))
    paths = local.paths()
    assert "/kb/liheap.html" not in paths and "/kb/extra.html" in paths
    ids = set(stored(core))
    assert web_id(local, "kb/snap.html") not in ids and web_id(local, "kb/extra.html") in ids
    assert result.skipped[local.url("/kb/snap.html")] == "noindex (meta robots)"
    times = [h.at for h in local.hits]
    assert all(b - a >= 0.15 for a, b in pairwise(times[1:]))  # Crawl-delay after robots.txt


def test_an_interrupted_crawl_clears_the_progress_line_and_keeps_the_state_consistent(
        core: Core, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []

    def interrupted(url: str, *args: Any, **kwargs: Any) -> Page:
        built.append(url)
        if len(built) == 4:
            raise KeyboardInterrupt  # Ctrl-C in the middle of a crawl
        return build_page(url, *args, **kwargs)

    monkeypatch.setattr(crawler, "build_page", interrupted)
    progress = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        run(core, site.url("/benefits/"), progress=progress, concurrency=1)
    assert progress.getvalue().startswith("\rcrawl: ") and progress.getvalue().endswith("\r\033[K")
    with sqlite3.connect(state_path_for(core.store.path)) as db:  # type: ignore[attr-defined]
        remembered = {doc_id for (doc_id,) in db.execute("SELECT doc_id FROM pages")}
    assert remembered <= set(stored(core))


# ------------------------------------------------------------------------------------- the command line


def test_cli_crawl_prints_summary_and_failures(site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "cli.sqlite3"
    code = main(["crawl", site.url("/benefits/"), "--delay", "0", "--store", str(store), "--tags", "snap",
                 "--max-pages", "3", "--prune"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "crawl: 3 pages fetched" in out and str(store) in out
    assert "not pruned, the crawl did not see the whole site: stopped at --max-pages 3" in out
    assert state_path_for(store).exists()

    code = main(["crawl", site.url("/benefits/"), "--delay", "0", "--store", str(store), "--tags", "snap"])
    out, err = capsys.readouterr()
    assert code == 0 and "pages fetched" in out
    assert f"failed {site.url('/benefits/missing.html')}: HTTP 404 (gone)" in err
    assert "Traceback" not in err
    assert main(["search", "college students", "--store", str(store), "--tags", "snap"]) == 0
    assert "College students and SNAP" in capsys.readouterr().out


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(("args", "message"), [
    (["ftp://example.org/"], "not an http:// or https:// URL"),
    (["www.example.org"], "not an http:// or https:// URL"),
    ([], "give a URL to start from"),
    (["https://example.org/", "--max-pages", "0"], "--max-pages must be at least 1"),
    (["https://example.org/", "--concurrency", "0"], "--concurrency must be at least 1"),
    (["--sitemap", "sitemap.xml"], "not an http:// or https:// URL"),
])
def test_cli_crawl_bad_input_is_one_line_and_exit_2(args: list[str], message: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crawl", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_cli_crawl_unreachable_host_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/benefits/"
    assert main(["crawl", url, "--retries", "0", "--timeout", "2", "--delay", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"navibot: cannot reach {url}: robots.txt could not be read (cannot connect")
    assert err.count("\n") == 1


def test_cli_crawl_state_write_failure_is_one_line_and_leaves_the_state_consistent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    links = "".join(f'<a href="/p/{i}.html">page {i}</a> ' for i in range(60))
    routes = {"/p/": Resp(page("Index", "All pages.", links))}
    routes.update({f"/p/{i}.html": Resp(page(f"Page {i}", f"Text of page {i}.", links)) for i in range(60)})
    store = tmp_path / "full.sqlite3"
    opened = CrawlState.__init__

    def on_a_full_disk(self: CrawlState, path: Path) -> None:
        opened(self, path)
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        self._db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "database or disk is full"

    monkeypatch.setattr(CrawlState, "__init__", on_a_full_disk)
    with Site(routes) as local:
        assert main(["crawl", local.url("/p/"), "--delay", "0", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err == f"navibot: cannot write the crawl state {state_path_for(store)}: database or disk is full\n"
    with sqlite3.connect(state_path_for(store)) as db:  # the state vouches only for documents the store holds
        remembered = {doc_id for (doc_id,) in db.execute("SELECT doc_id FROM pages")}
    with sqlite3.connect(store) as db:
        assert remembered <= {doc_id for (doc_id,) in db.execute("SELECT doc_id FROM documents")}


def test_cli_crawl_store_failure_is_one_line(site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    def locked(self: object) -> dict[str, str]:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(SQLiteKnowledgeStore, "document_hashes", locked)
    store = tmp_path / "locked.sqlite3"
    assert main(["crawl", site.url("/benefits/"), "--delay", "0", "--store", str(store)]) == 2
    assert capsys.readouterr().err == (f"navibot: crawl stopped, the knowledge store {store} failed: "
                                       "database is locked\n")


def test_cli_crawl_unreachable_sitemap_host_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/sitemap.xml"
    assert main(["crawl", "--sitemap", url, "--retries", "0", "--timeout", "2", "--delay", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"navibot: cannot reach {url}: sitemap: robots.txt could not be read (cannot connect")
    assert err.count("\n") == 1
    start = url.replace("/sitemap.xml", "/benefits/")  # with a start URL, the start URL is the one named
    assert main(["crawl", start, "--sitemap", url, "--retries", "0", "--timeout", "2", "--delay", "0"]) == 2
    assert capsys.readouterr().err.startswith(f"navibot: cannot reach {start}: robots.txt could not be read")


def test_sitemap_on_a_host_whose_robots_txt_fails_says_so(core: Core) -> None:
    with Site({"/robots.txt": Resp("down", status=503), "/sitemap.xml": Resp("{base}/a.html")}) as local:
        result = run(core, sitemaps=[local.url("/sitemap.xml")])
    assert result.failures[local.url("/sitemap.xml")] == "sitemap: robots.txt answered HTTP 503"
    assert not result.unreachable


def test_cli_crawl_help_names_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["crawl", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--sitemap", "--max-pages", "--concurrency", "--prune", "--delay", "--any-path", "--tags",
                 "--groups", "--store"):
        assert flag in out
