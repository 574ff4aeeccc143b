"""Each benchmark owns one section of benchmarks/RESULTS.md, between `<!-- name:start -->` and `<!-- name:end -->`,
and rewrites only that section, so benchmarks can be rerun one at a time."""

from __future__ import annotations

import os
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmark results\n\nMeasured on this project's 2-core CI-class machine; medians unless stated.\n"


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    section = f"{start}\n{body.rstrip()}\n{end}"
    i, j = text.find(start), text.find(end)
    text = text[:i] + section + text[j + len(end):] if i != -1 and j > i else text.rstrip() + "\n\n" + section + "\n"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # never a half-written results file


def machine_load() -> str:
    """The 1-minute load average when a benchmark starts: other work on this shared machine slows every figure."""
    try:
        return f"2-core machine shared with other work, load average {os.getloadavg()[0]:.2f} at the start"
    except OSError:
        return "load average unknown"


def publish(name: str, section: str, quick: bool, write: bool) -> None:
    """Print a benchmark's section, and write it into RESULTS.md unless it was a --quick run without --write."""
    print(section)
    if not quick or write:
        write_section(name, section)
        print("(written to benchmarks/RESULTS.md)", file=sys.stderr)
    else:
        print("(quick run: RESULTS.md not updated; pass --write to update it)", file=sys.stderr)
