"""Each benchmark owns one section of benchmarks/RESULTS.md, between `<!-- name:start -->` and `<!-- name:end -->`,
and rewrites only that section, so benchmarks can be rerun one at a time."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = "# Benchmark results\n\nMeasured on this project's 2-core CI-class machine; medians unless stated.\n"


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    section = f"{start}\n{body.rstrip()}\n{end}"
    i, j = text.find(start), text.find(end)
    if i != -1 and j > i:
        text = text[:i] + section + text[j + len(end):]
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # never a half-written results file
