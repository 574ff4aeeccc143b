"""Count paragraph sub-chunks of a regulation whose heading path is not their true location.

    .venv/bin/python benchmarks/legal_paths.py [../shared/corpus/snap/7-cfr-273.md] [--show 20] [--before REV]

The reference is computed apart from the chunker: the Markdown blocks of each section (table rows that start
with a label split off as paragraphs), their leading labels resolved by sequence (rag.ingest.legal_labels), and every
unlabelled block placed in the labelled paragraph before it. Each sub-chunk made by rag.ingest.chunking is matched to
its block in document order. A path is "exact" when the labels of its heading path equal the reference
(the sub-chunk's own paragraph, down to its own label); "prefix" when they are only a leading part of it (a
chunker that names the first levels only, as this one did before 2026-11, is right by that measure).
To score an older chunker: --chunker <its chunking.py>, or --before <git revision>; --write puts the figures
in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # measure this checkout

import rag.ingest.legal_labels as ll
from benchmarks.results_file import publish
from rag.documents import Block
from rag.ingest.chunking import Chunker
from rag.ingest.loaders import load_markdown

_DEFAULT = REPO.parent / "shared" / "corpus" / "snap" / "7-cfr-273.md"


def _module(name: str, path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _reference(blocks: list[Block]) -> list[tuple[str, str, str]]:
    """(section heading, first line of the block, cited path) for every content block, in document order."""
    out: list[tuple[str, str, str]] = []
    section: list[str] = []
    heading = ""

    def flush() -> None:
        placements = ll.resolve_labels([ll.leading_labels(t) for t in section])
        current = ""
        for text, place in zip(section, placements, strict=True):
            if place.path and place.placed:  # a paragraph with run-in labels is in the deepest one
                current = ll.format_path(place.run_in[-1] if place.run_in else place.path)
            out.append((heading, text.split("\n", 1)[0], current))
        section.clear()

    for block in blocks:
        if block.kind == "heading":
            flush()
            heading = block.text
            continue
        rows = block.text.split("\n") if block.kind == "table" else []
        if any(ll.leading_labels(r) for r in rows):
            group: list[str] = []
            for row in rows:
                if ll.leading_labels(row) and group:
                    section.append("\n".join(group))
                    group = []
                group.append(row)
            section.append("\n".join(group))
        else:
            section.append(block.text)
    flush()
    return out


@dataclass(slots=True)
class Count:
    total: int = 0
    exact_wrong: int = 0  # heading path is not the sub-chunk's location
    prefix_wrong: int = 0  # ... and not even a leading part of it
    examples: list[str] = field(default_factory=list)


def count(path: Path, chunker: Chunker, show: int = 10) -> Count:
    doc = load_markdown(path, "reg")
    reference = _reference(doc.blocks)
    result = Count()
    i = 0
    for sub in (s for c in chunker.chunk(doc) for s in c.subchunks):
        first = sub.text.split("\n", 1)[0]
        while i < len(reference) and reference[i][1] != first:
            i += 1
        if i == len(reference):
            raise SystemExit(f"unmatched sub-chunk: {first[:80]!r}")
        want, got = reference[i][2], ll.label_path(sub.heading_path)
        result.total += 1
        result.exact_wrong += got != want
        result.prefix_wrong += not (want.startswith(got) and (got == want or want[len(got)] == "("))
        if got != want and len(result.examples) < show:
            result.examples.append(f"{reference[i][0][:40]:40} want {want or '-':18} got {got or '-':18} "
                                   f"{first[:50]!r}")
        i += 1
    return result


def _line(name: str, c: Count) -> str:
    return (f"| {name} | {c.total} | {c.exact_wrong} ({c.exact_wrong / c.total:.1%}) | "
            f"{c.prefix_wrong} ({c.prefix_wrong / c.total:.1%}) |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=_DEFAULT)
    parser.add_argument("--show", type=int, default=10, help="print this many wrong paths")
    parser.add_argument("--chunker", type=Path, help="a chunking.py to score instead of rag.ingest.chunking")
    parser.add_argument("--before", metavar="REV", help="also score rag/ingest/chunking.py as of this git revision")
    parser.add_argument("--write", action="store_true", help="write the figures into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    chunker = _module("chunking_scored", args.chunker).Chunker() if args.chunker else Chunker()
    now = count(args.path, chunker, args.show)
    for example in now.examples:
        print(" ", example)
    print(f"{args.path.name}: {now.total} sub-chunks; heading path not the true location: {now.exact_wrong} "
          f"(exact); not even a leading part of it: {now.prefix_wrong}")
    if not args.write and not args.before:
        return 0
    rows = [_line(f"`{args.chunker}`" if args.chunker else "this tree", now)]
    if args.before:
        old = subprocess.run(["git", "show", f"{args.before}:rag/ingest/chunking.py"], cwd=REPO, check=True,
                             capture_output=True, text=True).stdout
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "chunking.py").write_text(old, encoding="utf-8")
            before = count(args.path, _module("chunking_before", Path(tmp) / "chunking.py").Chunker(), 0)
        rows.append(_line(f"before (`{args.before}`)", before))
    command = f"python benchmarks/legal_paths.py{' --before ' + args.before if args.before else ''} --write"
    about = textwrap.fill(
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with `{command}` on `{args.path.name}`: "
        "each paragraph sub-chunk's heading path against its location in the regulation (the labels resolved by "
        "sequence from the blocks, apart from the chunker). \"Not the location\": the labels of the heading path "
        "differ from the paragraph's own path; \"not a leading part\": they are not even its first levels (what a "
        "chunker naming only the first two levels gets right).", width=115)
    header = ["| chunker | sub-chunks | not the location | not a leading part |", "|---|---|---|---|"]
    section = "\n".join(["## Regulation paragraph paths (`legal_paths.py`)", "", about, "", *header, *rows])
    if args.write:
        publish("legal_paths", section, quick=False, write=True)
    else:
        print(section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
