"""Retrieval evaluation on labelled questions (the doc2dial format): Recall@k, MRR@10, answer-span recall@3."""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.models import SearchHit

_WS = re.compile(r"\s+")


def recall_at(ranked: list[str], gold: str, k: int) -> float:
    return 1.0 if gold in ranked[:k] else 0.0


def reciprocal_rank(ranked: list[str], gold: str, k: int = 10) -> float:
    for i, doc_id in enumerate(ranked[:k], start=1):
        if doc_id == gold:
            return 1.0 / i
    return 0.0


def squash(text: str) -> str:
    """Whitespace-insensitive form for span matching (chunk text joins wrapped lines with spaces)."""
    return _WS.sub(" ", text).strip().lower()


def contains_span(texts: list[str], spans: list[str]) -> float:
    """1.0 if any text contains any gold answer span (spans are matched whitespace-insensitively)."""
    wanted = [squash(s) for s in spans if squash(s)]
    hay = [squash(t) for t in texts]
    return 1.0 if any(w in h for w in wanted for h in hay) else 0.0


def ranked_doc_ids(hits: list[SearchHit]) -> list[str]:
    """Documents in the order their best chunk appears."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(hit.chunk.doc_id, None)
    return list(seen)


@dataclass(slots=True)
class GroupScores:
    n: int = 0
    recall1: float = 0.0
    recall3: float = 0.0
    recall5: float = 0.0
    mrr10: float = 0.0
    span_recall3: float = 0.0

    def add(self, ranked: list[str], gold: str, top3_texts: list[str], spans: list[str]) -> None:
        self.n += 1
        self.recall1 += recall_at(ranked, gold, 1)
        self.recall3 += recall_at(ranked, gold, 3)
        self.recall5 += recall_at(ranked, gold, 5)
        self.mrr10 += reciprocal_rank(ranked, gold, 10)
        self.span_recall3 += contains_span(top3_texts, spans)

    def means(self) -> dict[str, float]:
        d = max(self.n, 1)
        return {"n": self.n, "recall@1": self.recall1 / d, "recall@3": self.recall3 / d,
                "recall@5": self.recall5 / d, "mrr@10": self.mrr10 / d, "span_recall@3": self.span_recall3 / d}


@dataclass(slots=True)
class EvalReport:
    first: GroupScores = field(default_factory=GroupScores)
    later: GroupScores = field(default_factory=GroupScores)
    ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "first_turns": self.first.means(),
            "later_turns": self.later.means(),
            "ms_per_question": {"median": statistics.median(self.ms) if self.ms else 0.0,
                                "mean": statistics.fmean(self.ms) if self.ms else 0.0},
        }

    def table(self) -> str:
        rows = [("first turns", self.first.means()), ("later turns", self.later.means())]
        lines = ["| turns | n | R@1 | R@3 | R@5 | MRR@10 | span R@3 |", "|---|---|---|---|---|---|---|"]
        for name, m in rows:
            lines.append(f"| {name} | {m['n']} | {m['recall@1']:.3f} | {m['recall@3']:.3f} | {m['recall@5']:.3f} "
                         f"| {m['mrr@10']:.3f} | {m['span_recall@3']:.3f} |")
        d = self.as_dict()["ms_per_question"]
        lines.append(f"\nms per question: median {d['median']:.1f}, mean {d['mean']:.1f}")
        return "\n".join(lines)


def read_questions(path: Path) -> list[dict[str, Any]]:
    questions: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}, line {number}: invalid JSON ({exc.msg})") from exc
        if not isinstance(record, dict) or not record.get("qid") or not isinstance(record.get("question"), str):
            raise ValueError(f"{path}, line {number}: needs at least 'qid' and 'question'")
        questions.append(record)
    return questions


Search = Callable[[str, list[dict[str, str]]], list[SearchHit]]


def evaluate(questions: list[dict[str, Any]], search: Search, out_path: Path) -> EvalReport:
    """Run every question through `search(question, history)` and write one JSON line per question."""
    report = EvalReport()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as out:
        for q in questions:
            history = q.get("history") or []
            started = time.perf_counter()
            hits = search(q["question"], history)
            report.ms.append((time.perf_counter() - started) * 1000)
            ranked = ranked_doc_ids(hits)
            record = {
                "qid": q["qid"],
                "ranked_doc_ids": ranked,
                "chunks": [{"chunk_id": h.chunk.chunk_id, "doc_id": h.chunk.doc_id, "text": h.chunk.text}
                           for h in hits[:5]],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            if q.get("gold_doc_id"):
                group = report.later if history else report.first
                group.add(ranked, q["gold_doc_id"], [h.chunk.text for h in hits[:3]], q.get("gold_answers") or [])
    return report
