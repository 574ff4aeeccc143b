"""Which URLs the crawl may visit, each written one way only, so that no page is fetched twice.

The scope of a start URL is its host and its "folder": `https://site/snap/` covers `/snap/...`,
`https://site/snap` covers `/snap` and `/snap/...` (not `/snapshot`), `https://site/snap/index.html` covers
`/snap/...`. `any_path` widens it to the whole host. PDFs on the same host are in scope wherever they sit,
because sites keep their files apart from their pages (`/sites/default/files/...`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit, urlunsplit

# Links that are never pages or PDFs: not worth a request.
_NOT_PAGES = frozenset(
    ".jpg .jpeg .png .gif .svg .webp .ico .bmp .tif .tiff .css .js .json .xml .rss .atom .zip .gz .tgz .rar .7z .exe "
    ".dmg .msi .mp3 .mp4 .m4a .wav .ogg .mov .avi .webm .woff .woff2 .ttf .eot .doc .docx .xls .xlsx .ppt .pptx .csv "
    ".ics".split())
_TRACKING = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid")
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def normalize_url(href: str, base: str | None = None) -> str | None:
    """The one spelling of a link: absolute, http(s) only, lower-case host, no default port, no fragment, no
    credentials, dot segments resolved, query sorted (tracking parameters dropped). None if not crawlable."""
    href = href.strip()
    if not href:
        return None
    try:
        parts = urlsplit(urljoin(base, href) if base else href)
        port = parts.port
    except ValueError:  # "http://[bad", "http://host:99999"
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower().rstrip(".")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    path = parts.path or "/"
    if "." in path or "//" in path:
        trailing = path.endswith("/")
        path = posixpath.normpath(path)
        path = "/" if path in (".", "/", "//") else "/" + path.lstrip("/") + ("/" if trailing else "")
    path = quote(path, safe=_PATH_SAFE)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not k.lower().startswith(_TRACKING)]
    return urlunsplit((scheme, host, path, urlencode(sorted(query)), ""))


def host_of(url: str) -> str:
    """host[:port] of a normalised URL: the unit of politeness and of robots.txt."""
    return urlsplit(url).netloc


def looks_like_pdf(url: str) -> bool:
    return urlsplit(url).path.lower().endswith(".pdf")


def worth_fetching(url: str) -> bool:
    """False for links to images, scripts, archives and office files: they can never become documents."""
    _, ext = posixpath.splitext(urlsplit(url).path.lower())
    return ext not in _NOT_PAGES


@dataclass(frozen=True, slots=True)
class Scope:
    """One host and the path prefix under it that a crawl may visit."""

    host: str
    prefix: str  # always ends with "/"
    exact: str | None = None  # "/snap" itself when the start URL had no trailing slash

    @classmethod
    def of(cls, start_url: str, any_path: bool = False) -> Scope:
        parts = urlsplit(start_url)
        path = parts.path or "/"
        if any_path or path == "/":
            return cls(parts.netloc, "/")
        if path.endswith("/"):
            return cls(parts.netloc, path)
        parent, last = path.rsplit("/", 1)
        if "." in last:  # a file such as index.html or rules.pdf: its folder
            return cls(parts.netloc, parent + "/")
        return cls(parts.netloc, path + "/", exact=path)

    @property
    def key(self) -> str:
        """Names the site section in the crawl state, whatever the scheme: "www.fns.usda.gov/snap/"."""
        return self.host + self.prefix

    def contains(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.netloc != self.host:
            return False
        path = parts.path or "/"
        return path.startswith(self.prefix) or path == self.exact

    def covers_source(self, source: str) -> bool:
        """True if a stored document's URL (its source_path) is in this scope, whatever its scheme (sites move to
        https); a file path, the source of an ingested file, never is."""
        return source.startswith(("https://", "http://")) and self.contains(source)


class Frontier:
    """The crawl's memory of URLs: each admitted once, and only if it is in one of the scopes."""

    def __init__(self, scopes: list[Scope]) -> None:
        self.scopes = list(scopes)
        self.seen: set[str] = set()

    def scope_for(self, url: str) -> Scope | None:
        """The scope of a URL; a same-host PDF belongs to the first scope of its host."""
        for scope in self.scopes:
            if scope.contains(url):
                return scope
        if looks_like_pdf(url):
            return next((s for s in self.scopes if s.host == host_of(url)), None)
        return None

    def add_scope(self, scope: Scope) -> None:
        if scope not in self.scopes:
            self.scopes.append(scope)

    def admit(self, url: str) -> bool:
        """True the first time an in-scope, fetchable URL is offered; it is then remembered as seen."""
        if url in self.seen or not worth_fetching(url) or self.scope_for(url) is None:
            return False
        self.seen.add(url)
        return True
