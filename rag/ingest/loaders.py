"""Read files into SourceDocuments: Markdown, HTML, plain text, PDF and JSONL corpora.

A loader raises `LoadError` with a reason a person can act on; ingestion reports it by file name and goes on.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from rag.documents import Block, SourceDocument
from rag.ingest.html_extract import extract_html
from rag.ingest.text_blocks import markdown_blocks, parse_front_matter, plain_text_blocks

MARKDOWN = {".md", ".markdown", ".mdx"}
HTML = {".html", ".htm", ".xhtml"}
TEXT = {".txt", ".text"}
PDF = {".pdf"}
JSONL = {".jsonl", ".ndjson"}
SUPPORTED = MARKDOWN | HTML | TEXT | PDF | JSONL


class LoadError(Exception):
    """A file (or a line of a JSONL file) that cannot be ingested, with the reason."""


@dataclass(slots=True)
class LoadResult:
    """What one file yielded: documents, plus per-line problems in JSONL files that did not stop the file."""

    documents: list[SourceDocument]
    problems: list[str]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "doc"


def doc_id_for(path: Path, root: Path) -> str:
    """Readable and stable: the path relative to the folder given on the command line, without the suffix."""
    base = root.parent if root.is_dir() else path.parent
    full, base = path.resolve(), base.resolve()
    rel = full.relative_to(base) if full.is_relative_to(base) else Path(path.name)
    return "/".join([*rel.parts[:-1], rel.stem])


def _mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise LoadError("not valid UTF-8 or Windows-1252 text")


def title_from(blocks: list[Block], fallback: str) -> tuple[str, list[Block]]:
    """A document that opens with a heading is titled by it; the heading is dropped from the blocks because the
    title is on every chunk anyway."""
    if blocks and blocks[0].kind == "heading":
        return blocks[0].text, blocks[1:]
    return fallback, blocks


def _drop_repeated_title(blocks: list[Block], title: str) -> list[Block]:
    """Texts often open with their own title as a heading: it is on every chunk already."""
    if blocks and blocks[0].kind == "heading" and _same_title(blocks[0].text, title):
        return blocks[1:]
    return blocks


def _split_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):  # "snap, students" or "[snap, students]"
        return [v.strip().strip("\"'") for v in value.strip().strip("[]").split(",") if v.strip().strip("\"'")]
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    raise LoadError(f"expected a list or comma-separated text, got {type(value).__name__}")


def load_markdown(path: Path, doc_id: str) -> SourceDocument:
    meta, body = parse_front_matter(_read_text(path))
    blocks = markdown_blocks(body)
    if meta.get("title"):
        title = meta["title"]
        blocks = _drop_repeated_title(blocks, title)  # a first heading that says something else stays
    else:
        title, blocks = title_from(blocks, path.stem.replace("-", " ").replace("_", " "))
    return SourceDocument(
        doc_id=meta.get("doc_id") or doc_id,
        title=title,
        blocks=blocks,
        url=meta.get("url") or None,
        tags=_split_list(meta.get("tags")),
        groups=_split_list(meta.get("groups")) or ["all"],
        updated=meta.get("updated") or _mtime(path),
        metadata={k: v for k, v in meta.items() if k not in {"title", "url", "tags", "groups", "updated", "doc_id"}},
    )


def load_html(path: Path, doc_id: str) -> SourceDocument:
    page = extract_html(_read_text(path))
    # The page's <h1> is usually cleaner than <title> ("Students | Food and Nutrition Service").
    title, blocks = title_from(page.blocks, page.title or path.stem)
    return SourceDocument(doc_id=doc_id, title=title, blocks=blocks, url=page.canonical_url, updated=_mtime(path))


def load_text(path: Path, doc_id: str) -> SourceDocument:
    blocks = plain_text_blocks(_read_text(path))
    title, blocks = title_from(blocks, path.stem.replace("-", " ").replace("_", " "))
    return SourceDocument(doc_id=doc_id, title=title, blocks=blocks, updated=_mtime(path))


def load_pdf(path: Path, doc_id: str) -> SourceDocument:
    """Text per page with page numbers kept; outline entries (bookmarks) are recognised as headings."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"unreadable PDF ({exc.__class__.__name__}: {exc})") from exc
    return load_pdf_bytes(data, doc_id, path.stem.replace("-", " ").replace("_", " "), updated=_mtime(path))


def load_pdf_bytes(data: bytes, doc_id: str, fallback_title: str, updated: str | None = None) -> SourceDocument:
    """A PDF held in memory (a file's bytes, or a download that never touches the disk)."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        outline_titles = _outline_titles(reader)
        blocks: list[Block] = []
        for number, page in enumerate(reader.pages, start=1):
            blocks.extend(plain_text_blocks(page.extract_text() or "", page=number, known_headings=outline_titles))
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, OSError) as exc:
        # pypdf raises all sorts on damaged files (LimitReachedError, AttributeError...): all mean "unreadable".
        raise LoadError(f"unreadable PDF ({exc.__class__.__name__}: {exc})") from exc
    if not any(b.kind != "heading" for b in blocks):
        raise LoadError("PDF has no extractable text (scanned images need OCR first)")
    title, blocks = title_from(blocks, meta_title.strip() or fallback_title)
    return SourceDocument(doc_id=doc_id, title=meta_title.strip() or title, blocks=blocks, updated=updated)


def _outline_titles(reader: object) -> set[str]:
    titles: set[str] = set()

    def visit(items: object) -> None:
        for item in items if isinstance(items, list) else []:
            if isinstance(item, list):
                visit(item)
            elif getattr(item, "title", None):
                titles.add(str(item.title).strip())

    try:
        visit(reader.outline)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - a damaged outline (any error inside pypdf) must not lose the page text
        return set()
    return titles


def parse_jsonl_document(record: dict[str, object], where: str) -> SourceDocument:
    """One corpus line: `doc_id`, `title`, `text` required; `url`, `tags`, `groups`; anything else is metadata."""
    missing = [k for k in ("doc_id", "title", "text")
               if not isinstance(record.get(k), str) or not str(record[k]).strip()]
    if missing:
        raise LoadError(f"{where}: missing or empty field(s) {', '.join(missing)}")
    text = str(record["text"])
    is_markdown = bool(re.search(r"^#{1,6}\s", text, flags=re.MULTILINE))
    blocks = markdown_blocks(text) if is_markdown else plain_text_blocks(text)
    title = str(record["title"]).strip()
    stripped = _drop_repeated_title(blocks, title)
    if len(stripped) < len(blocks):
        blocks = stripped
    elif blocks and blocks[0].kind == "heading" and not is_markdown:
        # A plain text that opens with its own heading names what the whole text is about (e.g. "Original Card
        # for a Foreign Born U.S. Citizen Adult" under a shared site title): it heads every section below it.
        blocks = [Block("heading", blocks[0].text, level=1, page=blocks[0].page), *blocks[1:]]
    known = {"doc_id", "title", "text", "url", "tags", "groups", "updated"}
    return SourceDocument(
        doc_id=str(record["doc_id"]).strip(),
        title=title,
        blocks=blocks,
        url=(str(record["url"]) if record.get("url") else None),
        tags=_split_list(record.get("tags")),
        groups=_split_list(record.get("groups")) or ["all"],
        updated=(str(record["updated"]) if record.get("updated") else None),
        metadata={k: v for k, v in record.items() if k not in known},
    )


def _same_title(heading: str, title: str) -> bool:
    h, t = slug(heading), slug(title)
    return bool(h) and (t.startswith(h) or h.startswith(t))


def load_jsonl(path: Path) -> LoadResult:
    docs: list[SourceDocument] = []
    problems: list[str] = []
    seen: set[str] = set()
    # Split on "\n" only: str.splitlines() also breaks on U+2028, U+0085 etc., which JSON strings may hold raw.
    for number, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise LoadError(f"line {number}: not a JSON object")
            doc = parse_jsonl_document(record, f"line {number}")
        except json.JSONDecodeError as exc:
            problems.append(f"line {number}: invalid JSON ({exc.msg})")
            continue
        except LoadError as exc:
            problems.append(str(exc))
            continue
        if doc.doc_id in seen:
            problems.append(f"line {number}: duplicate doc_id {doc.doc_id!r} (kept the first)")
            continue
        seen.add(doc.doc_id)
        docs.append(doc)
    if not docs and problems:
        raise LoadError("no valid document lines: " + "; ".join(problems[:3]))
    return LoadResult(docs, problems)


def load_file(path: Path, root: Path) -> LoadResult:
    """Load one file; every document gets `source_path` so that --prune can tell which ones vanished."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise LoadError(f"unsupported file type {suffix or '(none)'}; supported: {', '.join(sorted(SUPPORTED))}")
    try:
        if path.stat().st_size == 0:
            raise LoadError("empty file")
        if suffix in JSONL:
            result = load_jsonl(path)
        else:
            doc_id = doc_id_for(path, root)
            loader = {**dict.fromkeys(MARKDOWN, load_markdown), **dict.fromkeys(HTML, load_html),
                      **dict.fromkeys(TEXT, load_text), **dict.fromkeys(PDF, load_pdf)}[suffix]
            doc = loader(path, doc_id)
            if not any(b.kind != "heading" for b in doc.blocks):
                raise LoadError("no text content found")
            result = LoadResult([doc], [])
    except OSError as exc:
        raise LoadError(f"cannot read file ({exc.strerror or exc})") from exc
    for doc in result.documents:
        doc.source_path = str(path.resolve())
    return result


def iter_files(root: Path) -> Iterator[Path]:
    """A file as given, or every supported file under a folder (recursive, hidden folders skipped, sorted)."""
    if root.is_file():
        yield root
        return
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix.lower() in SUPPORTED:
            yield path
