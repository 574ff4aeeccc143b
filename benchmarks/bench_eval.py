"""Retrieval quality on the shared doc2dial set with the embedded default; writes benchmarks/RESULTS.md.

    python benchmarks/bench_eval.py            # needs ../shared/eval/doc2dial next to the repository
"""

from __future__ import annotations

import platform
import re
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "eval" / "doc2dial"
RESULTS = REPO / "benchmarks" / "RESULTS.md"
START, END = "<!-- bench_eval:start -->", "<!-- bench_eval:end -->"


def replace_section(body: str) -> None:
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else (
        "# Benchmark results\n\nMeasured on this project's 2-core CI-class machine; medians unless stated.\n")
    section = f"{START}\n{body.rstrip()}\n{END}"
    if START in text and END in text:
        text = re.sub(re.escape(START) + r".*?" + re.escape(END), lambda _: section, text, flags=re.DOTALL)
    else:
        text = text.rstrip() + "\n\n" + section + "\n"
    RESULTS.write_text(text, encoding="utf-8")


def main() -> int:
    corpus, questions = DATA / "corpus.jsonl", DATA / "questions.jsonl"
    if not corpus.exists() or not questions.exists():
        print(f"doc2dial files not found under {DATA}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "bot.cli", "eval", "--corpus", str(corpus), "--questions", str(questions),
               "--out", str(Path(tmp) / "results.jsonl")]
        run = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, env={"NAVIBOT_DATA_DIR": tmp,
                                                                                  "PATH": "/usr/bin:/bin"})
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        return run.returncode
    table = run.stdout.split("\nwrote ")[0].strip()
    print(table)
    replace_section(f"""## Retrieval quality on doc2dial (embedded default)

Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, with
`navibot eval --corpus ../shared/eval/doc2dial/corpus.jsonl --questions ../shared/eval/doc2dial/questions.jsonl
--out results.jsonl` (rerun: `python benchmarks/bench_eval.py`). 127 documents; document-level metrics; span
recall@3 = a top-3 chunk contains a gold answer span. Later turns use the question alone (no history rewriting yet).

{table}

Targets for first turns: Recall@3 >= 0.80, MRR@10 >= 0.70. Naive baseline on this set (180-word passages,
BM25 + static word embeddings fused): Recall@3 0.710, MRR@10 0.580.
""")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
