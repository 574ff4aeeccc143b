"""Peak memory of `navibot serve` on a large knowledge store: idle, after 50 questions one by one, and after 50 at once.

    python benchmarks/bench_memory.py                 # full run: 10,000-chunk store (target < 500 MB), plus 100,000
                                                      # (~8 min to build both stores, 3.4 GB of temp disk)
    python benchmarks/bench_memory.py --quick         # smoke check: a 1,000-chunk store, 10 questions (< 60 s)
    python benchmarks/bench_memory.py --store-dir /tmp/navibot-bench-stores   # reuse bench_retrieval's stores

What is measured: VmHWM (the peak resident set size the kernel recorded for the process) and VmRSS, read from
/proc/<pid>/status of the `navibot serve` process, which runs as a subprocess of this virtualenv's `navibot`
(benchmarks/serve_harness.py: Slack HTTP mode against the fake Slack Web API, signed events). The server runs the
embedded default, as a fresh installation does: WordLlama embeddings, SQLite store, the extractive answerer, no
rerank (no model provider is called). The store is built exactly as bench_retrieval.py builds its stores (the
7 CFR 273 regulation plus seeded synthetic state manuals up to the size), by the same code.

Readings: (1) idle: listening, 3 s after start-up, nothing asked yet; (2) after the first question (the vector
matrix is loaded from SQLite on the first search); (3) after 50 questions one after the other; (4) after 50 more
sent at once (16 turn threads working together). The full run repeats the 10,000-chunk readings with
MALLOC_ARENA_MAX=2 (glibc gives each thread that allocates at once its own malloc arena; capping them shows how much
of the peak under concurrency is allocator arenas rather than data).
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.bench_retrieval import (
    QUERIES,
    load_base_document,
    store_bytes,
    store_for,
)
from benchmarks.results_file import machine_load, publish
from benchmarks.serve_harness import ServeHarness, answer_id_of, channel_id, run_all

TARGET_MB = 500.0
TARGET_CHUNKS = 10_000


@dataclass
class Reading:
    what: str
    hwm_mb: float
    rss_mb: float


@dataclass
class MemoryResult:
    target: int
    env: str  # extra environment of the server ("" = none)
    chunks_file_mb: float
    readings: list[Reading]
    answered: int
    asked: int

    @property
    def peak_mb(self) -> float:
        return max(r.hwm_mb for r in self.readings)


def read(h: ServeHarness, what: str) -> Reading:
    kb = h.memory_kb()
    return Reading(what, kb["VmHWM"] / 1024, kb["VmRSS"] / 1024)


def measure(store: Path, target: int, questions: int, command: str, workdir: Path,
            env: dict[str, str] | None = None) -> MemoryResult:
    h = ServeHarness(workdir, store=store, command=command, providers=False, extra_env=env)
    h.start()
    readings: list[Reading] = []
    answered = asked = 0
    try:
        time.sleep(3)
        readings.append(read(h, "idle, 3 s after start-up"))
        channel = channel_id()
        h.mention(channel, QUERIES[0])
        answered += answer_id_of(h.wait_posts(channel, 1)[0]) is not None
        asked += 1
        readings.append(read(h, "after the first question (vector matrix loaded)"))
        for i in range(questions):
            channel = channel_id()
            h.mention(channel, QUERIES[i % len(QUERIES)])
            answered += answer_id_of(h.wait_posts(channel, 1)[0]) is not None
            asked += 1
        readings.append(read(h, f"after {questions} questions one after the other"))
        channels = [channel_id() for _ in range(questions)]
        run_all(h, [h.mention_async(ch, QUERIES[i % len(QUERIES)]) for i, ch in enumerate(channels)])
        for ch in channels:
            answered += answer_id_of(h.wait_posts(ch, 1, timeout=180)[0]) is not None
            asked += 1
        readings.append(read(h, f"after {questions} more questions at once"))
    finally:
        h.stop()
    shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
    return MemoryResult(target, shown, store_bytes(store) / 1e6, readings, answered, asked)


def render(args: argparse.Namespace, results: list[MemoryResult], total_s: float, load: str) -> str:
    command = "python benchmarks/bench_memory.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else "")
    rows: list[str] = []
    failed: list[str] = []
    for res in results:
        name = f"{res.target:,}-chunk store" + (f" with {res.env}" if res.env else "")
        for r in res.readings:
            rows.append(f"| {name} ({res.chunks_file_mb:,.0f} MB file): {r.what} | "
                        f"{r.hwm_mb:,.0f} | {r.rss_mb:,.0f} | — | — |")
        gated = res.target == TARGET_CHUNKS and not res.env
        ok = res.peak_mb < TARGET_MB
        if gated and not ok:
            failed.append(f"peak at {res.target:,} chunks")
        rows.append(f"| **{name}: peak (VmHWM)** | **{res.peak_mb:,.0f}** | — | "
                    f"{f'< {TARGET_MB:.0f}' if gated else '—'} | {('PASS' if ok else 'FAIL') if gated else '—'} |")
        rows.append(f"| {name}: questions answered (with citations) | "
                    f"{res.answered} / {res.asked} | — | — | — |")
    overall = "PASS" if not failed else "FAIL: " + "; ".join(failed)
    lines = [
        "## Memory of `navibot serve` (`bench_memory.py`)",
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; Python {platform.python_version()}; {load}",
        f"- Command: `{command}`" + (" (quick smoke check)" if args.quick else ""),
        (f"- Server: `navibot {args.command} --host 127.0.0.1 --port <free> --store <store>` as a subprocess, Slack "
        "HTTP mode against the fake Slack Web API; embedded default (WordLlama, SQLite, extractive answers, no "
        "rerank). Stores built as in bench_retrieval.py (regulation + seeded synthetic state manuals)."),
        "- VmHWM = peak resident set size of the server process (/proc/<pid>/status), VmRSS = resident now.",
        f"- Whole benchmark took {total_s:.0f} s. Overall: **{overall}**",
        "",
        "| Reading | VmHWM MB | VmRSS MB | Target | Result |",
        "|---|---:|---:|---:|:---:|",
        *rows,
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke check (does not update RESULTS.md)")
    parser.add_argument("--write", action="store_true", help="update RESULTS.md even after a --quick run")
    parser.add_argument("--store-dir", type=Path, help="keep the built stores here and reuse them")
    parser.add_argument("--sizes", type=lambda v: tuple(int(x) for x in v.split(",")),
                        help="store sizes in chunks (default 10000,100000; quick 1000)")
    parser.add_argument("--command", default="serve", choices=["serve", "slack"], help="server command")
    args = parser.parse_args(argv)
    sizes, questions = ((1_000,), 10) if args.quick else ((TARGET_CHUNKS, 100_000), 50)
    sizes = args.sizes or sizes

    started = time.perf_counter()
    load = machine_load()
    base = load_base_document()
    results: list[MemoryResult] = []
    with tempfile.TemporaryDirectory(prefix="navibot-bench-memory-") as tmp:
        folder = args.store_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            store, _, _ = store_for(base, folder, size, reuse=args.store_dir is not None)
            print(f"navibot {args.command} on the {size:,}-chunk store, {questions} + {questions} questions ...",
                  file=sys.stderr, flush=True)
            results.append(measure(store, size, questions, args.command, Path(tmp) / f"serve-{size}"))
            if size == TARGET_CHUNKS and not args.quick:  # how much of the peak is malloc arenas of the turn threads
                print("again with MALLOC_ARENA_MAX=2 ...", file=sys.stderr, flush=True)
                results.append(measure(store, size, questions, args.command, Path(tmp) / f"serve-{size}-arenas",
                                       env={"MALLOC_ARENA_MAX": "2"}))
    section = render(args, results, time.perf_counter() - started, load)
    publish("bench_memory", section, args.quick, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
