"""A table's rows read as sentences, so that the extractive answerer can quote a rule written as a table.

7 CFR 273.18 sets how a claim is collected in tables whose header starts a sentence and whose rows finish it
("As a State agency, you must . . . | Unless . . ." over "(iii) For an IHE or AE claim, limit the amount reduced to
the greater of $10 per month or 10 percent of the household's monthly allotment | the household agrees to a higher
amount."); 273.8(h)(4) gives the penalty for giving resources away as a chart. Read without their tables, 50 of
the 1,776 answerable questions of our regulation sets had a gold paragraph no answer could quote. A row is read
with its header, each cell after its header cell's words, the ". . ." dropped: the source's own words in its own
order, nothing reworded. The quote shown with the answer is the row as stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from rag.documents import SubChunk

_SEPARATOR = re.compile(r"^\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*$")
_TRAILING_DOTS = re.compile(r"(?:\s*\.\s*\.\s*\.|\s*…)\s*$")


def cells(line: str) -> list[str]:
    """The cells of a Markdown table line ("| a | b |" -> ["a", "b"])."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _is_header(row: list[str], next_line: str | None) -> bool:
    """A header: the line above the |---| separator, or a row whose every filled cell trails off (". . .")."""
    if next_line is not None and _SEPARATOR.match(next_line):
        return True
    filled = [cell for cell in row if cell]
    return bool(filled) and all(_TRAILING_DOTS.search(cell) for cell in filled)


def read_row(row: Sequence[str], header: Sequence[str] | None) -> str:
    """One row as a sentence: each cell after its header cell's words when the header has as many cells."""
    if header is not None and len(header) == len(row):
        parts = [f"{_TRAILING_DOTS.sub('', head)} {cell}".strip() for head, cell in zip(header, row, strict=True)
                 if cell]
    else:
        parts = [cell for cell in row if cell]
    return " ".join(parts)


def table_pieces(subs: Sequence[SubChunk]) -> Iterator[tuple[SubChunk, str]]:
    """Each table row of the section's paragraphs as (its sub-chunk, the row read as a sentence), in order. A
    header holds for the rows after it, also in the sub-chunks that follow (the chunker stores a labelled row,
    "(g)(1)(iii)", as a paragraph of its own), until a paragraph that is not a table. Rows before any header are
    left out: "| 1 | $1,632 |" alone does not say what its figures are."""
    header: list[str] | None = None
    for sub in subs:
        if sub.kind != "table":
            header = None
            continue
        lines = [line.strip() for line in sub.text.splitlines() if line.strip().startswith("|")]
        for i, line in enumerate(lines):
            if _SEPARATOR.match(line):
                continue
            row = cells(line)
            if _is_header(row, lines[i + 1] if i + 1 < len(lines) else None):
                header = row
                continue
            text = read_row(row, header) if header is not None else ""  # cells without a header say nothing
            if text:
                yield sub, text
