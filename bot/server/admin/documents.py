"""Documents: which documents the answers quoted in the period (most, least, never), which went stale (their own
`updated` date, or their page's last successful crawl, older than NAVIBOT_ADMIN_STALE_DAYS), and the pages the last
crawl could not fetch (rag/crawl/state.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from bot.server.admin.period import Period
from bot.server.admin.snapshot import Snapshot
from rag.crawl.state import CrawlState, CrawlStateError, state_path_for
from rag.search.store import KnowledgeStore, StoredDocument

LISTED = 15  # rows in the most and least cited tables


@dataclass(frozen=True, slots=True)
class DocumentRow:
    doc_id: str
    title: str
    url: str | None
    cited: int = 0
    updated: str | None = None
    crawled: str | None = None  # last successful crawl of its page (UTC ISO), if it came from the crawler
    stale_because: str = ""


@dataclass(slots=True)
class DocumentsView:
    total: int
    most: list[DocumentRow] = field(default_factory=list)
    least: list[DocumentRow] = field(default_factory=list)
    never: list[DocumentRow] = field(default_factory=list)
    stale: list[DocumentRow] = field(default_factory=list)
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (url, reason, crawled at)
    crawl_note: str = ""


def _day(text: str | None) -> date | None:
    """The date of an `updated` value as documents carry it (2024-05-01, 2024-05-01T10:00:00Z, ...), if readable."""
    if not text:
        return None
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def _crawl_record(store_path: Path) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, str]], str]:
    path = state_path_for(store_path)
    if not path.exists():
        return {}, [], "no crawl has run on this knowledge store (navibot crawl)"
    try:
        state = CrawlState(path)
    except CrawlStateError as exc:
        return {}, [], str(exc)
    try:
        return state.last_seen(), state.failures(), ""
    except CrawlStateError as exc:
        return {}, [], str(exc)
    finally:
        state.close()


def documents_view(snapshot: Snapshot, knowledge: KnowledgeStore, store_path: Path, period: Period,
                   stale_days: int, today: date | None = None) -> DocumentsView:
    cited: Counter[str] = Counter()
    for fact in snapshot.answers(period):
        cited.update(fact.doc_ids)  # once per answer, however many quotes
    documents: list[StoredDocument] = knowledge.documents()
    seen, failed, note = _crawl_record(store_path)
    limit = (today or datetime.now(UTC).date()) - timedelta(days=stale_days)
    rows: list[DocumentRow] = []
    for doc in documents:
        crawled = seen.get(doc.doc_id)
        why = []
        updated = _day(doc.updated)
        if updated is not None and updated < limit:
            why.append(f"updated {updated.isoformat()}")
        crawled_day = _day(crawled[1]) if crawled else None
        if crawled_day is not None and crawled_day < limit:
            why.append(f"last crawled {crawled_day.isoformat()}")
        rows.append(DocumentRow(doc.doc_id, doc.title, doc.url or (crawled[0] if crawled else None),
                                cited[doc.doc_id], doc.updated, crawled[1] if crawled else None, "; ".join(why)))
    quoted = sorted((r for r in rows if r.cited), key=lambda r: (-r.cited, r.title))
    return DocumentsView(
        total=len(rows), most=quoted[:LISTED], least=list(reversed(quoted[-LISTED:])),
        never=sorted((r for r in rows if not r.cited), key=lambda r: r.title),
        stale=sorted((r for r in rows if r.stale_because), key=lambda r: (r.updated or r.crawled or "", r.title)),
        failed=failed, crawl_note=note)
