"""`navibot reindex` throughput: every chunk of a store (and its sentences) embedded again into a new store.

    python benchmarks/bench_reindex.py --store PATH [--write]      # e.g. bench_retrieval.py's 10k-chunk store
    python benchmarks/bench_reindex.py --build 10000 [--write]     # build that store first (minutes)

Two embedders: the bundled WordLlama (offline, the machinery plus a fast local model), and the OpenAI-compatible
provider against a fake server (tests/fakes/fake_openai.py) that replies after a fixed 30 ms per call of up to 256
texts, through the real openai client. The source store is copied first: reindex only reads it, but opening a
store of an older layout would rebuild it.
"""

from __future__ import annotations

import argparse
import logging
import platform
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pydantic import SecretStr

from benchmarks.results_file import machine_load, write_section
from bot.config.settings import Settings
from bot.wiring.choose_models import make_embedder
from rag.ingest.reindex import ReindexSummary, reindex
from rag.search.embedding import Embedder
from rag.search.sqlite_store import SQLiteKnowledgeStore
from tests.fakes.fake_openai import FakeOpenAI

CALL_MS = 30.0


def run(source_file: Path, embedder: Embedder, folder: Path) -> ReindexSummary:
    source = SQLiteKnowledgeStore(source_file)
    target = SQLiteKnowledgeStore(folder / f"reindexed-{embedder.name.replace('/', '_')}.sqlite3")
    try:
        return reindex(source, target, embedder)
    finally:
        source.close()
        target.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--store", type=Path, help="the store to reindex (copied first)")
    source.add_argument("--build", type=int, metavar="CHUNKS", help="build a store of this many chunks first")
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.WARNING)  # not a line per HTTP request of the fake server
    load = machine_load()
    with tempfile.TemporaryDirectory(prefix="navibot-bench-reindex-") as tmp:
        folder = Path(tmp)
        if args.build:
            from benchmarks.bench_retrieval import load_base_document, store_for

            built, _, _ = store_for(load_base_document(), folder, args.build, reuse=False)
            copy = built
        else:
            copy = Path(shutil.copy(args.store, folder / "source.sqlite3"))
        results: list[tuple[str, ReindexSummary]] = []
        wordllama = make_embedder(Settings(_env_file=None))  # type: ignore[call-arg]
        results.append(("bundled WordLlama (offline)", run(copy, wordllama, folder)))
        with FakeOpenAI("openai") as server:
            server.delays = {"/embeddings": CALL_MS / 1000}
            settings = Settings(_env_file=None, embedder="openai", openai_api_keys=[SecretStr("bench")],  # type: ignore[call-arg]
                                openai_base_urls=[f"{server.url}/v1"], openai_embed_dim=256)
            remote = make_embedder(settings)
            summary = run(copy, remote, folder)
            calls = len(server.calls)
        results.append((f"OpenAI-compatible fake server, {CALL_MS:.0f} ms per call, 256 dims ({calls} calls)",
                        summary))
    rows = ["| embedder | documents | chunks | sentences | seconds | chunks/s | texts/s |",
            "|---|---|---|---|---|---|---|"]
    for name, s in results:
        texts = s.chunks + s.sentences
        rows.append(f"| {name} | {s.reindexed} | {s.chunks:,} | {s.sentences:,} | {s.seconds:.1f} | "
                    f"{s.chunks / s.seconds:.0f} | {texts / s.seconds:.0f} |")
    body = f"""## `navibot reindex` throughput

Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, {load};
`python benchmarks/bench_reindex.py {'--build ' + str(args.build) if args.build else '--store STORE'}` on the
{results[0][1].chunks:,}-chunk store of bench_retrieval.py (7 CFR 273 and synthetic manuals). Every chunk and every
sentence is embedded again and written to a new SQLite store, one document per transaction (what makes a killed
run resumable). The fake server's delay stands for the model's own time; a real server adds its own.

{chr(10).join(rows)}
"""
    print(body)
    if args.write:
        write_section("bench_reindex", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
