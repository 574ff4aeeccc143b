"""The architecture decision records in docs/decisions/: numbered without gaps, each listed in the index, each
with the four parts a reader looks for, and short enough to read in one sitting."""

from __future__ import annotations

import re
from pathlib import Path

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions"
PARTS = ("Context", "Decision", "Consequences", "Alternatives considered")
MAX_WORDS = 600  # about one printed page


def records() -> list[Path]:
    return sorted(p for p in DECISIONS.glob("*.md") if p.name != "index.md")


def test_records_are_numbered_in_sequence_and_all_listed_in_the_index() -> None:
    numbers = [int(p.name[:4]) for p in records()]
    assert all(re.fullmatch(r"\d{4}-[a-z0-9-]+\.md", p.name) for p in records())
    assert numbers == list(range(1, len(numbers) + 1)), "numbered 0001, 0002, … without gaps or repeats"
    listed = re.findall(r"\]\((\d{4}-[a-z0-9-]+\.md)\)", (DECISIONS / "index.md").read_text(encoding="utf-8"))
    assert listed == [p.name for p in records()]


def test_each_record_has_its_four_parts_and_fits_on_a_page() -> None:
    for record in records():
        text = record.read_text(encoding="utf-8")
        number = int(record.name[:4])
        assert text.startswith(f"# {number}. "), record.name
        assert re.findall(r"(?m)^## (.+)$", text) == list(PARTS), record.name
        assert len(text.split()) <= MAX_WORDS, f"{record.name}: {len(text.split())} words"
