"""A fetched HTML page or PDF becomes a `SourceDocument` (main content only) plus the links to visit next.

The document's URL is the page's canonical URL when the page names one inside the crawl's scope (so that
`?print=1` and `/index.html` variants are one document), else the URL it was fetched from after redirects. The
doc id is derived from it readably and stably (`web/www.fns.usda.gov/snap/students`), and `source_path` holds it
too: pruning selects a site's documents by that URL prefix.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from urllib.parse import unquote, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

from rag.crawl.fetch import parse_http_date
from rag.crawl.frontier import normalize_url
from rag.documents import SourceDocument
from rag.ingest.html_extract import extract_html
from rag.ingest.loaders import LoadError, load_pdf_bytes, title_from

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
# Page metadata that says when the content last changed (the Last-Modified header of a dynamic page is often just
# "now", which would make every crawl look like an update).
_MODIFIED_META = ("article:modified_time", "og:updated_time", "dcterms.modified", "dc.date.modified",
                  "last-modified", "dateModified")


@dataclass(slots=True)
class Page:
    doc: SourceDocument | None  # None: nothing to store (noindex, no text, unreadable PDF)
    links: list[str] = field(default_factory=list)  # crawlable links, normalised (`normalize_url`), not yet scoped
    problem: str | None = None  # a reason worth reporting as a failure (unreadable PDF)
    note: str | None = None  # a reason the page was deliberately not stored (noindex, no text)


def wanted_type(content_type: str) -> bool:
    """Only HTML and PDF bodies are read; a missing or generic type is sniffed from the bytes."""
    return content_type in HTML_TYPES or content_type in PDF_TYPES or content_type in (
        "", "application/octet-stream", "binary/octet-stream")


def doc_id_for_url(url: str) -> str:
    """`web/<host>/<path>[?query]`: readable, stable across runs and schemes, one per canonical page."""
    parts = urlsplit(url)
    path = unquote(parts.path).strip("/")
    return "/".join(p for p in ("web", parts.netloc, path) if p) + (f"?{parts.query}" if parts.query else "")


def decode_html(body: bytes, content_type_header: str) -> str:
    """Charset from the header, else from a <meta> tag, else UTF-8, else Windows-1252: pages lie in all ways."""
    candidates = []
    header = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", content_type_header or "", re.IGNORECASE)
    if header:
        candidates.append(header.group(1))
    meta = _META_CHARSET.search(body[:4096])
    if meta:
        candidates.append(meta.group(1).decode("ascii"))
    for encoding in [*candidates, "utf-8", "cp1252"]:
        try:
            return body.decode("utf-8-sig" if encoding.lower() in ("utf-8", "utf8") else encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    return body.decode("utf-8", errors="replace")


def http_date_iso(value: str | None) -> str | None:
    when = parse_http_date(value)
    return when.astimezone(UTC).isoformat(timespec="seconds") if when else None


def _robots_directives(values: list[str]) -> set[str]:
    return {d.strip().lower() for v in values for d in v.split(",") if d.strip()}


def build_page(url: str, body: bytes, headers: dict[str, str], *, header_canonical: str | None,
               resolve: Callable[[str | None, str], str | None], tags: list[str], groups: list[str]) -> Page:
    """`url` is the URL the body came from (after redirects); `resolve(href, base)` turns a canonical link
    into a URL inside the crawl scope, or None when it points elsewhere (then `url` names the document)."""
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    directives = _robots_directives([headers.get("x-robots-tag", "")])
    if content_type in PDF_TYPES or body[:5] == b"%PDF-":
        page = _pdf_page(url, body, headers, resolve(header_canonical, url) or url)
    elif content_type in HTML_TYPES or body.lstrip()[:1] == b"<":
        page = _html_page(url, body, headers, header_canonical, resolve, directives)
    else:
        return Page(None, problem=f"not a web page or PDF ({content_type or 'unknown content'})")
    if page.doc is not None:
        if "noindex" in directives or "none" in directives:
            return Page(None, links=page.links, note="noindex (X-Robots-Tag)")
        page.doc.tags = sorted(set(tags))
        page.doc.groups = list(groups) or ["all"]
    return page


def _pdf_page(url: str, body: bytes, headers: dict[str, str], doc_url: str) -> Page:
    name = unquote(urlsplit(doc_url).path.rstrip("/").rsplit("/", 1)[-1])
    fallback = re.sub(r"\.pdf$", "", name, flags=re.IGNORECASE).replace("-", " ").replace("_", " ") or doc_url
    try:
        doc = load_pdf_bytes(body, doc_id_for_url(doc_url), fallback,
                             updated=http_date_iso(headers.get("last-modified")))
    except LoadError as exc:
        return Page(None, problem=str(exc))
    doc.url = doc.source_path = doc_url
    return Page(doc)


def _html_page(url: str, body: bytes, headers: dict[str, str], header_canonical: str | None,
               resolve: Callable[[str | None, str], str | None], directives: set[str]) -> Page:
    html = decode_html(body, headers.get("content-type", ""))
    tree = LexborHTMLParser(html)
    base = url
    base_node = tree.css_first("base[href]")
    if base_node is not None and (href := (base_node.attributes.get("href") or "").strip()):
        with contextlib.suppress(ValueError):
            base = urljoin(url, href)
    meta: dict[str, str] = {}
    for node in tree.css("meta[content]"):
        key = (node.attributes.get("name") or node.attributes.get("property") or "").strip().lower()
        if key:
            meta.setdefault(key, node.attributes.get("content") or "")
    directives |= _robots_directives([meta.get("robots", ""), meta.get("navibot", "")])
    links: list[str] = []
    if "nofollow" not in directives and "none" not in directives:
        # Links anywhere in the page, menus included: a section's menu is often the only list of its pages.
        for a in tree.css("a[href], area[href]"):
            if "nofollow" not in (a.attributes.get("rel") or "").lower().split():
                # Normalised here, in the worker thread, once: "http://[broken" or mailto: is just not a link.
                link = normalize_url(a.attributes.get("href") or "", base)
                if link:
                    links.append(link)
    if "noindex" in directives or "none" in directives:
        return Page(None, links=links, note="noindex (meta robots)")
    page = extract_html(html)
    canonical = resolve(page.canonical_url, base) or resolve(header_canonical, url)
    doc_url = canonical or url
    title, blocks = title_from(page.blocks, page.title or doc_url)
    if not any(b.kind != "heading" for b in blocks):
        return Page(None, links=links, note="no text in the main content")
    updated = next((meta[k.lower()] for k in _MODIFIED_META if meta.get(k.lower())), None)
    doc = SourceDocument(doc_id=doc_id_for_url(doc_url), title=title, blocks=blocks, url=doc_url,
                         source_path=doc_url, updated=updated)
    return Page(doc, links=links)

