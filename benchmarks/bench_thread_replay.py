"""doc2dial's later turns with the bot's own answers in the thread (research, reproducible; ~4 min per mode).

    .venv/bin/python benchmarks/bench_thread_replay.py [--mode own|context] [--store <doc2dial already ingested>]

`navibot eval` gives doc2dial's later turns the dataset's history: the user's turns and a human agent's replies,
which paraphrase the right page. In Slack or Teams the thread holds the bot's own answers instead. Here each
dialogue's earlier user turns are answered by the bot, in order, as bot/chat/handler.py keeps them (its answer,
how the question was understood, what it quoted; a no-answer is not kept), and the later turn is searched with
that thread. `own`: as shipped (the bot's own answer is not searched again, rag/answer/rewrite.py); `context`: the
rule before session 14 (the previous answer's words searched with the follow-up). Prints document Recall@3 of the
later turns. Without --store, doc2dial's corpus is ingested first (a few minutes); a --store is copied, not changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # measure this checkout

from bot.config.settings import Settings
from bot.wiring.runtime import build_core, build_engine
from rag.answer.moods import MoodBook
from rag.evaluation.evaluate import ranked_doc_ids

QUESTIONS = REPO.parent / "shared" / "eval" / "doc2dial" / "questions.jsonl"
CORPUS = REPO.parent / "shared" / "eval" / "doc2dial" / "corpus.jsonl"
DEPTH = 30  # chunks retrieved for the later turn: enough to rank 3 documents


def replay(store: Path | None, mode: str, questions: Path) -> tuple[int, float]:
    with tempfile.TemporaryDirectory(prefix="navibot-replay-") as tmp:
        os.environ["NAVIBOT_DATA_DIR"] = tmp
        copy = Path(tmp) / "store.sqlite3"
        if store is not None:
            shutil.copy(store, copy)
        settings = Settings()
        core = build_core(settings, copy)
        try:
            if store is None:
                core.ingestor.ingest_paths([CORPUS])
            engine = build_engine(core)
            mood = MoodBook(settings.moods_file).resolve(None)
            later = [q for q in map(json.loads, questions.read_text(encoding="utf-8").splitlines()) if q.get("history")]
            found = 0
            for q in later:
                users = [m["text"] for m in q["history"] if m.get("role") == "user"]
                thread = engine.replay(users, mood, k=10, quotes_known=mode == "own")
                _, hits = engine.rewrite_and_retrieve(q["question"], thread, k=DEPTH)
                found += q["gold_doc_id"] in ranked_doc_ids(hits)[:3]
            return len(later), found / len(later)
        finally:
            core.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, help="a store with doc2dial's corpus already ingested")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--mode", choices=["own", "context"], default="own")
    args = parser.parse_args()
    n, recall = replay(args.store, args.mode, args.questions)
    print(f"{args.mode}: {n} later turns, document Recall@3 {recall:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
