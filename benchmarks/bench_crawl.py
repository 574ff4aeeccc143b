"""Crawl speed: pages per second on a local 500-page site, with 1 and with 8 concurrent workers.

    python benchmarks/bench_crawl.py            # prints the figures
    python benchmarks/bench_crawl.py --write    # and replaces the bench_crawl section of benchmarks/RESULTS.md

The site is generated (seeded): an index, 9 section pages and 490 articles of 400-700 words made of the demo
knowledge base's sentences, with a header, menu, cookie banner and footer around the main content, and links
between articles. An aiohttp server in a separate process answers every request after a fixed 20 ms, standing for
a real server's latency. The polite per-host delay is 0 here (the default 0.5 s would measure the delay, not the
crawler). Three figures, each the median of 3 runs:

- fetch + extract: the crawler with an ingestor that discards the documents (no embedding, no store);
- whole run: into a fresh SQLite store with the default embedder, as `navibot crawl` does;
- re-crawl of the unchanged site with that store: conditional requests, every page answers 304.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import multiprocessing
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import aiohttp

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # measure this checkout

from benchmarks.results_file import write_section
from bot.config.settings import Settings
from bot.wiring.runtime import build_core
from rag.crawl.crawler import CrawlConfig, CrawlResult, crawl
from rag.crawl.state import CrawlState, state_path_for
from rag.documents import SourceDocument
from rag.ingest.ingestor import IngestSummary
from rag.ingest.text_blocks import parse_front_matter

RESULTS = REPO / "benchmarks" / "RESULTS.md"
PAGES, SECTIONS, LATENCY, RUNS = 500, 9, 0.020, 3
CHROME = ('<div class="cookie-banner">We use cookies. <a href="/cookies">Settings</a></div><header><a href="/">'
          'County Human Services</a><nav class="main-menu">{menu}</nav></header>')
FOOTER = '<footer><p>County Human Services, 100 Main Street. <a href="/privacy">Privacy</a></p></footer>'


def _sentences() -> list[str]:
    found: list[str] = []
    for path in sorted((REPO / "rag" / "demo_kb").glob("*.md")):
        _, body = parse_front_matter(path.read_text(encoding="utf-8"))
        for line in body.splitlines():
            if line.strip() and not line.startswith(("#", "|", "-", "*", ">")):
                found.extend(s for s in re.split(r"(?<=[.!?])\s+", line.strip()) if len(s.split()) >= 6)
    return found


def build_site() -> dict[str, tuple[str, str]]:
    """path → (HTML, ETag) for every page of the generated site."""
    rnd = random.Random(9)
    sentences = _sentences()
    sections = [f"/site/s{i}/" for i in range(SECTIONS)]
    articles = [f"{sections[i % SECTIONS]}a{i}.html" for i in range(PAGES - 1 - SECTIONS)]
    menu = "".join(f'<a href="{s}">Section {n}</a> ' for n, s in enumerate(sections))

    def paragraphs(count: int) -> str:
        return "".join(f"<p>{' '.join(rnd.sample(sentences, rnd.randint(3, 6)))}</p>" for _ in range(count))

    def html(title: str, main: str) -> str:
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title} | County</title></head><body>"
                f"{CHROME.format(menu=menu)}<main><h1>{title}</h1>{main}</main>{FOOTER}</body></html>")

    pages: dict[str, str] = {"/site/": html("Benefits for families", paragraphs(2) + "<ul>" + "".join(
        f'<li><a href="{s}">Section {n}</a></li>' for n, s in enumerate(sections)) + "</ul>")}
    for n, section in enumerate(sections):
        own = [a for a in articles if a.startswith(section)]
        pages[section] = html(f"Section {n}", paragraphs(1) + "<ul>" + "".join(
            f'<li><a href="{a}">Article {a}</a></li>' for a in own) + "</ul>")
    for i, article in enumerate(articles):
        related = "".join(f'<a href="{a}">related</a> ' for a in rnd.sample(articles, 3))
        body = "".join(f"<h2>Part {k}</h2>{paragraphs(rnd.randint(2, 3))}" for k in range(1, 4))
        items = "".join(f"<li>{s}</li>" for s in rnd.sample(sentences, 3))
        pages[article] = html(f"Article {i}: {rnd.choice(sentences)[:60]}",
                              f"{body}<ul>{items}</ul><p>See also {related}</p>")
    assert len(pages) == PAGES
    return {path: (text, '"' + hashlib.sha1(text.encode()).hexdigest()[:16] + '"') for path, text in pages.items()}


def serve(conn: multiprocessing.connection.Connection) -> None:
    """The site in its own process, so that serving does not share the crawler's CPU time and GIL."""
    from tests.fakes.crawl_site import Resp, Site

    routes = {path: Resp(text, etag=etag, delay=LATENCY) for path, (text, etag) in build_site().items()}
    with Site(routes) as site:
        conn.send(site.base)
        conn.recv()  # until told to stop


class _NullStore:
    def check_embedder(self, name: str, dim: int) -> None: ...

    def document_hashes(self) -> dict[str, str]:
        return {}

    def documents(self) -> list[object]:
        return []


class NullIngestor:
    """Keeps the documents and stores nothing: isolates fetching and extraction from embedding."""

    store = _NullStore()
    embedder = SimpleNamespace(name="none", dim=0)

    def __init__(self) -> None:
        self.docs: list[SourceDocument] = []

    def ingest_documents(self, docs: list[SourceDocument], summary: IngestSummary, known: dict[str, str]) -> None:
        summary.added += len(docs)
        self.docs.extend(docs)


@dataclass(slots=True)
class Run:
    seconds: float
    result: CrawlResult

    @property
    def rate(self) -> float:
        return self.result.fetched / self.seconds


def crawl_once(base: str, concurrency: int, ingestor: object, state_path: Path) -> Run:
    config = CrawlConfig(start_urls=[base + "/site/"], concurrency=concurrency, delay=0.0, max_pages=10 * PAGES)
    state = CrawlState(state_path)
    started = time.perf_counter()
    try:
        result = asyncio.run(crawl(config, ingestor, state))  # type: ignore[arg-type]
    finally:
        state.close()
    run = Run(time.perf_counter() - started, result)
    if result.fetched != PAGES or result.failures:
        raise SystemExit(f"crawl saw {result.fetched} pages, failures: {list(result.failures.items())[:3]}")
    return run


def embedding_alone(docs: list[SourceDocument], tmp: Path) -> list[float]:
    """Seconds to chunk, embed and store the crawled documents with no crawl around it (the writer's share)."""
    times = []
    for n in range(RUNS):
        core = build_core(Settings(data_dir=tmp), tmp / f"alone-{n}.sqlite3")
        try:
            started = time.perf_counter()
            core.ingestor.ingest_documents(docs, IngestSummary())
            times.append(time.perf_counter() - started)
        finally:
            core.close()
    return times


def measure(base: str, tmp: Path) -> tuple[dict[tuple[str, int], list[Run]], list[float]]:
    runs: dict[tuple[str, int], list[Run]] = {}
    docs: list[SourceDocument] = []
    for concurrency in (1, 8):
        for n in range(RUNS):
            null = NullIngestor()
            runs.setdefault(("fetch + extract", concurrency), []).append(
                crawl_once(base, concurrency, null, tmp / f"null-{concurrency}-{n}.sqlite3"))
            docs = null.docs
            store = tmp / f"store-{concurrency}-{n}.sqlite3"
            core = build_core(Settings(data_dir=tmp), store)
            try:
                runs.setdefault(("whole run (embed + store)", concurrency), []).append(
                    crawl_once(base, concurrency, core.ingestor, state_path_for(store)))
                again = crawl_once(base, concurrency, core.ingestor, state_path_for(store))
                if again.result.not_modified != PAGES:
                    raise SystemExit(f"re-crawl: only {again.result.not_modified} pages not modified")
                runs.setdefault(("re-crawl, nothing changed (304s)", concurrency), []).append(again)
            finally:
                core.close()
            print(f"concurrency {concurrency}, run {n + 1}: " + ", ".join(
                f"{mode} {rs[-1].rate:.1f}/s" for (mode, c), rs in runs.items() if c == concurrency), file=sys.stderr)
    return runs, embedding_alone(docs, tmp)


def report(runs: dict[tuple[str, int], list[Run]], alone: list[float], seconds: float) -> str:
    modes = list(dict.fromkeys(mode for mode, _ in runs))
    lines = ["| figure (500 pages, 20 ms per response) | concurrency 1 | concurrency 8 | speed-up |",
             "|---|---:|---:|---:|"]
    for mode in modes:
        one = statistics.median(r.rate for r in runs[(mode, 1)])
        eight = statistics.median(r.rate for r in runs[(mode, 8)])
        s1 = statistics.median(r.seconds for r in runs[(mode, 1)])
        s8 = statistics.median(r.seconds for r in runs[(mode, 8)])
        lines.append(f"| {mode}: pages/s (s per crawl) | {one:.1f} ({s1:.1f} s) | {eight:.1f} ({s8:.1f} s) | "
                     f"{eight / one:.1f}× |")
    whole = runs[("whole run (embed + store)", 8)][0].result.ingest
    writer = statistics.median(alone)
    s8_whole = statistics.median(r.seconds for r in runs[("whole run (embed + store)", 8)])
    s8_fetch = statistics.median(r.seconds for r in runs[("fetch + extract", 8)])
    verdict = ("the single writer that embeds sets the pace, and fetching overlaps with it"
               if writer >= 0.7 * s8_whole else "fetching and embedding share the time")
    return (f"""## Crawl speed (`bench_crawl.py`)

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python {platform.python_version()}, aiohttp {aiohttp.__version__}; \
{os.cpu_count()} CPUs ({platform.machine()}, {platform.system()})
- Command: `python benchmarks/bench_crawl.py --write`
- Site: {PAGES} generated pages (index, {SECTIONS} sections, articles of 400-700 words from the demo pages' sentences,
  with menus, cookie banner and footer); served by aiohttp in another process, every response after a fixed
  {LATENCY * 1000:.0f} ms to stand for a real server; per-host polite delay 0 (the default 0.5 s would cap any
  crawl of one host at 2 pages/s); medians of {RUNS} runs.
- The whole run writes {whole.chunks} chunks for {whole.added} documents into a fresh SQLite store.

""" + "\n".join(lines) + f"""

Chunking, embedding and storing the same {PAGES} documents with no crawl around them takes
{writer:.1f} s (median of {RUNS}), against {s8_whole:.1f} s for the whole run and {s8_fetch:.1f} s for fetch + extract
at concurrency 8: {verdict}.
With concurrency 1 the crawl waits on each response in turn, so the latency bounds it (at most
{1 / LATENCY:.0f} pages/s). Whole benchmark: {seconds:.0f} s.
""")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    server = context.Process(target=serve, args=(theirs,), daemon=True)
    server.start()
    try:
        base = ours.recv()
        with tempfile.TemporaryDirectory(prefix="navibot-bench-crawl-") as tmp:
            runs, alone = measure(base, Path(tmp))
    finally:
        ours.send("stop")
        server.join(10)
    body = report(runs, alone, time.perf_counter() - started)
    print(body)
    if args.write:
        write_section("bench_crawl", body)
        print(f"wrote the bench_crawl section of {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
