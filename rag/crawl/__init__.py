"""Crawl a benefits website (or its sitemap) politely and keep the knowledge store in sync with it.

`crawler.crawl` is the entry point; the other modules are its parts: URL scope and normalisation (`frontier`),
robots.txt (`robots`), sitemaps (`sitemap`), HTTP with retries and limits (`fetch`), fetched bytes → documents
(`pages`) and what was seen last time (`state`).
"""

from rag.crawl.crawler import CrawlConfig, CrawlResult, crawl

__all__ = ["CrawlConfig", "CrawlResult", "crawl"]
