"""Evaluation on labelled questions (the doc2dial format): retrieval (Recall@k, MRR@10, answer-span recall@3)
and answers (citations verbatim, citations holding a gold span, no-answer rate)."""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.citations import Citation
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
class AnswerScores:
    questions: int = 0
    answered: int = 0
    citations: int = 0
    verbatim: int = 0
    answered_with_span: int = 0

    def add(self, no_answer: bool, citations: list[Citation], spans: list[str],
            is_verbatim: Callable[[Citation], bool]) -> None:
        self.questions += 1
        if no_answer:
            return
        self.answered += 1
        self.citations += len(citations)
        self.verbatim += sum(1 for c in citations if is_verbatim(c))
        if spans:
            self.answered_with_span += int(contains_span([c.quote for c in citations], spans))

    def means(self) -> dict[str, float]:
        return {"questions": self.questions, "answered": self.answered, "citations": self.citations,
                "verbatim_share": self.verbatim / self.citations if self.citations else 1.0,
                "span_in_citations": self.answered_with_span / self.answered if self.answered else 0.0,
                "no_answer_rate": 1 - self.answered / self.questions if self.questions else 0.0}


@dataclass(slots=True)
class EvalReport:
    first: GroupScores = field(default_factory=GroupScores)
    later: GroupScores = field(default_factory=GroupScores)
    answers: AnswerScores = field(default_factory=AnswerScores)
    ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "first_turns": self.first.means(),
            "later_turns": self.later.means(),
            "answers": self.answers.means(),
            "ms_per_question": {"median": statistics.median(self.ms) if self.ms else 0.0,
                                "mean": statistics.fmean(self.ms) if self.ms else 0.0},
        }

    def table(self) -> str:
        rows = [("first turns", self.first.means()), ("later turns", self.later.means())]
        lines = ["| turns | n | R@1 | R@3 | R@5 | MRR@10 | span R@3 |", "|---|---|---|---|---|---|---|"]
        for name, m in rows:
            lines.append(f"| {name} | {m['n']} | {m['recall@1']:.3f} | {m['recall@3']:.3f} | {m['recall@5']:.3f} "
                         f"| {m['mrr@10']:.3f} | {m['span_recall@3']:.3f} |")
        a = self.answers.means()
        lines.append(f"\nanswers: {a['answered']} of {a['questions']} answered (no-answer rate "
                     f"{a['no_answer_rate']:.3f}); {a['citations']} citations, verbatim {a['verbatim_share']:.1%}; "
                     f"answered questions whose citations hold a gold answer span: {a['span_in_citations']:.3f}")
        d = self.as_dict()["ms_per_question"]
        lines.append(f"ms per question: median {d['median']:.1f}, mean {d['mean']:.1f}")
        return "\n".join(lines)


@dataclass(slots=True)
class EvalTurn:
    """What the system under test did with one question: its ranked sections and its answer."""

    hits: list[SearchHit]
    standalone: str
    answer: str
    no_answer: bool
    citations: list[Citation]


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


Run = Callable[[str, list[dict[str, str]]], EvalTurn]


def evaluate(questions: list[dict[str, Any]], run: Run, out_path: Path,
             is_verbatim: Callable[[Citation], bool]) -> EvalReport:
    """Run every question through `run(question, history)` and write one JSON line per question.

    `is_verbatim` checks a citation's quote against the source document's own text."""
    report = EvalReport()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as out:
        for q in questions:
            history = q.get("history") or []
            started = time.perf_counter()
            turn = run(q["question"], history)
            report.ms.append((time.perf_counter() - started) * 1000)
            ranked = ranked_doc_ids(turn.hits)
            record = {
                "qid": q["qid"],
                "standalone": turn.standalone,
                "ranked_doc_ids": ranked,
                "chunks": [{"chunk_id": h.chunk.chunk_id, "doc_id": h.chunk.doc_id, "text": h.chunk.text}
                           for h in turn.hits[:5]],
                "answer": turn.answer,
                "no_answer": turn.no_answer,
                "citations": [{"doc_id": c.doc_id, "sub_id": c.sub_id, "quote": c.quote} for c in turn.citations],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            spans = q.get("gold_answers") or []
            report.answers.add(turn.no_answer, turn.citations, spans, is_verbatim)
            if q.get("gold_doc_id"):
                group = report.later if history else report.first
                group.add(ranked, q["gold_doc_id"], [h.chunk.text for h in turn.hits[:3]], spans)
    return report
