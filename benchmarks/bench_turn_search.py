"""Search as a turn makes it, on a store of ~10,000 chunks: the answer's five hits, the ten the no-answer gate reads
(rag/engine.py GATE_SECTIONS), and a follow-up's search, whose own words rank the paragraphs a second time
(rag/search/retrieve.py FOLLOW_UP_WEIGHT).

    python benchmarks/bench_turn_search.py [--store-dir DIR] [--chunks N] [--write]

The store is bench_retrieval.py's (the regulation plus synthetic manuals), built once in DIR and reused. Each kind
of search is timed over the same questions, in rounds that alternate the kinds, so that the machine's other work
weighs on all of them alike; the figures are medians and 95th percentiles in ms.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_retrieval import QUERIES, load_base_document, store_for
from benchmarks.results_file import machine_load, publish
from bot.config.settings import Settings
from bot.wiring.runtime import build_core
from rag.engine import GATE_SECTIONS

FOLLOW_UP = "what if she is 60 or older"  # an elliptical follow-up, searched after each question as its thread
ROUNDS = 3


def _times(search: Callable[[str], object], questions: list[str]) -> list[float]:
    spent = []
    for question in questions:
        started = time.perf_counter()
        search(question)
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def _row(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    return f"| {name} | {statistics.median(ms):.1f} | {ms[int(0.95 * (len(ms) - 1))]:.1f} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store-dir", type=Path, help="keep the built store here and reuse it in later runs")
    parser.add_argument("--chunks", type=int, default=10_000, help="store size in chunks (default 10,000)")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    load = machine_load()
    with tempfile.TemporaryDirectory(prefix="navibot-turn-search-") as tmp:
        folder = args.store_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path, _, _ = store_for(load_base_document(), folder, args.chunks, reuse=args.store_dir is not None)
        core = build_core(Settings(), path)
        retriever = core.retriever
        chunks = core.store.counts()["chunks"]
        retriever.search(QUERIES[0], k=5)  # the vector matrix and the spelling lexicon are loaded here
        kinds: dict[str, Callable[[str], object]] = {
            "first turn, the answer's 5 hits": lambda q: retriever.search(q, k=5),
            f"first turn, the {GATE_SECTIONS} the gate reads (what a turn asks for)":
                lambda q: retriever.search(q, k=GATE_SECTIONS),
            f"follow-up read with its thread, {GATE_SECTIONS} hits (as before session 19)":
                lambda q: retriever.search(f"{q} {FOLLOW_UP}", k=GATE_SECTIONS),
            f"follow-up read with its thread, {GATE_SECTIONS} hits, its own words ranking the paragraphs too":
                lambda q: retriever.search(f"{q} {FOLLOW_UP}", k=GATE_SECTIONS, follow_up=FOLLOW_UP),
        }
        spent: dict[str, list[float]] = {name: [] for name in kinds}
        for _ in range(ROUNDS):
            for name, search in kinds.items():
                spent[name] += _times(search, QUERIES)
        core.store.close()
    section = "\n".join([
        "## Search as a turn makes it (`bench_turn_search.py`)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, {load}, with "
        f"`python benchmarks/bench_turn_search.py`: a store of {chunks:,} chunks (bench_retrieval.py's), "
        f"{len(QUERIES)} questions x {ROUNDS} rounds per kind, the kinds alternating.",
        "",
        "| search | median ms | p95 ms |",
        "|---|---|---|",
        *(_row(name, ms) for name, ms in spent.items()),
    ])
    publish("bench_turn_search", section, quick=not args.write, write=args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
