"""Count paragraph sub-chunks of a regulation whose heading path is not their true location.

    .venv/bin/python benchmarks/legal_paths.py [../shared/corpus/snap/7-cfr-273.md] [--show 20]

The reference is computed apart from the chunker: the Markdown blocks of each section (table rows that start
with a label split off as paragraphs), their leading labels resolved by sequence (rag.legal_labels), and every
unlabelled block placed in the labelled paragraph before it. Each sub-chunk made by rag.chunking is matched to
its block in document order. A path is "exact" when the labels of its heading path equal the reference
(the sub-chunk's own paragraph, down to its own label); "prefix" when they are only a leading part of it (a
chunker that names the first levels only, as this one did before 2026-11, is right by that measure).
To score an older chunker: --chunker <its chunking.py> (e.g. `git show <rev>:rag/chunking.py > /tmp/old.py`).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from rag.chunking import Chunker
from rag.loaders import load_markdown
from rag.models import Block

_HERE = Path(__file__).resolve().parents[1]
_DEFAULT = _HERE.parent / "shared" / "corpus" / "snap" / "7-cfr-273.md"


def _module(name: str, path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _reference(blocks: list[Block], ll) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=_DEFAULT)
    parser.add_argument("--show", type=int, default=10, help="print this many wrong paths")
    parser.add_argument("--chunker", type=Path, help="a chunking.py to score instead of rag.chunking")
    args = parser.parse_args(argv)
    ll = _module("legal_labels_ref", _HERE / "rag" / "legal_labels.py")
    chunker = _module("chunking_scored", args.chunker).Chunker() if args.chunker else Chunker()
    doc = load_markdown(args.path, "reg")
    reference = _reference(doc.blocks, ll)
    subs = [s for c in chunker.chunk(doc) for s in c.subchunks]
    i = 0
    total = exact_wrong = prefix_wrong = 0
    shown = 0
    for sub in subs:
        first = sub.text.split("\n", 1)[0]
        while i < len(reference) and reference[i][1] != first:
            i += 1
        if i == len(reference):
            print(f"unmatched sub-chunk: {first[:80]!r}", file=sys.stderr)
            return 2
        want = reference[i][2]
        got = ll.label_path(sub.heading_path)
        total += 1
        exact_ok = got == want
        prefix_ok = want.startswith(got) and (got == want or want[len(got)] == "(")
        exact_wrong += not exact_ok
        prefix_wrong += not prefix_ok
        if not exact_ok and shown < args.show:
            shown += 1
            print(f"  {reference[i][0][:40]:40} want {want or '-':18} got {got or '-':18} {first[:50]!r}")
        i += 1
    print(f"{args.path.name}: {total} sub-chunks; heading path not the true location: {exact_wrong} "
          f"(exact); not even a leading part of it: {prefix_wrong}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
