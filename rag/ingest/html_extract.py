"""Main-content extraction from HTML: headings, paragraphs, lists and tables, without navigation or chrome."""

from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from rag.documents import Block

# Elements that are never main content.
_DROP_TAGS = ("script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe", "svg",
              "template", "button", "select", "dialog")
_DROP_ROLES = ("navigation", "banner", "contentinfo", "search", "complementary", "dialog", "alertdialog")
# Class or id tokens of page chrome, matched as whole words of a token ("cookie-banner", "main-menu",
# "share_links") so that content such as class="social-security-benefits" is never mistaken for chrome.
_CHROME_WORDS = re.compile(
    r"(?:^|[-_])(?:cookies?|consent|gdpr|breadcrumbs?|skip-link|sidebar|site-nav|navbar|menu|share|sharing"
    r"|social-(?:share|links|media|icons)|subscribe|newsletter)(?:$|[-_])", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
# Phrasing elements: their text runs on from the text around them without an added space ("<b>211</b>,").
_INLINE = {"a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font",
           "i", "ins", "kbd", "label", "mark", "nobr", "q", "s", "samp", "small", "span", "strike", "strong", "sub",
           "sup", "time", "tt", "u", "var", "wbr"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_CONTAINERS = {"div", "section", "article", "main", "blockquote", "details", "figure", "body", "center", "span",
               "font", "summary", "figcaption", "dd", "dt", "dl"}


@dataclass(slots=True)
class HtmlPage:
    title: str
    blocks: list[Block]
    canonical_url: str | None
    links: list[str]  # hrefs found in the main content, as written


def _squash(text: str) -> str:
    """HTML whitespace, line breaks included, is one space: a paragraph wrapped in the source is one line."""
    return _SPACE.sub(" ", text).strip()


def _raw_text(node: LexborNode) -> str:
    """The text as written: inline markup adds no space (`<b>211</b>,` stays "211,"); <br> and blocks do."""
    parts: list[str] = []
    for child in node.iter(include_text=True):
        if child.tag == "-text":
            parts.append(child.text(deep=False) or "")
        elif child.tag != "-comment":
            parts.append(_piece_text(child))
    return "".join(parts)


def _piece_text(node: LexborNode) -> str:
    text = _raw_text(node)
    return text if node.tag in _INLINE else f" {text} "


def _text(node: LexborNode) -> str:
    return _squash(_raw_text(node))


def _is_chrome(node: LexborNode) -> bool:
    attrs = node.attributes
    if (attrs.get("role") or "").lower() in _DROP_ROLES:
        return True
    if attrs.get("aria-hidden") == "true" or "hidden" in attrs:
        return True
    tokens = f"{attrs.get('id') or ''} {attrs.get('class') or ''}".split()
    return any(_CHROME_WORDS.search(token) for token in tokens)


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
        text = _squash("".join(inline))
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
                inline.append(_piece_text(child))
            else:
                flush_inline()
                _walk(child, out)
        elif tag == "br":
            inline.append(" ")
        else:  # inline elements: a, strong, em, code, ...
            inline.append(_piece_text(child))
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
