"""Turn Markdown and plain text into structural blocks (headings, paragraphs, lists, tables).

Only whitespace is normalised: the text of every content block is the source text, because it will be quoted
verbatim as a citation.
"""

from __future__ import annotations

import re

from rag.documents import Block

_WS = re.compile(r"[ \t\u00a0]+")
_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•▪◦]|\d{1,3}[.)]|[a-zA-Z][.)])\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)(?P<t>[^*_]{1,100}?)(\*\*|__)\s*$")
_NUMBERED_HEADING = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2})*[.)]?|[IVX]{1,5}\.|[A-Z][.)])\s+(?P<rest>.+)$")
# A line that opens a labelled paragraph of a regulation or manual: "(b) Exemptions", "(2)(i) The", "(iv) A".
# A capital must follow, so that a wrapped line starting with a citation ("(a)(1) of this section") does not.
_LABEL = r"\((?:[a-z]{1,7}|\d{1,3}|[A-Z]{1,2})\)"
_LABELLED_LINE = re.compile(rf"^{_LABEL}(?:\s*{_LABEL})*\s+[A-Z\"“]")


def normalize_space(text: str) -> str:
    """Collapse runs of spaces and tabs and trim each line; keep line breaks."""
    lines = [_WS.sub(" ", line).strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip()


def join_lines(lines: list[str]) -> str:
    """A paragraph wrapped over several source lines is one line of text (whitespace normalisation only)."""
    return _WS.sub(" ", " ".join(line.strip() for line in lines)).strip()


def parse_front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split simple `key: value` front matter (between `---` lines) from a Markdown file."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    meta: dict[str, str] = {}
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return meta, "\n".join(lines[i + 1 :])
        key, sep, value = lines[i].partition(":")
        if sep and key.strip():
            meta[key.strip().lower()] = value.strip().strip("\"'")
    return {}, text  # no closing fence: not front matter


def _strip_html_comments(text: str) -> str:
    return re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)


def markdown_blocks(text: str) -> list[Block]:
    """Parse Markdown line by line: ATX headings, fenced code, tables, lists (loose or tight) and paragraphs."""
    text = _strip_html_comments(text.replace("\r\n", "\n").replace("\r", "\n"))
    lines = text.split("\n")
    blocks: list[Block] = []
    para: list[str] = []
    items: list[str] = []  # current list, one entry per item (continuation lines joined)
    rows: list[str] = []
    last_heading_level = 1
    i = 0

    def flush() -> None:
        nonlocal para, items, rows
        if para:
            bold = _BOLD_LINE.match(" ".join(para)) if len(para) == 1 else None
            if bold:  # a line that is only bold text acts as a minor heading ("**Authority:**")
                title = bold.group("t").strip().rstrip(":")
                blocks.append(Block("heading", title, level=min(last_heading_level + 1, 6)))
            else:
                blocks.append(Block("paragraph", join_lines(para)))
        if items:
            blocks.append(Block("list", "\n".join(items)))
        if rows:
            blocks.append(Block("table", "\n".join(rows)))
        para, items, rows = [], [], []

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if _FENCE.match(line):
            flush()
            fence = _FENCE.match(line).group(1)  # type: ignore[union-attr]
            code = [line.rstrip()]
            i += 1
            while i < len(lines):
                code.append(lines[i].rstrip())
                if lines[i].strip().startswith(fence):
                    break
                i += 1
            blocks.append(Block("paragraph", "\n".join(code).strip()))
            i += 1
            continue
        heading = _MD_HEADING.match(stripped) if not line.startswith("    ") else None
        if heading:
            flush()
            last_heading_level = len(heading.group(1))
            title = _WS.sub(" ", heading.group(2)).strip()
            if title:
                blocks.append(Block("heading", title, level=last_heading_level))
        elif not stripped:
            # A blank line ends a paragraph or table; a list survives one blank line between items (loose lists).
            if para or rows:
                flush()
            elif items:
                nxt = next((ln for ln in lines[i + 1 :] if ln.strip()), "")
                if not _LIST_ITEM.match(nxt) and not (nxt.startswith("  ") and nxt.strip()):
                    flush()
        elif _TABLE_ROW.match(line):
            if para and not rows:
                flush()
            if items:
                flush()
            rows.append(_WS.sub(" ", stripped))
        elif _LIST_ITEM.match(line) and not para:
            if rows:
                flush()
            items.append(_WS.sub(" ", stripped))
        elif _LIST_ITEM.match(line) and para and (re.match(r"^\s*[-*+]\s", line) or para[-1].rstrip().endswith(":")):
            flush()  # a bullet, or any item right after a lead-in ending with ":", starts a list
            items.append(_WS.sub(" ", stripped))
        elif items and line.startswith((" ", "\t")):
            items[-1] = f"{items[-1]} {_WS.sub(' ', stripped)}"  # continuation of an item
        else:
            if items or rows:
                flush()
            para.append(line)
        i += 1
    flush()
    return blocks


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'’-]*", text)


def is_heading_line(line: str) -> bool:
    """Heuristic for headings in plain text: short, no sentence punctuation at the end, title-like.

    Catches "For Your Widow Or Widower", "1. Forgetting to Update Address", "ELIGIBILITY RULES" and
    "What Is A Survivor?", and leaves ordinary sentences alone.
    """
    line = line.strip()
    if not line or len(line) > 100 or (_LIST_ITEM.match(line) and not _NUMBERED_HEADING.match(line)):
        return False
    numbered = _NUMBERED_HEADING.match(line)
    core = numbered.group("rest") if numbered else line
    words = _words(core)
    if not words or len(core.split()) > 12:
        return False
    if core[-1] in ".,;" or (core[-1] == ":" and len(words) > 6):
        return False
    if core.isupper() and len(words) >= 1:
        return True
    significant = [w for w in words if len(w) > 3]
    if not significant:
        return numbered is not None and core[0].isupper()
    capitalised = sum(1 for w in significant if w[0].isupper())
    if core[-1] == "?":
        return capitalised == len(significant)  # "What Is A Survivor?" but not "What is a survivor?"
    return capitalised / len(significant) >= 0.6 or (numbered is not None and core[0].isupper())


def _labelled_paragraphs(raws: list[str]) -> list[str]:
    """PDF text often runs paragraphs together without a blank line; in a text with at least two labelled
    lines ("(a) …", "(b) …"), each labelled line starts a paragraph of its own, so that its label is read."""
    lines = [ln.strip() for raw in raws for ln in raw.split("\n")]
    if sum(1 for ln in lines if _LABELLED_LINE.match(ln)) < 2:
        return raws
    out: list[str] = []
    for raw in raws:
        part: list[str] = []
        for line in raw.split("\n"):
            if part and _LABELLED_LINE.match(line.strip()):
                out.append("\n".join(part))
                part = []
            part.append(line)
        out.append("\n".join(part))
    return out


def plain_text_blocks(text: str, page: int | None = None, heading_level: int = 2,
                      known_headings: set[str] | None = None) -> list[Block]:
    """Parse plain text: blank lines separate blocks; a heading-like first line starts a new section."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    known = {h.casefold() for h in (known_headings or set())}
    blocks: list[Block] = []
    for raw in _labelled_paragraphs(re.split(r"\n\s*\n", text)):
        raw_lines = [x for x in raw.split("\n") if x.strip()]
        lines = [normalize_space(x) for x in raw_lines]
        while lines:
            if len(lines) >= 2 and all("|" in ln or "\t" in ln for ln in raw_lines):
                blocks.append(Block("table", "\n".join(lines), page=page))
            elif len(lines) >= 2 and all(_LIST_ITEM.match(ln) for ln in lines):
                blocks.append(Block("list", "\n".join(lines), page=page))  # "1. Bring Your Passport" items too
            elif lines[0].casefold() in known or (
                    is_heading_line(lines[0]) and (len(lines) > 1 or not lines[0].endswith(":"))):
                blocks.append(Block("heading", lines[0].rstrip(":"), level=heading_level, page=page))
                lines, raw_lines = lines[1:], raw_lines[1:]
                continue  # what follows a heading line may be a list, a table or a paragraph
            elif len(lines) >= 2 and all(_LIST_ITEM.match(ln) for ln in lines[1:]):
                blocks.append(Block("paragraph", lines[0], page=page))  # lead-in, then its list
                blocks.append(Block("list", "\n".join(lines[1:]), page=page))
            else:
                blocks.append(Block("paragraph", join_lines(lines), page=page))
            break
    return blocks
