"""`navibot crawl`: fetch a benefits website (or its sitemap) into the knowledge store, and keep them in sync.

Kept apart from bot/cli/main.py, which only registers it.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from pathlib import Path

from bot.chat.access import check_groups
from bot.config.settings import Settings
from bot.errors import UserError
from bot.wiring.open_stores import store_description
from bot.wiring.runtime import build_core
from rag.crawl.crawler import CrawlConfig, CrawlResult, crawl, progress_stream
from rag.crawl.fetch import USER_AGENT, FetchPolicy
from rag.crawl.frontier import normalize_url
from rag.crawl.state import CrawlState, state_path_for
from rag.mongo.config import MongoUnavailable


def add_crawl_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    crawl_parser = subparsers.add_parser(
        "crawl", help="fetch a website or sitemap into the store; re-run it to keep the store in sync",
        description="Crawl pages under the start URLs (same host, same folder) and their linked PDFs, politely "
                    f"(robots.txt, a delay per host, user agent {USER_AGENT!r}). Unchanged pages are not "
                    "embedded again; --prune removes the documents of pages that are gone, after a complete crawl.")
    crawl_parser.add_argument("urls", nargs="*", metavar="URL", help="start page(s), e.g. https://www.fns.usda.gov/snap/")
    crawl_parser.add_argument("--sitemap", action="append", default=[], metavar="URL",
                              help="also visit every page of this sitemap or sitemap index (repeatable); pages outside "
                                   "the start URLs' scope are skipped, and a sitemap alone covers its whole host")
    crawl_parser.add_argument("--max-pages", type=int, default=1000, metavar="N",
                              help="stop after visiting N pages (default 1000); a crawl cut short never prunes")
    crawl_parser.add_argument("--concurrency", type=int, default=4, metavar="N",
                              help="parallel requests (default 4); --delay still spaces requests to one host")
    crawl_parser.add_argument("--delay", type=float, default=0.5, metavar="SECONDS",
                              help="polite pause between two requests to one host (default 0.5; robots.txt "
                                   "Crawl-delay wins if longer)")
    crawl_parser.add_argument("--any-path", action="store_true",
                              help="follow links anywhere on the start host, not only under the start URL's folder")
    crawl_parser.add_argument("--prune", action="store_true",
                              help="after a complete crawl, delete this site's documents whose pages are gone")
    crawl_parser.add_argument("--tags", help="comma-separated program tags added to every page, e.g. snap")
    crawl_parser.add_argument("--groups", help="comma-separated access groups for these pages (default: all)")
    crawl_parser.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                              help="give up on one request after this long (default 30)")
    crawl_parser.add_argument("--retries", type=int, default=2, metavar="N",
                              help="retries after a timeout, 429 or 5xx, with growing waits (default 2)")
    crawl_parser.add_argument("--store", type=Path, help="SQLite store file (default: from settings)")
    crawl_parser.set_defaults(func=cmd_crawl)


def _csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _config(args: argparse.Namespace) -> CrawlConfig:
    if not args.urls and not args.sitemap:
        raise UserError("give a URL to start from (navibot crawl https://www.example.gov/benefits/) or --sitemap URL")
    for url in [*args.urls, *args.sitemap]:
        if normalize_url(url) is None:  # None for anything but an absolute http(s) URL with a host
            raise UserError(f"{url}: not an http:// or https:// URL")
    for name, value, least in (("--max-pages", args.max_pages, 1), ("--concurrency", args.concurrency, 1),
                               ("--retries", args.retries, 0)):
        if value < least:
            raise UserError(f"{name} must be at least {least}")
    if args.delay < 0 or args.timeout <= 0:
        raise UserError("--delay must be 0 or more and --timeout more than 0")
    return CrawlConfig(start_urls=list(args.urls), sitemaps=list(args.sitemap), max_pages=args.max_pages,
                       concurrency=args.concurrency, delay=args.delay, any_path=args.any_path, prune=args.prune,
                       tags=_csv(args.tags), groups=check_groups(_csv(args.groups), "--groups"),
                       policy=FetchPolicy(timeout=args.timeout, retries=args.retries))


def report(result: CrawlResult, args: argparse.Namespace, store: str) -> None:
    for url, reason in result.failures.items():
        print(f"failed {url}: {reason}", file=sys.stderr)
    for problem in result.ingest.problems:
        print(f"not stored {problem}", file=sys.stderr)
    if getattr(args, "verbose", False):
        for url, reason in result.skipped.items():
            print(f"skipped {url}: {reason}", file=sys.stderr)
    print(f"crawl: {result.line()} -> {store}")
    if args.prune and not result.pruned:
        print("not pruned, the crawl did not see the whole site: " + "; ".join(dict.fromkeys(result.incomplete)))
    elif result.unvisited:
        print(f"stopped at --max-pages {args.max_pages}: {result.unvisited} more URLs were found but not visited")


def cmd_crawl(args: argparse.Namespace, settings: Settings) -> int:
    config = _config(args)
    store = args.store or settings.store_path  # with NAVIBOT_STORE=mongodb, the crawl state file still lives here
    where = store_description(settings, store)  # the SQLite file, or the MongoDB host and database
    core = build_core(settings, store)
    try:
        state = CrawlState(state_path_for(store))
        try:
            result = asyncio.run(crawl(config, core.ingestor, state, progress_stream()))
            state.record_failures(result.failures)  # the admin page's Documents view lists them
        finally:
            state.close()
    except sqlite3.Error as exc:  # the store's (the state's own are CrawlStateErrors): disk full, locked by a writer
        raise UserError(f"crawl stopped, the knowledge store {where} failed: {exc}") from exc
    except MongoUnavailable as exc:  # the MongoDB store lost its server mid-crawl (the message names the host)
        raise UserError(f"crawl stopped: {exc}") from exc
    finally:
        core.close()
    if result.unreachable and not result.fetched:
        url = result.unreachable[0]
        raise UserError(f"cannot reach {url}: {result.failures.get(url, 'no connection')}")
    report(result, args, where)
    return 0 if result.fetched else 1
