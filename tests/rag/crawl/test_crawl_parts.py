"""The crawler's parts on their own: URL normalisation and scope, robots.txt, sitemaps, Retry-After, pages."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from rag.crawl.fetch import retry_after_seconds
from rag.crawl.frontier import Frontier, Scope, normalize_url
from rag.crawl.pages import build_page, decode_html, doc_id_for_url
from rag.crawl.robots import parse_robots, rules_for_status
from rag.crawl.sitemap import SitemapError, parse_sitemap


@pytest.mark.parametrize(("href", "base", "expected"), [
    ("HTTP://WWW.Example.GOV:80/a/../b/./c.html#top", None, "http://www.example.gov/b/c.html"),
    ("../x?b=2&a=1&utm_source=mail", "https://h.gov/a/b/c", "https://h.gov/a/x?a=1&b=2"),
    ("?page=2", "https://h.gov/list", "https://h.gov/list?page=2"),
    ("https://h.gov", None, "https://h.gov/"),
    ("https://user:pw@h.gov:443/a b", None, "https://h.gov/a%20b"),
    ("//other.gov/p", "https://h.gov/", "https://other.gov/p"),
    ("mailto:help@h.gov", None, None),
    ("javascript:void(0)", "https://h.gov/", None),
    ("http://h.gov:99999/", None, None),
    ("", "https://h.gov/", None),
])
def test_normalize_url(href: str, base: str | None, expected: str | None) -> None:
    assert normalize_url(href, base) == expected


def test_scope_is_the_start_urls_folder() -> None:
    folder = Scope.of("https://h.gov/snap/")
    assert folder.contains("https://h.gov/snap/students") and not folder.contains("https://h.gov/wic/")
    bare = Scope.of("https://h.gov/snap")
    assert bare.contains("https://h.gov/snap") and bare.contains("https://h.gov/snap/x")
    assert not bare.contains("https://h.gov/snapshot")
    file_scope = Scope.of("https://h.gov/snap/index.html")
    assert file_scope.prefix == "/snap/"
    assert not folder.contains("https://other.gov/snap/x")
    assert Scope.of("https://h.gov/snap/", any_path=True).contains("https://h.gov/wic/")
    assert folder.covers_source("http://h.gov/snap/students") and not folder.covers_source("/srv/kb/snap/x.md")
    assert bare.covers_source("https://h.gov/snap?lang=es") and not bare.covers_source("https://h.gov/snapshot")
    assert not folder.covers_source("https://h.gov:8443/snap/x")


def test_frontier_admits_each_url_once_and_same_host_pdfs_anywhere() -> None:
    frontier = Frontier([Scope.of("https://h.gov/snap/")])
    assert frontier.admit("https://h.gov/snap/a")
    assert not frontier.admit("https://h.gov/snap/a")
    assert frontier.admit("https://h.gov/files/form.pdf")  # sites keep files apart from pages
    assert not frontier.admit("https://other.gov/files/form.pdf")
    assert not frontier.admit("https://h.gov/snap/logo.png")
    assert not frontier.admit("https://h.gov/wic/")


ROBOTS = """
# comments are ignored
User-agent: *
Disallow: /

User-agent: Googlebot
User-agent: navibot
Disallow: /private/
Allow: /private/public-*.html$
Disallow: /*?print=
Allow: /search/help
Disallow: /search
Crawl-delay: 2
"""


@pytest.mark.parametrize(("path", "allowed"), [
    ("/snap/students", True),
    ("/private/notes.html", False),
    ("/private/public-faq.html", True),  # the longer Allow wins
    ("/private/public-faq.html?x=1", False),  # `$` anchors the end
    ("/snap/students?print=1", False),  # `*` is a wildcard
    ("/search/help", True),
    ("/search?q=snap", False),
    ("/robots.txt", True),
])
def test_robots_group_for_our_token_longest_rule_wins(path: str, allowed: bool) -> None:
    rules = parse_robots(ROBOTS, "navibot")
    assert rules.allowed("https://h.gov" + path) is allowed
    assert rules.crawl_delay == 2


def test_robots_falls_back_to_star_group_and_allow_wins_a_tie() -> None:
    rules = parse_robots("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /a\nAllow: /a\n", "navibot")
    assert rules.allowed("https://h.gov/a") and rules.crawl_delay is None
    assert not parse_robots(ROBOTS, "somebot").allowed("https://h.gov/snap/")


def test_robots_status_rules() -> None:
    assert rules_for_status(404, "", "navibot").allowed("https://h.gov/x")  # no robots.txt: all allowed
    blocked = rules_for_status(503, "", "navibot")
    assert not blocked.allowed("https://h.gov/x") and blocked.blocked_reason == "robots.txt answered HTTP 503"


def test_robots_crawl_delay_is_capped() -> None:
    assert parse_robots("User-agent: *\nCrawl-delay: 86400\n", "navibot").crawl_delay == 60.0


URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://h.gov/a </loc><lastmod>2026-01-01</lastmod></url>
  <url><loc>https://h.gov/b</loc></url>
</urlset>"""


def test_sitemap_forms() -> None:
    assert parse_sitemap(URLSET) == (["https://h.gov/a", "https://h.gov/b"], [])
    assert parse_sitemap(gzip.compress(URLSET)) == (["https://h.gov/a", "https://h.gov/b"], [])
    index = (b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://h.gov/s1.xml'
             b'</loc></sitemap></sitemapindex>')
    assert parse_sitemap(index) == ([], ["https://h.gov/s1.xml"])
    plain = b"https://h.gov/a\nnot a url\nhttps://h.gov/b\n"
    assert parse_sitemap(plain) == (["https://h.gov/a", "https://h.gov/b"], [])


@pytest.mark.parametrize(("data", "reason"), [
    (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>', "DOCTYPE"),
    (b"<urlset><url><loc>", "not valid XML"),
    (b"<html><body>Not found</body></html>", "not a sitemap"),
    (b"\x1f\x8b\x08\x00broken", "broken gzip"),
])
def test_sitemap_refusals(data: bytes, reason: str) -> None:
    with pytest.raises(SitemapError, match=reason):
        parse_sitemap(data)


def test_retry_after_seconds_or_date() -> None:
    assert retry_after_seconds("7") == 7.0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (retry_after_seconds(later) or 0) <= 31
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_doc_id_is_readable_and_stable() -> None:
    assert doc_id_for_url("https://www.fns.usda.gov/snap/students") == "web/www.fns.usda.gov/snap/students"
    assert doc_id_for_url("http://www.fns.usda.gov/snap/students/") == "web/www.fns.usda.gov/snap/students"
    assert doc_id_for_url("https://h.gov/") == "web/h.gov"
    assert doc_id_for_url("https://h.gov/a%20b?lang=es") == "web/h.gov/a b?lang=es"


def test_decode_html_charset_from_meta_or_header() -> None:
    body = '<meta charset="windows-1252"><p>Se habla español</p>'.encode("cp1252")
    assert "español" in decode_html(body, "text/html")
    assert "español" in decode_html("<p>español</p>".encode("latin-1"), "text/html; charset=ISO-8859-1")
    assert "español" in decode_html("<p>español</p>".encode(), "text/html")


def _resolve_in(prefix: str) -> Callable[[str | None, str], str | None]:
    def resolve(href: str | None, base: str) -> str | None:
        url = normalize_url(href, base) if href else None
        return url if url and url.startswith(prefix) else None
    return resolve


def test_build_page_uses_an_in_scope_canonical_and_ignores_a_foreign_one() -> None:
    html = ('<html><head><title>T | Site</title><link rel="canonical" href="{c}"><base href="/kb/"></head>'
            '<body><nav><a href="menu.html">menu</a></nav><main><h1>Students</h1><p>Text.</p>'
            '<a href="next.html" rel="nofollow">no</a><a href="http://[broken">typo</a>'
            '<a href="mailto:help@h.gov">mail</a></main></body></html>')
    headers = {"content-type": "text/html"}
    resolve = _resolve_in("https://h.gov/kb/")
    page = build_page("https://h.gov/kb/s?ref=1", html.replace("{c}", "/kb/s").encode(), headers,
                      header_canonical=None, resolve=resolve, tags=["snap"], groups=[])
    assert page.doc is not None and page.doc.url == "https://h.gov/kb/s" and page.doc.doc_id == "web/h.gov/kb/s"
    assert page.doc.title == "Students" and page.doc.tags == ["snap"] and page.doc.groups == ["all"]
    assert page.links == ["https://h.gov/kb/menu.html"]  # menus are followed; rel=nofollow, typos, mailto: not
    foreign = build_page("https://h.gov/kb/s", html.replace("{c}", "https://mirror.org/s").encode(), headers,
                         header_canonical=None, resolve=resolve, tags=[], groups=["staff"])
    assert foreign.doc is not None and foreign.doc.url == "https://h.gov/kb/s" and foreign.doc.groups == ["staff"]


def test_build_page_respects_noindex_and_nofollow() -> None:
    html = (b'<html><head><meta name="robots" content="noindex, nofollow"></head><body><main><h1>Draft</h1>'
            b'<p>Text.</p><a href="/x">x</a></main></body></html>')
    page = build_page("https://h.gov/d", html, {"content-type": "text/html"}, header_canonical=None,
                      resolve=_resolve_in("https://h.gov/"), tags=[], groups=[])
    assert page.doc is None and page.links == [] and page.note == "noindex (meta robots)"
    header = build_page("https://h.gov/d", b"<main><h1>A</h1><p>B</p></main>",
                        {"content-type": "text/html", "x-robots-tag": "noindex"}, header_canonical=None,
                        resolve=_resolve_in("https://h.gov/"), tags=[], groups=[])
    assert header.doc is None


def test_build_page_reports_an_unreadable_pdf_and_other_types() -> None:
    pdf = build_page("https://h.gov/f.pdf", b"%PDF-1.4 garbage", {"content-type": "application/pdf"},
                     header_canonical=None, resolve=_resolve_in("https://h.gov/"), tags=[], groups=[])
    assert pdf.doc is None and pdf.problem and "PDF" in pdf.problem
    other = build_page("https://h.gov/x", b"\x00\x01", {"content-type": "application/octet-stream"},
                       header_canonical=None, resolve=_resolve_in("https://h.gov/"), tags=[], groups=[])
    assert other.problem and "not a web page or PDF" in other.problem
