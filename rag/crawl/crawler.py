"""The crawl orchestrator: a queue of URLs, N aiohttp workers, one writer that embeds and stores, and a prune
that runs only when the crawl saw the whole site.

Workers fetch and extract; the single writer hands finished documents to `Ingestor.ingest_documents` in a worker
thread (embedding is CPU-bound; the SQLite store serialises its own access), so fetching goes on while pages are
embedded. The crawl is done when the queue is drained (`Queue.join`): every admitted URL was visited or dropped.

Pruning deletes the documents of the crawled scope that this run did not see, so it needs proof that the run saw
everything: it is skipped when the crawl stopped at `max_pages`, when a start URL or sitemap failed, or when a
page that could hold links failed in a way that may pass (timeout, server error, connection), because the pages
it links to were then never discovered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO
from urllib.parse import urlsplit

import aiohttp

from rag.crawl.fetch import (
    MAX_REDIRECTS,
    ROBOTS_TOKEN,
    Fetcher,
    FetchPolicy,
    FetchResult,
    HostThrottle,
)
from rag.crawl.frontier import Frontier, Scope, host_of, looks_like_pdf, normalize_url
from rag.crawl.pages import Page, build_page, doc_id_for_url, wanted_type
from rag.crawl.robots import RobotsRules, rules_for_status
from rag.crawl.sitemap import read_sitemaps
from rag.crawl.state import CrawlState, PageState
from rag.documents import SourceDocument
from rag.ingest.ingestor import Ingestor, IngestSummary

log = logging.getLogger(__name__)

GONE = frozenset({404, 410})


@dataclass(slots=True)
class CrawlConfig:
    start_urls: list[str]
    sitemaps: list[str] = field(default_factory=list)
    max_pages: int = 1000  # page visits (a redirect chain is one); robots.txt and sitemaps do not count
    concurrency: int = 4
    delay: float = 0.5  # seconds between two requests to one host (robots.txt Crawl-delay may ask for more)
    any_path: bool = False  # whole host instead of the start URL's folder
    prune: bool = False
    tags: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    policy: FetchPolicy = field(default_factory=FetchPolicy)
    batch: int = 16  # documents per call into the ingestor


@dataclass(slots=True)
class CrawlResult:
    fetched: int = 0  # pages answered: 200 with an HTML or PDF body, or 304 Not Modified
    not_modified: int = 0
    failures: dict[str, str] = field(default_factory=dict)  # URL → reason (404s included)
    skipped: dict[str, str] = field(default_factory=dict)  # URL → why it was not stored (robots, noindex, ...)
    unvisited: int = 0  # admitted URLs left when max_pages was reached
    ingest: IngestSummary = field(default_factory=IngestSummary)
    incomplete: list[str] = field(default_factory=list)  # why this crawl cannot prove it saw the whole site
    unreachable: list[str] = field(default_factory=list)  # start URLs whose host could not be reached
    pruned: bool = False
    seconds: float = 0.0

    @property
    def complete(self) -> bool:
        return not self.incomplete

    @property
    def unchanged(self) -> int:
        return self.not_modified + self.ingest.unchanged

    @property
    def rate(self) -> float:
        return self.fetched / self.seconds if self.seconds else 0.0

    def line(self) -> str:
        s = self.ingest
        return (f"{self.fetched} pages fetched, {self.unchanged} unchanged ({self.not_modified} not modified), "
                f"{s.added} added, {s.updated} updated, {s.removed} removed, "
                f"{len(self.failures) + s.failed} failed, {len(self.skipped)} skipped; {s.chunks} chunks written; "
                f"{self.seconds:.1f} s, {self.rate:.1f} pages/s")


@dataclass(slots=True)
class _Stored:
    """A document on its way to the writer, with what the state must remember once it is stored."""

    doc: SourceDocument
    page: PageState


class _Crawl:
    """One run. Workers, the writer and the progress ticker share it on one event loop; only `_ingest` runs in a
    thread, and the one thing it shares is `known`, which the ingestor updates as it stores."""

    def __init__(self, config: CrawlConfig, ingestor: Ingestor, state: CrawlState, progress: TextIO | None) -> None:
        self.config = config
        self.ingestor = ingestor
        self.state = state
        self.progress = progress
        self.result = CrawlResult()
        self.frontier = Frontier([])
        self.queue: asyncio.Queue[tuple[str, bool]] = asyncio.Queue()
        self.docs: asyncio.Queue[_Stored | None] = asyncio.Queue(maxsize=4 * config.batch)
        self.known: dict[str, str] = {}  # doc id → content hash in the store: validators are trusted against it
        self.restricted: dict[str, tuple[str, ...]] = {}  # doc id → groups of stored restricted documents
        self.kept: set[str] = set()  # doc ids this run saw, or must keep because their page failed
        self.doc_urls: dict[str, str] = {}  # doc id → URL that produced it in this run
        self.canonical_done: set[str] = set()  # canonical URLs of documents stored from another URL
        self.visits = 0
        self.throttle = HostThrottle(config.delay)
        self.robots: dict[str, asyncio.Future[RobotsRules]] = {}
        self.unreachable_hosts: set[str] = set()
        self.fetcher: Fetcher
        self.options = json.dumps([sorted(set(config.tags)), list(config.groups)])

    # -- the run -------------------------------------------------------------------------------------------

    async def run(self) -> CrawlResult:
        started = time.perf_counter()
        store = self.ingestor.store
        store.check_embedder(self.ingestor.embedder.name, self.ingestor.embedder.dim)  # fail before any fetch
        self.known = store.document_hashes()
        # Without --groups, stored restricted pages keep their groups (read once, not once per batch).
        self.restricted = {} if self.config.groups else self.ingestor.restricted_documents()
        starts = [u for u in (normalize_url(s) for s in self.config.start_urls) if u]
        for url in starts:
            self.frontier.add_scope(Scope.of(url, self.config.any_path))
        if not starts:  # a sitemap alone speaks for its whole host (sitemaps often sit in a folder of their own)
            for url in filter(None, map(normalize_url, self.config.sitemaps)):
                self.frontier.add_scope(Scope.of(url, any_path=True))
        connector = aiohttp.TCPConnector(limit=self.config.concurrency, ttl_dns_cache=300)
        async with aiohttp.ClientSession(headers={"User-Agent": self.config.policy.user_agent},
                                         connector=connector, trust_env=True) as session:
            self.fetcher = Fetcher(session, self.config.policy, self.throttle)
            workers = [asyncio.create_task(self._worker()) for _ in range(self.config.concurrency)]
            writer = asyncio.create_task(self._writer())
            tasks = [*workers, writer]
            if self.progress:
                tasks.append(asyncio.create_task(self._ticker(started)))
            try:
                for url in starts:
                    if self.frontier.admit(url):
                        self.queue.put_nowait((url, True))
                for sitemap in self.config.sitemaps:
                    await self._read_sitemap(sitemap)
                drained = asyncio.create_task(self.queue.join())
                await asyncio.wait([drained, writer], return_when=asyncio.FIRST_COMPLETED)
                if writer.done():  # the writer died: stop rather than fill a queue nobody empties
                    drained.cancel()
                    writer.result()
                await self.docs.put(None)
                await writer
            finally:  # also on Ctrl-C or a failed writer: stop every task, keep what was stored, clear the line
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                if self.progress:
                    self.progress.write("\r\033[K")
                self.state.commit()
        self._judge_completeness(starts)
        if self.config.prune and self.result.complete:
            self.result.ingest.removed = self._prune()
            self.result.pruned = True
        self.result.seconds = self.result.ingest.seconds = time.perf_counter() - started
        return self.result

    def _judge_completeness(self, starts: list[str]) -> None:
        result = self.result
        if result.unvisited:
            result.incomplete.append(f"stopped at --max-pages {self.config.max_pages} with {result.unvisited} "
                                     "URLs not visited")
        if not result.fetched:
            result.incomplete.append("no page was fetched")
        failed_starts = [u for u in starts if u in result.failures or u in result.skipped]
        if failed_starts:
            result.incomplete.append(f"start URL failed: {', '.join(failed_starts)}")

    async def _ticker(self, started: float) -> None:
        assert self.progress is not None
        while True:
            elapsed = max(time.perf_counter() - started, 1e-6)
            self.progress.write(f"\rcrawl: {self.result.fetched} fetched, {self.queue.qsize()} queued, "
                                f"{len(self.result.failures)} failed, "
                                f"{self.result.fetched / elapsed:.1f} pages/s\033[K")
            self.progress.flush()
            await asyncio.sleep(0.5)

    # -- sources of URLs -----------------------------------------------------------------------------------

    async def _read_sitemap(self, sitemap: str) -> None:
        async def refusal(url: str) -> str | None:
            rules = await self._robots_for(url)
            return rules.blocked_reason or (None if rules.allowed(url) else "disallowed by robots.txt")

        listed = await read_sitemaps(self.fetcher, sitemap, refusal)
        for where, reason in listed.problems:
            self.result.failures[where] = f"sitemap: {reason}"
            self.result.incomplete.append(f"sitemap {where} could not be read")
        first = normalize_url(sitemap)
        if (not self.config.start_urls and first is not None and first in self.result.failures
                and host_of(first) in self.unreachable_hosts):
            self.result.unreachable.append(first)  # the sitemap stands for the start URL, and is reported like one
        if not listed.urls and not listed.problems:
            self.result.incomplete.append(f"sitemap {sitemap} lists no pages")
        self._follow(url for url in map(normalize_url, listed.urls) if url)

    def _follow(self, urls: Iterable[str]) -> None:
        """Queue the normalised URLs the frontier admits (in scope, not seen yet)."""
        for url in urls:
            if self.frontier.admit(url):
                self.queue.put_nowait((url, False))

    # -- robots.txt ----------------------------------------------------------------------------------------

    async def _robots_for(self, url: str) -> RobotsRules:
        """Fetched once per host, shared by every worker that asks meanwhile."""
        host = host_of(url)
        if host not in self.robots:
            self.robots[host] = asyncio.ensure_future(self._load_robots(url))
        return await asyncio.shield(self.robots[host])

    async def _load_robots(self, url: str) -> RobotsRules:
        parts = urlsplit(url)
        fetched = await self.fetcher.get(f"{parts.scheme}://{parts.netloc}/robots.txt", follow_redirects=True,
                                         max_bytes=512 * 1024)
        if fetched.unreachable:
            self.unreachable_hosts.add(parts.netloc)
        if fetched.status == 0 or (fetched.error and fetched.status < 300):
            rules = RobotsRules(blocked_reason=f"robots.txt could not be read ({fetched.error})")
        else:
            rules = rules_for_status(fetched.status, fetched.body.decode("utf-8", errors="replace"), ROBOTS_TOKEN)
        if rules.crawl_delay:
            self.throttle.set_delay(parts.netloc, rules.crawl_delay)
        return rules

    # -- one URL -------------------------------------------------------------------------------------------

    async def _worker(self) -> None:
        while True:
            url, is_start = await self.queue.get()
            try:
                if url in self.canonical_done:  # queued before a page named it as its canonical URL
                    self.result.skipped[url] = "already stored as the canonical URL of another page"
                elif self.visits >= self.config.max_pages:
                    self.result.unvisited += 1
                else:
                    self.visits += 1
                    await self._visit(url, is_start)
            except Exception as exc:  # a bug on one page must not end the crawl, but it taints it
                log.exception("crawling %s failed", url)
                self.result.failures[url] = f"internal error ({exc.__class__.__name__}: {exc})"
                self.result.incomplete.append(f"internal error on {url}")
            finally:
                self.queue.task_done()

    async def _visit(self, url: str, is_start: bool) -> None:
        chain = [url]
        while True:
            current = chain[-1]
            rules = await self._robots_for(current)
            if rules.blocked_reason:
                self._failed(url, current, rules.blocked_reason, hides_links=True,
                             unreachable=is_start and host_of(current) in self.unreachable_hosts)
                return
            if not rules.allowed(current):
                self.result.skipped[url] = "disallowed by robots.txt"
                return
            prior = self.state.get(current)
            trusted = (prior is not None and self.known.get(prior.doc_id) == prior.content_hash
                       and prior.options == self.options)
            fetched = await self.fetcher.get(current, prior.conditional_headers() if prior and trusted else {},
                                             wanted=wanted_type)
            if fetched.status in (301, 302, 303, 307, 308):
                target = self._redirect_target(url, chain, fetched, is_start)
                if target is None:
                    return
                chain.append(target)
                continue
            break
        if fetched.status == 304 and prior is not None and trusted:
            self.result.fetched += 1
            self.result.not_modified += 1
            self.kept.add(prior.doc_id)
            self.doc_urls.setdefault(prior.doc_id, current)
            self.state.touch(current)  # a successful crawl of the page (the admin page's stale documents)
            self._follow(prior.links)
            return
        if fetched.status in GONE:
            self._failed(url, current, f"HTTP {fetched.status} (gone)", keep=False)
            self.state.forget(current)
            return
        if not fetched.ok:
            reason = fetched.error or f"unexpected HTTP {fetched.status}"
            self._failed(url, current, reason, hides_links=not fetched.wrong_type,
                         unreachable=fetched.unreachable and is_start)
            return
        self.result.fetched += 1
        scope = self.frontier.scope_for(current)
        assert scope is not None  # every URL in a chain was admitted
        page = await asyncio.to_thread(build_page, current, fetched.body, fetched.headers,
                                       header_canonical=fetched.canonical, resolve=self._canonical_in_scope,
                                       tags=self.config.tags, groups=self.config.groups)
        self._follow(page.links)
        await self._store(url, current, scope, fetched, page)

    def _redirect_target(self, url: str, chain: list[str], fetched: FetchResult, is_start: bool) -> str | None:
        """The next URL of a redirect chain, or None (with the outcome recorded) when the chain ends here."""
        location = fetched.headers.get("location")
        target = normalize_url(location, chain[-1]) if location else None
        if target is None:
            self._failed(url, chain[-1], f"HTTP {fetched.status} redirect without a usable Location")
        elif target in chain:
            self._failed(url, chain[-1], "redirect loop: " + " -> ".join(_local(u) for u in [*chain, target]))
        elif len(chain) > MAX_REDIRECTS:
            self._failed(url, chain[-1], f"more than {MAX_REDIRECTS} redirects")
        else:
            if is_start and self.frontier.scope_for(target) is None:
                # A start URL that moved (http → https, example.org → www.example.org): the site moved with it.
                self.frontier.add_scope(Scope.of(target, self.config.any_path))
            if self.frontier.admit(target):
                return target
            self.result.skipped[url] = (f"redirects to {target}, already visited" if target in self.frontier.seen
                                        else f"redirects outside the crawl scope, to {target}")
        return None

    def _canonical_in_scope(self, href: str | None, base: str) -> str | None:
        url = normalize_url(href, base) if href else None
        return url if url and self.frontier.scope_for(url) is not None else None

    def _failed(self, url: str, current: str, reason: str, *, hides_links: bool = False, unreachable: bool = False,
                keep: bool = True) -> None:
        """Record a failure. Unless the page is gone, whatever it contributed before is kept through a prune.

        `hides_links`: the page probably exists with content we did not read (timeout, server error, 403, too
        large), so pages linked only from it were never discovered and a prune would delete them wrongly."""
        self.result.failures[url] = reason if url == current or "loop" in reason else f"{reason} (at {current})"
        if keep:
            prior = self.state.get(current)
            self.kept.update({doc_id_for_url(current), *([prior.doc_id] if prior else [])})
        if hides_links and not looks_like_pdf(current):
            self.result.incomplete.append(f"{current} failed ({reason}): the pages it links to may be missed")
        if unreachable:
            self.result.unreachable.append(url)

    async def _store(self, url: str, current: str, scope: Scope, fetched: FetchResult, page: Page) -> None:
        if page.problem:
            self._failed(url, current, page.problem)
            return
        doc = page.doc
        if doc is None:
            self.result.skipped[url] = page.note or "nothing to store"
            return
        if doc.doc_id in self.doc_urls:
            self.result.skipped[url] = f"same document as {self.doc_urls[doc.doc_id]}"
            return
        self.doc_urls[doc.doc_id] = current
        self.kept.add(doc.doc_id)
        if doc.url and doc.url != current:  # the canonical URL needs no visit of its own
            self.frontier.seen.add(doc.url)
            self.canonical_done.add(doc.url)
        links = sorted({u for u in page.links if self.frontier.scope_for(u)})
        remembered = PageState(url=current, site=scope.key, doc_id=doc.doc_id, content_hash=doc.content_hash,
                               etag=fetched.headers.get("etag"), last_modified=fetched.headers.get("last-modified"),
                               links=links, options=self.options)
        await self.docs.put(_Stored(doc, remembered))

    # -- the single writer ---------------------------------------------------------------------------------

    async def _writer(self) -> None:
        done = False
        while not done:
            item = await self.docs.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < self.config.batch and not self.docs.empty():
                nxt = self.docs.get_nowait()
                if nxt is None:
                    done = True
                    break
                batch.append(nxt)
            await asyncio.to_thread(self._ingest, [b.doc for b in batch])
            for stored in batch:
                if self.known.get(stored.doc.doc_id) == stored.doc.content_hash:  # stored now, or unchanged
                    self.state.put(stored.page)

    def _ingest(self, docs: list[SourceDocument]) -> None:
        """Runs in a worker thread. The ingestor reports a document it cannot chunk, embed or store and goes on
        with the others; what is left to raise (the store itself failing) ends the crawl with a clear message."""
        self.ingestor.ingest_documents(docs, self.result.ingest, self.known, self.restricted)

    # -- pruning -------------------------------------------------------------------------------------------

    def _prune(self) -> int:
        """Delete this scope's documents that the crawl did not see (only called after a complete crawl)."""
        remembered = set().union(*(self.state.doc_ids(s.key) for s in self.frontier.scopes))
        stale = [d.doc_id for d in self.ingestor.store.documents()
                 if d.doc_id not in self.kept and (d.doc_id in remembered or (
                     d.source_path and any(s.covers_source(d.source_path) for s in self.frontier.scopes)))]
        if not stale:
            return 0
        removed = self.ingestor.store.delete_documents(stale)
        self.state.forget_documents(stale)
        self.state.commit()
        return removed


def _local(url: str) -> str:
    """/path?query of a URL: enough to read a redirect chain on one site."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


async def crawl(config: CrawlConfig, ingestor: Ingestor, state: CrawlState,
                progress: TextIO | None = None) -> CrawlResult:
    """Crawl, store what changed, prune if asked and the crawl was complete. Never raises for a page's fault."""
    return await _Crawl(config, ingestor, state, progress).run()


def progress_stream() -> TextIO | None:
    """Progress goes to stderr only when a person watches it."""
    return sys.stderr if sys.stderr.isatty() else None


__all__ = ["CrawlConfig", "CrawlResult", "crawl", "progress_stream"]
