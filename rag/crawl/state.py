"""What the last crawl saw of each URL: validators for conditional requests, the document it became, its links.

A small SQLite file beside the knowledge store (`knowledge.crawl_state.sqlite3` for `knowledge.sqlite3`), so two
stores never share validators: a 304 is trusted only for a page whose document is in *this* store. Links are
remembered because a 304 has no body, and the pages it links to must still be visited.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY,          -- the URL fetched (normalised), after redirects
    site TEXT NOT NULL,            -- the crawl scope it belongs to ("host/path/")
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,    -- of the document as stored
    etag TEXT,
    last_modified TEXT,
    links TEXT NOT NULL DEFAULT '[]',
    options TEXT NOT NULL DEFAULT '',  -- tags and groups the document was stored with
    seen_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pages_site ON pages(site);
CREATE INDEX IF NOT EXISTS pages_doc ON pages(doc_id);
CREATE TABLE IF NOT EXISTS failures (  -- the pages the last crawl could not fetch (replaced by each crawl)
    url TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    crawled_at TEXT NOT NULL
);
"""


def state_path_for(store_path: Path) -> Path:
    return store_path.with_name(f"{store_path.stem}.crawl_state.sqlite3")


@dataclass(slots=True)
class PageState:
    url: str
    site: str
    doc_id: str
    content_hash: str
    etag: str | None = None
    last_modified: str | None = None
    links: list[str] = field(default_factory=list)
    options: str = ""  # a 304 keeps the stored document only if it was stored with the same tags and groups

    def conditional_headers(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


class CrawlStateError(RuntimeError):
    """The state file cannot be opened or written (disk full, locked, not a database), with its path."""


class CrawlState:
    """Used from the event loop's thread only; writes are committed in small batches.

    A row is written only after its document is stored, so a failed or interrupted write loses validators (the
    next run fetches those pages in full) but never vouches for a document the store does not hold.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        with self._failing("open"):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path))
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
        self._pending = 0

    @contextmanager
    def _failing(self, what: str) -> Iterator[None]:
        """sqlite3 and OS errors become a `CrawlStateError` that names the file, for a one-line message."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            raise CrawlStateError(f"cannot {what} the crawl state {self.path}: {exc}") from exc

    def get(self, url: str) -> PageState | None:
        with self._failing("read"):
            row = self._db.execute("SELECT url, site, doc_id, content_hash, etag, last_modified, links, options"
                                   " FROM pages WHERE url=?", (url,)).fetchone()
        if row is None:
            return None
        url_, site, doc_id, content_hash, etag, last_modified, links, options = row
        return PageState(url_, site, doc_id, content_hash, etag, last_modified, json.loads(links), options)

    def put(self, page: PageState) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._failing("write"):
            self._db.execute(
                "INSERT OR REPLACE INTO pages(url, site, doc_id, content_hash, etag, last_modified, links, options,"
                " seen_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (page.url, page.site, page.doc_id, page.content_hash, page.etag, page.last_modified,
                 json.dumps(page.links), page.options, now))
        self._written()

    def touch(self, url: str) -> None:
        """The page answered 304 Not Modified: crawled successfully now, as it was stored."""
        with self._failing("write"):
            self._db.execute("UPDATE pages SET seen_at=? WHERE url=?",
                             (datetime.now(UTC).isoformat(timespec="seconds"), url))
        self._written()

    def forget(self, url: str) -> None:
        with self._failing("write"):
            self._db.execute("DELETE FROM pages WHERE url=?", (url,))
        self._written()

    def forget_documents(self, doc_ids: list[str]) -> None:
        with self._failing("write"):
            self._db.executemany("DELETE FROM pages WHERE doc_id=?", [(d,) for d in doc_ids])
        self._written()

    def doc_ids(self, site: str) -> set[str]:
        with self._failing("read"):
            return {row[0] for row in self._db.execute("SELECT doc_id FROM pages WHERE site=?", (site,))}

    def record_failures(self, failures: dict[str, str]) -> None:
        """The last crawl's failed pages (URL -> why), in place of the previous crawl's (the admin page lists them)."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._failing("write"):
            self._db.execute("DELETE FROM failures")
            self._db.executemany("INSERT OR REPLACE INTO failures(url, reason, crawled_at) VALUES (?,?,?)",
                                 [(url, reason, now) for url, reason in failures.items()])
            self._db.commit()

    def failures(self) -> list[tuple[str, str, str]]:
        """(url, reason, when) of the pages the last crawl could not fetch, by URL."""
        with self._failing("read"):
            return list(self._db.execute("SELECT url, reason, crawled_at FROM failures ORDER BY url"))

    def last_seen(self) -> dict[str, tuple[str, str]]:
        """doc id -> (url, when its page was last fetched or confirmed unchanged), the latest per document."""
        with self._failing("read"):
            rows = self._db.execute("SELECT doc_id, url, seen_at FROM pages ORDER BY seen_at").fetchall()
        return {doc_id: (url, seen_at) for doc_id, url, seen_at in rows}

    def _written(self) -> None:
        self._pending += 1
        if self._pending >= 50:
            self.commit()

    def commit(self) -> None:
        with self._failing("write"):
            self._db.commit()
        self._pending = 0

    def close(self) -> None:
        """Commits what is pending; the file is closed even when that fails."""
        try:
            self.commit()
        finally:
            self._db.close()
