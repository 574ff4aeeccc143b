"""Sitemaps (sitemaps.org): a URL set, or an index of further sitemaps, XML or gzipped XML or plain text.

XML with a DOCTYPE is refused: sitemaps never need one, and entity declarations are how XML bombs work.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from xml.etree import ElementTree

from rag.crawl.fetch import MB, Fetcher
from rag.crawl.frontier import host_of, normalize_url

log = logging.getLogger(__name__)

MAX_SITEMAP_BYTES = 50 * MB  # the sitemaps.org limit for one uncompressed file
MAX_DEPTH = 3  # index → sitemap is one level; nobody nests deeper than a few


class SitemapError(ValueError):
    """A sitemap that cannot be read, with the reason."""


@dataclass(slots=True)
class SitemapResult:
    urls: list[str] = field(default_factory=list)  # page URLs as listed (not yet normalised or scoped)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (sitemap URL, reason): any = incomplete list


def _gunzip(data: bytes) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = inflater.decompress(data, MAX_SITEMAP_BYTES + 1)
    if len(out) > MAX_SITEMAP_BYTES:
        raise SitemapError(f"larger than {MAX_SITEMAP_BYTES // MB} MB once decompressed")
    if not inflater.eof:
        raise SitemapError("broken gzip (truncated)")
    return out


def parse_sitemap(data: bytes) -> tuple[list[str], list[str]]:
    """(page URLs, child sitemap URLs) of one sitemap file."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = _gunzip(data)
        except zlib.error as exc:
            raise SitemapError(f"broken gzip ({exc})") from exc
    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"<"):  # the plain-text form: one URL per line
        lines = text.decode("utf-8", errors="replace").splitlines()
        return [s.strip() for s in lines if s.strip().startswith(("http://", "https://"))], []
    if b"<!DOCTYPE" in text[:4096].upper() or b"<!ENTITY" in text.upper():
        raise SitemapError("XML with a DOCTYPE or entities is not accepted in a sitemap")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise SitemapError(f"not valid XML ({exc})") from exc
    kind = root.tag.rsplit("}", 1)[-1]
    locs = [(el.text or "").strip() for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "loc"]
    locs = [loc for loc in locs if loc]
    if kind == "sitemapindex":
        return [], locs
    if kind == "urlset":
        return locs, []
    raise SitemapError(f"not a sitemap (root element <{kind}>)")


async def read_sitemaps(fetcher: Fetcher, start: str,
                        refusal: Callable[[str], Awaitable[str | None]]) -> SitemapResult:
    """Every page URL of a sitemap or sitemap index, following child sitemaps on the same host only.

    `refusal(url)` says why robots.txt forbids fetching a sitemap (disallowed, or unreadable), else None."""
    result = SitemapResult()
    first = normalize_url(start)
    if first is None:
        result.problems.append((start, "not an http(s) URL"))
        return result
    pending, visited = [(first, 0)], {first}
    while pending:
        url, depth = pending.pop(0)
        refused = await refusal(url)
        if refused:
            result.problems.append((url, refused))
            continue
        fetched = await fetcher.get(url, follow_redirects=True, max_bytes=MAX_SITEMAP_BYTES)
        if not fetched.ok:
            result.problems.append((url, fetched.error or f"HTTP {fetched.status}"))
            continue
        try:
            pages, children = parse_sitemap(fetched.body)
        except SitemapError as exc:
            result.problems.append((url, str(exc)))
            continue
        result.urls.extend(pages)
        for child in children:
            norm = normalize_url(child, fetched.final_url)
            if norm is None or norm in visited:
                continue
            if host_of(norm) != host_of(first):
                log.info("sitemap %s on another host is not followed", child)
            elif depth + 1 > MAX_DEPTH:
                result.problems.append((child, f"sitemap indexes nested more than {MAX_DEPTH} deep"))
            else:
                visited.add(norm)
                pending.append((norm, depth + 1))
    return result
