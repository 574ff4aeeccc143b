"""Evaluation on labelled questions.

Two formats: doc2dial (gold document and answer spans: document Recall@k, MRR@10, answer-span recall@3,
citations verbatim and holding a gold span, no-answer rate) and section-level gold for a regulation
(`gold_section`, `gold_paths`, `answerable`, as in ../shared/eval/cfr273-dev: section Recall@k and MRR@10,
paragraph hit@3, answers citing a gold paragraph, and, leniently, one the question's `note` names as also
answering ("also: 273.3(a)"), citation precision, refusals on answerable and unanswerable questions). Both split
first turns from follow-ups."""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag.cite.rail import Citation
from rag.documents import SearchHit, SubChunk
from rag.search.legal_location import Labels, inside, location, near, parse_path

_WS = re.compile(r"\s+")
# A place a note names as also answering: "also: 273.3(a)", "also: 273.1(b)(7)(ii). The regulation names ...".
_ALSO = re.compile(r"\balso:", re.IGNORECASE)
_REFERENCE = re.compile(r"(\d{3}\.\d+)((?:\([0-9A-Za-z]{1,6}\))*)(?!\()")


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
    paragraphs: list[SubChunk] = field(default_factory=list)  # best first; default: the hits' in reading order
    evidence: float | None = None  # what the no-answer gate saw (rag.answer.evidence), for calibration tables

    def ranked_paragraphs(self) -> list[SubChunk]:
        return self.paragraphs or [s for h in self.hits for s in h.chunk.subchunks]


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


# history: doc2dial {role, text} messages, or earlier user turns as plain strings (section-gold sets)
Run = Callable[[str, list[Any]], EvalTurn]


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


# --- Section-level gold (a regulation: gold_section, gold_paths, answerable) ---------------------------------

def is_section_set(questions: list[dict[str, Any]]) -> bool:
    """A question set labelled by section and paragraph path rather than by document."""
    return any("gold_section" in q or "answerable" in q for q in questions)


def chunk_sections(hit: SearchHit) -> set[str]:
    """The sections a retrieved chunk holds (a chunk packed from sibling sections holds several)."""
    found = {location(s.heading_path)[0] for s in hit.chunk.subchunks}
    found.add(location(hit.chunk.heading_path)[0])
    return found - {""}


@dataclass(frozen=True, slots=True)
class SectionGold:
    section: str
    paths: list[Labels]
    answerable: bool
    # Other places the note says also answer (section, path): the lenient citation score counts them. A section
    # alone ("also: 273.26") counts any paragraph in it.
    also: tuple[tuple[str, Labels], ...] = ()

    @classmethod
    def of(cls, q: dict[str, Any]) -> SectionGold:
        section = str(q.get("gold_section") or "").removeprefix("§").strip()
        answerable = bool(q.get("answerable", bool(section)))
        try:
            paths = [parse_path(p) for p in q.get("gold_paths") or []]
        except ValueError as exc:
            raise ValueError(f"{q.get('qid')}: {exc}") from exc
        if answerable and not section:
            raise ValueError(f"{q.get('qid')}: an answerable question needs 'gold_section'")
        return cls(section, paths, answerable, also_answering(str(q.get("note") or "")))

    def section_rank(self, hits: list[SearchHit], k: int = 10) -> int | None:
        """1-based rank of the first of the top-k chunks in the gold section."""
        return next((i for i, h in enumerate(hits[:k], start=1) if self.section in chunk_sections(h)), None)

    def paragraph_hit(self, paragraphs: list[SubChunk], k: int = 3) -> bool:
        """A top-k paragraph in the gold section that is a gold path, its parent, or nested under it."""
        for sub in paragraphs[:k]:
            section, labels = location(sub.heading_path)
            if section == self.section and any(near(labels, gold) for gold in self.paths):
                return True
        return False

    def paragraph_rank(self, paragraphs: list[SubChunk], k: int = 10) -> int | None:
        """1-based rank of the first of the top-k paragraphs that paragraph_hit counts (what an answer could cite)."""
        for rank, sub in enumerate(paragraphs[:k], start=1):
            section, labels = location(sub.heading_path)
            if section == self.section and any(near(labels, gold) for gold in self.paths):
                return rank
        return None

    def correct(self, citation: Citation) -> bool:
        """A citation whose location equals a gold path or lies inside one."""
        section, labels = location(citation.heading_path)
        return section == self.section and any(inside(labels, gold) for gold in self.paths)

    def correct_or_also(self, citation: Citation) -> bool:
        """Correct, or at (or inside) a place the note names as also answering: the dataset's lenient score."""
        section, labels = location(citation.heading_path)
        return self.correct(citation) or any(section == s and inside(labels, path) for s, path in self.also)


def also_answering(note: str) -> tuple[tuple[str, Labels], ...]:
    """The places after "also:" in a question's note, as (section, path); free text around them is ignored."""
    found = _ALSO.search(note)
    places: list[tuple[str, Labels]] = []
    for m in _REFERENCE.finditer(note[found.end():found.end() + 500] if found else ""):
        try:
            places.append((m.group(1), parse_path(m.group(2)) if m.group(2) else ()))
        except ValueError:  # a note is free text: what does not read as a paragraph path is not a place
            continue
    return tuple(places)


@dataclass(slots=True)
class SectionScores:
    """Retrieval on answerable questions."""

    n: int = 0
    recall1: float = 0.0
    recall3: float = 0.0
    recall5: float = 0.0
    mrr10: float = 0.0
    paragraph3: float = 0.0

    def add(self, gold: SectionGold, hits: list[SearchHit], paragraphs: list[SubChunk]) -> None:
        self.n += 1
        rank = gold.section_rank(hits)
        self.recall1 += float(rank is not None and rank <= 1)
        self.recall3 += float(rank is not None and rank <= 3)
        self.recall5 += float(rank is not None and rank <= 5)
        self.mrr10 += 1.0 / rank if rank else 0.0
        self.paragraph3 += float(gold.paragraph_hit(paragraphs))

    def means(self) -> dict[str, float]:
        d = max(self.n, 1)
        return {"n": self.n, "recall@1": self.recall1 / d, "recall@3": self.recall3 / d,
                "recall@5": self.recall5 / d, "mrr@10": self.mrr10 / d, "paragraph_hit@3": self.paragraph3 / d}


@dataclass(slots=True)
class SectionAnswers:
    """Answers: gold citations on answerable questions, refusals on both kinds."""

    answerable: int = 0
    answerable_refused: int = 0
    cites_gold: int = 0
    cites_gold_or_also: int = 0
    citations: int = 0
    correct_citations: int = 0
    unanswerable: int = 0
    unanswerable_refused: int = 0

    def add(self, gold: SectionGold, no_answer: bool, citations: list[Citation]) -> None:
        if not gold.answerable:
            self.unanswerable += 1
            self.unanswerable_refused += int(no_answer)
            return
        self.answerable += 1
        if no_answer:
            self.answerable_refused += 1
            return
        correct = sum(1 for c in citations if gold.correct(c))
        self.citations += len(citations)
        self.correct_citations += correct
        self.cites_gold += int(correct > 0)
        self.cites_gold_or_also += int(any(gold.correct_or_also(c) for c in citations))

    def means(self) -> dict[str, float]:
        return {"answerable": self.answerable,
                "cites_gold": self.cites_gold / self.answerable if self.answerable else 0.0,
                "cites_gold_or_also": self.cites_gold_or_also / self.answerable if self.answerable else 0.0,
                "citation_precision": self.correct_citations / self.citations if self.citations else 0.0,
                "refused_answerable": self.answerable_refused / self.answerable if self.answerable else 0.0,
                "unanswerable": self.unanswerable,
                "refused_unanswerable": (self.unanswerable_refused / self.unanswerable
                                         if self.unanswerable else 0.0)}


GROUPS = ("first turns", "follow-ups", "follow-ups, question alone", "all")


@dataclass(slots=True)
class SectionReport:
    retrieval: dict[str, SectionScores] = field(default_factory=lambda: {g: SectionScores() for g in GROUPS})
    answers: dict[str, SectionAnswers] = field(default_factory=lambda: {g: SectionAnswers() for g in GROUPS})
    ms: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"retrieval": {g: s.means() for g, s in self.retrieval.items()},
                "answers": {g: a.means() for g, a in self.answers.items() if a.answerable or a.unanswerable},
                "ms_per_question": {"median": statistics.median(self.ms) if self.ms else 0.0,
                                    "mean": statistics.fmean(self.ms) if self.ms else 0.0}}

    def table(self) -> str:
        lines = ["| turns (answerable) | n | section R@1 | R@3 | R@5 | MRR@10 | paragraph hit@3 |",
                 "|---|---|---|---|---|---|---|"]
        for name, scores in self.retrieval.items():
            m = scores.means()
            if m["n"]:
                lines.append(f"| {name} | {m['n']} | {m['recall@1']:.3f} | {m['recall@3']:.3f} | "
                             f"{m['recall@5']:.3f} | {m['mrr@10']:.3f} | {m['paragraph_hit@3']:.3f} |")
        lines += ["", "| turns | answerable | cite a gold paragraph | cite gold or an also: place | citation precision "
                  "| refused (answerable) | unanswerable | refused (unanswerable) |", "|---" * 8 + "|"]
        for name, answers in self.answers.items():
            a = answers.means()
            if a["answerable"] or a["unanswerable"]:
                lines.append(f"| {name} | {a['answerable']} | {a['cites_gold']:.3f} | {a['cites_gold_or_also']:.3f} "
                             f"| {a['citation_precision']:.3f} "
                             f"| {a['refused_answerable']:.3f} | {a['unanswerable']} | "
                             f"{a['refused_unanswerable']:.3f} |")
        d = self.as_dict()["ms_per_question"]
        lines.append(f"\nms per question: median {d['median']:.1f}, mean {d['mean']:.1f}")
        return "\n".join(lines)


def _where(heading_path: list[str]) -> str:
    section, labels = location(heading_path)
    return f"{section}{''.join(f'({x})' for x in labels)}" if section else ""


def evaluate_sections(questions: list[dict[str, Any]], run: Run, out_path: Path) -> SectionReport:
    """Run every question of a section-gold set through `run(question, history)` (history: earlier user turns as
    plain strings; `navibot eval` answers them first, as the thread would hold them) and write one JSON line per
    question. Follow-ups are also searched with the question alone, to show what the history rewrite adds."""
    golds = [SectionGold.of(q) for q in questions]  # every label checked before anything runs
    report = SectionReport()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with out_path.open("w", encoding="utf-8") as out:
        for q, gold in zip(questions, golds, strict=True):
            history = [h if isinstance(h, str) else str(h.get("text", "")) for h in q.get("history") or []
                       if isinstance(h, str) or (isinstance(h, dict) and h.get("role", "user") == "user")]
            started = time.perf_counter()
            turn = run(q["question"], history)
            report.ms.append((time.perf_counter() - started) * 1000)
            paragraphs = turn.ranked_paragraphs()
            group = "follow-ups" if history else "first turns"
            for name in (group, "all"):
                report.answers[name].add(gold, turn.no_answer, turn.citations)
                if gold.answerable:
                    report.retrieval[name].add(gold, turn.hits, paragraphs)
            if history and gold.answerable:
                alone = run(q["question"], [])
                report.retrieval["follow-ups, question alone"].add(gold, alone.hits, alone.ranked_paragraphs())
            record = {
                "qid": q["qid"],
                "standalone": turn.standalone,
                "sections": [sorted(chunk_sections(h)) for h in turn.hits[:10]],
                "paragraphs": [_where(s.heading_path) for s in paragraphs[:5]],
                "section_rank": gold.section_rank(turn.hits) if gold.answerable else None,
                "paragraph_hit@3": gold.paragraph_hit(paragraphs) if gold.answerable else None,
                "gold_paragraph_rank": gold.paragraph_rank(paragraphs) if gold.answerable else None,
                "chunks": [{"chunk_id": h.chunk.chunk_id, "doc_id": h.chunk.doc_id, "text": h.chunk.text}
                           for h in turn.hits[:5]],
                "answer": turn.answer,
                "no_answer": turn.no_answer,
                "answerable": gold.answerable,
                "first_turn": not history,
                "evidence": turn.evidence,
                "citations": [{"doc_id": c.doc_id, "sub_id": c.sub_id, "where": _where(c.heading_path),
                               "correct": gold.correct(c), "correct_or_also": gold.correct_or_also(c), "quote": c.quote}
                              for c in turn.citations],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return report


def calibration(records: list[dict[str, Any]], thresholds: list[float],
                used: float) -> list[tuple[float, float, float]]:
    """For each no-answer threshold on the evidence (records written by evaluate_sections, run with threshold
    `used`): the answered share of answerable questions and the refused share of unanswerable ones. A question
    refused for another reason although its evidence passed (no citation survived the rail) stays refused; one
    refused by the gate is counted as answered below its evidence."""
    def refused(r: dict[str, Any], t: float) -> bool:
        seen = r["evidence"] if r["evidence"] is not None else 0.0
        return seen < t or (r["no_answer"] and seen >= used)

    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    return [(t, sum(not refused(r, t) for r in answerable) / max(len(answerable), 1),
             sum(refused(r, t) for r in unanswerable) / max(len(unanswerable), 1)) for t in thresholds]
