"""Typo stress test: navigator questions with typos injected at run time, searched with and without the spelling
correction (rag/search/spelling.py). Prints a table; nothing is written to the repository.

    python benchmarks/bench_typos.py                       # ../shared/eval/cfr273-dev, first turns, seed 16
    python benchmarks/bench_typos.py --seed 7 --questions Q.jsonl --corpus C.md

The answerable first-turn questions of the set are read at run time (none is copied here). In each, one or two
content words (5+ letters, not function words; two when the question has three or more such words, chance 1/2) get
one typo each, with a fixed seed: two neighbouring letters swapped, a letter dropped, a letter doubled, or a letter
replaced by a neighbour on a QWERTY keyboard. The first letter is never touched: typists rarely miss it, and the
correction searches only words starting like the typed one (a typo there is counted as a miss all the same when
the typo makes another known word).
Measured as `navibot eval` scores a section-gold set: section R@3 (a top-3 chunk in the gold section) and
paragraph hit@3 (a top-3 paragraph of rag/search/paragraphs.py at a gold path), on the clean questions, the typed
questions searched as typed, and the typed questions corrected; plus how many typos were corrected back to the
word that was there (or to one of the same stem), and the correction's median time per question.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # measure this checkout, whatever the venv's editable install points at

from bot.config.settings import Settings
from bot.wiring.runtime import build_core, build_engine
from rag.evaluation.evaluate import SectionGold, read_questions
from rag.search.bm25 import stem
from rag.search.paragraphs import rank_paragraphs
from rag.search.terms import QUESTION_FILLER, STOPWORDS

QUESTIONS = REPO_ROOT.parent / "shared" / "eval" / "cfr273-dev" / "questions.jsonl"
CORPUS = REPO_ROOT.parent / "shared" / "corpus" / "snap" / "7-cfr-273.md"
SEED = 16

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
NEIGHBOURS = {c: "".join(r[j] for r in _ROWS[max(i - 1, 0):i + 2] for j in range(max(k - 1, 0), k + 2)
                         if j < len(r) and r[j] != c)
              for i, row in enumerate(_ROWS) for k, c in enumerate(row)}
_CONTENT = re.compile(r"\b[a-z]{5,}\b")


def typo(word: str, rng: random.Random) -> str:
    """One realistic typo, never on the first letter: a swap, a drop, a double or a neighbouring key."""
    at = rng.randrange(1, len(word))
    kind = rng.choice(("swap", "drop", "double", "key"))
    if kind == "swap" and at < len(word) - 1 and word[at] != word[at + 1]:
        return word[:at] + word[at + 1] + word[at] + word[at + 2:]
    if kind == "drop":
        return word[:at] + word[at + 1:]
    if kind == "double":
        return word[:at] + word[at] + word[at:]
    return word[:at] + rng.choice(NEIGHBOURS.get(word[at], word[at])) + word[at + 1:]


def with_typos(question: str, rng: random.Random) -> tuple[str, list[tuple[str, str]]]:
    """The question with typos in one or two content words, and each (word, as typed)."""
    words = list(dict.fromkeys(w for w in _CONTENT.findall(question) if w not in STOPWORDS | QUESTION_FILLER))
    if not words:
        return question, []
    picked = rng.sample(words, 2 if len(words) >= 3 and rng.random() < 0.5 else 1)
    changes = []
    for word in picked:
        typed = typo(word, rng)
        if typed != word:
            question = re.sub(rf"\b{word}\b", typed, question, count=1)
            changes.append((word, typed))
    return question, changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    questions = [q for q in read_questions(args.questions) if not q.get("history") and q.get("answerable", True)
                 and q.get("gold_section")]
    rng = random.Random(args.seed)
    typed = [with_typos(q["question"], rng) for q in questions]
    with tempfile.TemporaryDirectory(prefix="navibot-typos-") as tmp:
        settings = Settings(data_dir=Path(tmp))
        core = build_core(settings, Path(tmp) / "store.sqlite3")
        try:
            core.ingestor.ingest_paths([args.corpus])
            engine = build_engine(core)
            speller = core.retriever.speller
            if speller is None:
                print("this store keeps no vocabulary: nothing to correct", file=sys.stderr)
                return 1

            def scores(texts: list[str], correct: bool) -> tuple[float, float]:
                core.retriever.speller = speller if correct else None
                section = paragraph = 0
                for q, text in zip(questions, texts, strict=True):
                    gold = SectionGold.of(q)
                    rewrite, hits = engine.rewrite_and_retrieve(text, [], k=max(10, settings.top_k))
                    glossary = core.retriever.glossary
                    expansion = glossary.expand(rewrite.standalone).text if glossary is not None else ""
                    paragraphs = [p.sub for p in rank_paragraphs(rewrite.standalone, hits, core.embedder,
                                                                 expansion=expansion)]
                    rank = gold.section_rank(hits)
                    section += rank is not None and rank <= 3
                    paragraph += gold.paragraph_hit(paragraphs)
                return section / len(questions), paragraph / len(questions)

            rows: list[tuple[str, tuple[float, float]]] = [
                ("clean questions, corrected", scores([q["question"] for q in questions], True)),
                ("with typos, as typed", scores([t for t, _ in typed], False)),
                ("with typos, corrected", scores([t for t, _ in typed], True)),
            ]
            injected = [pair for _, changes in typed for pair in changes]
            restored = changed = 0
            ms: list[float] = []
            for text, changes in typed:
                started = time.perf_counter()
                correction = speller.correct(text)
                ms.append((time.perf_counter() - started) * 1000)
                fixed = dict(correction.changes)
                for word, wrong in changes:
                    changed += wrong in fixed
                    restored += wrong in fixed and stem(fixed[wrong]) == stem(word)
            clean_changes = sum(len(speller.correct(q["question"]).changes) for q in questions)
        finally:
            core.close()
    report: dict[str, Any] = {"questions": len(questions), "typos": len(injected), "seed": args.seed}
    print(f"typo stress set: {report['questions']} first-turn questions of {args.questions.name}, "
          f"{report['typos']} typos (seed {args.seed})")
    print("| questions | section R@3 | paragraph hit@3 |\n|---|---|---|")
    for name, (section, paragraph) in rows:
        print(f"| {name} | {section:.3f} | {paragraph:.3f} |")
    print(f"typos corrected: {changed} of {len(injected)}, {restored} back to the intended word's stem; "
          f"words changed in the clean questions: {clean_changes}; "
          f"correction per question: median {statistics.median(ms):.3f} ms, max {max(ms):.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
