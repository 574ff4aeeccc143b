"""Main-content extraction from HTML: headings, paragraphs, lists and tables, without navigation or chrome."""

from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from rag.models import Block
from rag.text_blocks import join_lines

# Elements that are never main content.
_DROP_TAGS = ("script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe", "svg",
              "template", "button", "select", "dialog")
_DROP_ROLES = ("navigation", "banner", "contentinfo", "search", "complementary", "dialog", "alertdialog")
_CHROME_WORDS = re.compile(r"cookie|consent|gdpr|breadcrumb|skip-link|sidebar|site-nav|menu|share|social|subscribe",
                           re.IGNORECASE)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CONTAINERS = {"div", "section", "article", "main", "blockquote", "details", "figure", "body", "center", "span",
               "font", "summary", "figcaption", "dd", "dt", "dl"}


@dataclass(slots=True)
class HtmlPage:
    title: str
    blocks: list[Block]
    canonical_url: str | None
    links: list[str]  # hrefs found in the main content, as written


def _text(node: LexborNode) -> str:
    return join_lines([node.text(separator=" ", strip=False)])


def _is_chrome(node: LexborNode) -> bool:
    attrs = node.attributes
    if (attrs.get("role") or "").lower() in _DROP_ROLES:
        return True
    if attrs.get("aria-hidden") == "true" or "hidden" in attrs:
        return True
    marker = f"{attrs.get('id') or ''} {attrs.get('class') or ''}"
    return bool(marker.strip()) and bool(_CHROME_WORDS.search(marker))


def _list_text(node: LexborNode) -> str:
    ordered = node.tag == "ol"
    lines: list[str] = []
    for n, li in enumerate((c for c in node.iter() if c.tag == "li"), start=1):
        text = _text(li)
        if text:
            lines.append(f"{n}. {text}" if ordered else f"- {text}")
    return "\n".join(lines)


def _table_text(node: LexborNode) -> str:
    rows: list[str] = []
    for tr in node.css("tr"):
        cells = [_text(c) for c in tr.iter() if c.tag in ("td", "th")]
        if any(cells):
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _walk(node: LexborNode, out: list[Block]) -> None:
    inline: list[str] = []  # loose text and inline elements directly inside a container

    def flush_inline() -> None:
        text = join_lines(inline)
        if text:
            out.append(Block("paragraph", text))
        inline.clear()

    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            inline.append(child.text(deep=False) or "")
            continue
        if tag in _DROP_TAGS or tag == "-comment" or _is_chrome(child):
            continue
        if tag in _HEADINGS:
            flush_inline()
            text = _text(child)
            if text:
                out.append(Block("heading", text, level=_HEADINGS[tag]))
        elif tag in ("p", "pre", "address"):
            flush_inline()
            text = _text(child) if tag != "pre" else (child.text() or "").strip()
            if text:
                out.append(Block("paragraph", text))
        elif tag in ("ul", "ol"):
            flush_inline()
            text = _list_text(child)
            if text:
                out.append(Block("list", text))
        elif tag == "table":
            flush_inline()
            text = _table_text(child)
            if text:
                out.append(Block("table", text))
        elif tag in _CONTAINERS or tag == "li":
            if tag in ("span", "font"):
                inline.append(child.text(separator=" ", strip=False))
            else:
                flush_inline()
                _walk(child, out)
        elif tag == "br":
            inline.append(" ")
        else:  # inline elements: a, strong, em, code, ...
            inline.append(child.text(separator=" ", strip=False))
    flush_inline()


def extract_html(html: str) -> HtmlPage:
    """Keep the page's main content as blocks; drop navigation, headers, footers, scripts and cookie banners."""
    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = _text(title_node) if title_node else ""
    canonical = None
    for link in tree.css("link[rel]"):
        if "canonical" in (link.attributes.get("rel") or "").lower().split():
            canonical = (link.attributes.get("href") or "").strip() or None
    root = tree.css_first("main") or tree.css_first("[role=main]") or tree.css_first("article") or tree.body
    blocks: list[Block] = []
    links: list[str] = []
    if root is not None:
        for drop in root.css(",".join(_DROP_TAGS)):
            drop.decompose()
        links = [a.attributes.get("href") or "" for a in root.css("a[href]")]
        _walk(root, blocks)
    if not title:
        first_h = next((b for b in blocks if b.kind == "heading"), None)
        title = first_h.text if first_h else ""
    return HtmlPage(title=title, blocks=blocks, canonical_url=canonical, links=[x for x in links if x])
