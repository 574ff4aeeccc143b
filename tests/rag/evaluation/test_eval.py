"""Evaluation metrics, checked against values computed by hand, and the `navibot eval` command end to end."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from rag.cite.rail import Citation
from rag.documents import Chunk, SearchHit, SubChunk
from rag.evaluation.evaluate import EvalTurn, contains_span, evaluate, ranked_doc_ids, reciprocal_rank
from tests.conftest import write

TEXTS = {
    "A": "Apply online. You can apply for SSI by phone or in person.",
    "B": "Students need an exemption. Work study counts.",
    "C": "WIC serves infants and young children.",
    "D": "LIHEAP pays heating bills.",
}


def _hit(doc: str, n: int = 0) -> SearchHit:
    cid = f"{doc}::{n}"
    sub = SubChunk(f"{cid}.0", cid, 0, "paragraph", TEXTS[doc], [])
    return SearchHit(Chunk(cid, doc, n, f"Doc {doc}", [], [sub], text=TEXTS[doc]), score=1.0)


# Rankings fixed per question, so every metric below can be worked out on paper.
RANKED = {
    "q1": ["A", "B", "C"],       # first turn, gold A at rank 1
    "q2": ["B", "C", "D", "A"],  # first turn, gold A at rank 4
    "q3": ["C", "A"],            # later turn, gold A at rank 2
    "q4": ["D"],                 # later turn, gold B missing
}
QUESTIONS: list[dict[str, Any]] = [
    {"qid": "q1", "question": "how to apply for ssi", "history": [], "gold_doc_id": "A",
     "gold_answers": ["apply for SSI by  phone"]},
    {"qid": "q2", "question": "ssi by phone?", "history": [], "gold_doc_id": "A", "gold_answers": ["by phone"]},
    {"qid": "q3", "question": "and in person?", "history": [{"role": "user", "text": "ssi"}],
     "gold_doc_id": "A", "gold_answers": ["in person"]},
    {"qid": "q4", "question": "what about work study?", "history": [{"role": "user", "text": "students"}],
     "gold_doc_id": "B", "gold_answers": ["Work study counts."]},
]


def _citation(doc: str, quote: str) -> Citation:
    return Citation(1, doc, f"{doc}::0", f"{doc}::0.0", f"Doc {doc}", [], None, None, quote)


# Answers fixed per question: q1 quotes its source (with the gold span), q2 misquotes, q3 quotes A without the
# span, q4 is a no-answer.
ANSWERS = {
    "q1": [_citation("A", TEXTS["A"])],
    "q2": [_citation("A", "You can apply for SSI by fax.")],
    "q3": [_citation("A", TEXTS["A"]), _citation("C", TEXTS["C"])],
    "q4": [],
}


def test_metrics_match_hand_computed_values(tmp_path: Path) -> None:
    seen_histories: list[int] = []

    def run(question: str, history: list[dict[str, str]]) -> EvalTurn:
        seen_histories.append(len(history))
        qid = next(q["qid"] for q in QUESTIONS if q["question"] == question)
        cites = ANSWERS[qid]
        return EvalTurn([_hit(d) for d in RANKED[qid]], question, "answer" if cites else "", not cites, cites)

    report = evaluate(QUESTIONS, run, tmp_path / "out.jsonl",
                      is_verbatim=lambda c: c.quote in TEXTS[c.doc_id])
    first, later = report.first.means(), report.later.means()
    # first turns: q1 (rank 1, span in top 3), q2 (rank 4, span not in top 3)
    assert first == pytest.approx({"n": 2, "recall@1": 0.5, "recall@3": 0.5, "recall@5": 1.0,
                                   "mrr@10": (1 + 1 / 4) / 2, "span_recall@3": 0.5})
    # later turns: q3 (rank 2, span in A's text), q4 (gold never retrieved)
    assert later == pytest.approx({"n": 2, "recall@1": 0.0, "recall@3": 0.5, "recall@5": 0.5,
                                   "mrr@10": (1 / 2 + 0) / 2, "span_recall@3": 0.5})
    # answers: 3 of 4 answered; 4 citations of which 3 verbatim; span in citations for q1 and q2? q2's span
    # "by phone" is not in its misquote, q3's "in person" is in A's text: 2 of 3 answered.
    assert report.answers.means() == pytest.approx({"questions": 4, "answered": 3, "citations": 4,
                                                    "verbatim_share": 3 / 4, "span_in_citations": 2 / 3,
                                                    "no_answer_rate": 1 / 4})
    assert seen_histories == [0, 0, 1, 1]
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [x["qid"] for x in lines] == ["q1", "q2", "q3", "q4"]
    assert lines[1]["ranked_doc_ids"] == ["B", "C", "D", "A"]
    assert lines[1]["chunks"][0] == {"chunk_id": "B::0", "doc_id": "B", "text": TEXTS["B"]}
    assert lines[3]["no_answer"] is True and lines[3]["citations"] == []
    assert lines[0]["citations"] == [{"doc_id": "A", "sub_id": "A::0.0", "quote": TEXTS["A"]}]


def test_helpers() -> None:
    assert reciprocal_rank(["x", "y", "z"], "z") == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"] * 10 + ["z"], "z") == 0.0  # beyond rank 10
    assert contains_span(["A  long\ntext here"], ["long text"]) == 1.0  # whitespace-insensitive
    assert contains_span(["short"], ["long text", ""]) == 0.0
    assert ranked_doc_ids([_hit("A", 0), _hit("A", 1), _hit("B")]) == ["A", "B"]


def test_eval_command_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topics = ["heating bills and energy crisis help", "infant formula and nutrition for babies",
              "college students and work study", "disability payments for adults", "tax credit for workers",
              "unemployment insurance after a layoff", "health coverage for children", "renewing Medicaid each year",
              "applying for food stamps online", "immigrant eligibility rules", "retirement benefits at 62",
              "housing vouchers and rent"]
    corpus = write(tmp_path / "corpus.jsonl", "".join(
        json.dumps({"doc_id": f"d{i}", "title": t.title(), "text": f"{t.capitalize()}.\n\nThis page explains {t}.",
                    "domain": "test"}) + "\n" for i, t in enumerate(topics)))
    questions = write(tmp_path / "q.jsonl", "".join(json.dumps(q) + "\n" for q in [
        {"qid": "1", "question": "who helps with heating bills?", "history": [], "gold_doc_id": "d0",
         "gold_answers": ["heating bills"]},
        {"qid": "2", "question": "nutrition for babies", "history": [], "gold_doc_id": "d1", "gold_answers": []},
        {"qid": "3", "question": "and work study?", "history": [{"role": "user", "text": "students"}],
         "gold_doc_id": "d2", "gold_answers": ["work study"]},
    ]))
    out = tmp_path / "r.jsonl"
    assert main(["eval", "--corpus", str(corpus), "--questions", str(questions), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| first turns | 2 | 1.000 | 1.000 |" in printed
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 3
    for line in lines:
        assert len(line["ranked_doc_ids"]) >= 10 and len(set(line["ranked_doc_ids"])) == len(line["ranked_doc_ids"])
        assert 1 <= len(line["chunks"]) <= 5
        assert set(line["chunks"][0]) == {"chunk_id", "doc_id", "text"}
        assert {"answer", "no_answer", "citations", "standalone"} <= set(line)
    assert lines[0]["ranked_doc_ids"][0] == "d0"
    assert lines[2]["standalone"] == "students and work study?"  # the later turn was rewritten with its history
    assert "verbatim 100.0%" in printed


def test_eval_command_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write(tmp_path / "q.jsonl", '{"qid": "1"}\n')
    assert main(["eval", "--corpus", str(bad), "--questions", str(tmp_path / "missing.jsonl"),
                 "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err
    assert main(["eval", "--corpus", str(bad), "--questions", str(bad), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "needs at least 'qid' and 'question'" in capsys.readouterr().err


def test_eval_can_use_an_existing_store(tmp_path: Path, kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "kept.sqlite3"
    assert main(["ingest", str(kb), "--store", str(store)]) == 0
    questions = write(tmp_path / "q.jsonl", json.dumps(
        {"qid": "1", "question": "heating bills", "history": [], "gold_doc_id": "kb/liheap"}) + "\n")
    out = tmp_path / "r.jsonl"
    assert main(["eval", "--store", str(store), "--questions", str(questions), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["ranked_doc_ids"][0] == "kb/liheap"
    assert "| first turns | 1 | 1.000 |" in capsys.readouterr().out
    empty = tmp_path / "empty.sqlite3"
    assert main(["eval", "--store", str(empty), "--questions", str(questions), "--out", str(out)]) == 2
    assert "nothing to search" in capsys.readouterr().err


# --- Section-level gold (a regulation) ------------------------------------------------------------------------

from rag.evaluation.evaluate import SectionGold, also_answering, evaluate_sections  # noqa: E402
from rag.search.legal_location import location, near, parse_path  # noqa: E402

PART = ["Subpart A—General Rules"]


def test_location_reads_both_heading_path_styles() -> None:
    # labels each in their own element (the sequence-resolving chunker)
    assert location([*PART, "§ 273.5 Students.", "(b) Exemptions", "(5)", "(i) Work study"]) == \
        ("273.5", ("b", "5", "i"))
    # a paragraph without its own label element sits at its parent's path (the earlier chunker)
    assert location([*PART, "§ 273.1 Household concept.", "(b) Special household requirements",
                     "(1) Required household combinations"]) == ("273.1", ("b", "1"))
    # run-in labels in one element; text after the labels (and a label quoted inside it) is ignored
    assert location(["§ 273.8 Resource eligibility standards.", "(e)(2)(i) See paragraph (h)(1)"]) == \
        ("273.8", ("e", "2", "i"))
    assert location(["Authority"]) == ("", ())
    assert location(["Subpart B", "§ 273.11 Action on households.", "(c)"])[0] == "273.11"


def test_paragraph_paths_compare_label_by_label() -> None:
    gold = parse_path("(b)(5)")
    assert near(("b", "5"), gold) and near(("b", "5", "i"), gold) and near(("b",), gold)  # itself, child, parent
    assert not near(("b", "50"), gold) and not near(("b", "6"), gold) and not near((), gold)
    with pytest.raises(ValueError):
        parse_path("b-5")


def _sub(section: str, labels: str, n: int) -> SubChunk:
    path = [f"§ {section} Heading.", *(f"({x})" for x in parse_path(labels))] if section else ["Authority"]
    return SubChunk(f"s{n}", f"c{n}", 0, "paragraph", f"text {n}", path)


def _section_hit(section: str, labels: str, n: int) -> SearchHit:
    sub = _sub(section, labels, n)
    return SearchHit(Chunk(f"c{n}", "cfr", n, "7 CFR 273", sub.heading_path[:1], [sub], text=sub.text), 1.0)


def _cite(section: str, labels: str, n: int) -> Citation:
    sub = _sub(section, labels, n)
    return Citation(1, "cfr", sub.chunk_id, sub.sub_id, "7 CFR 273", sub.heading_path, None, None, sub.text)


SECTION_QUESTIONS: list[dict[str, Any]] = [
    {"qid": "d1", "question": "students?", "history": [], "gold_section": "273.5", "gold_paths": ["(b)(5)"],
     "answerable": True},
    {"qid": "d2", "question": "boarders?", "history": [], "gold_section": "273.1", "gold_paths": ["(b)(3)"],
     "answerable": True, "note": "also: 273.1(b)"},
    {"qid": "d3", "question": "and a second offense?", "history": ["fraud first time"], "gold_section": "273.16",
     "gold_paths": ["(b)(1)(ii)"], "answerable": True},
    {"qid": "d4", "question": "office phone number?", "history": [], "gold_section": "", "gold_paths": [],
     "answerable": False},
    {"qid": "d5", "question": "wic?", "history": [], "gold_section": "", "gold_paths": [], "answerable": False},
]
# hits, answer citations (None = no answer), for each question, so every figure can be worked out on paper.
SECTION_RUNS: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]] | None]] = {
    # gold section at rank 1; paragraph (b)(5)(ii) is nested under the gold; one of two citations correct
    "d1": ([("273.5", "(b)(5)(ii)"), ("273.2", "(a)"), ("273.5", "(a)")], [("273.5", "(b)(5)(i)"), ("273.2", "(a)")]),
    # gold section at rank 4; its paragraph is a sibling; the citation is the parent of the gold: not inside it,
    # but the note names that parent as also answering (the lenient score counts it)
    "d2": ([("273.2", "(a)"), ("273.3", "(a)"), ("273.4", "(a)"), ("273.1", "(b)(2)")], [("273.1", "(b)")]),
    # follow-up: gold section at rank 2 with the parent paragraph (a hit), refused
    "d3": ([("273.7", "(a)"), ("273.16", "(b)(1)")], None),
    "d4": ([("273.2", "(c)")], None),  # refused, rightly
    "d5": ([("273.2", "(c)")], [("273.2", "(c)")]),  # answered, wrongly
}
ALONE = {"d3": [("273.16", "(b)(1)(ii)")]}  # the follow-up searched without its history


def test_section_metrics_match_hand_computed_values(tmp_path: Path) -> None:
    def run(question: str, history: list[str]) -> EvalTurn:
        qid = next(q["qid"] for q in SECTION_QUESTIONS if q["question"] == question)
        hits_spec, cites_spec = SECTION_RUNS[qid]
        if qid in ALONE and not history:
            hits_spec = ALONE[qid]
        else:
            assert history == next(q["history"] for q in SECTION_QUESTIONS if q["qid"] == qid)
        hits = [_section_hit(s, p, i) for i, (s, p) in enumerate(hits_spec)]
        cites = [_cite(s, p, 100 + i) for i, (s, p) in enumerate(cites_spec or [])]
        return EvalTurn(hits, question, "x" if cites_spec else "", cites_spec is None, cites)

    report = evaluate_sections(SECTION_QUESTIONS, run, tmp_path / "out.jsonl").as_dict()
    assert report["retrieval"]["first turns"] == pytest.approx(
        {"n": 2, "recall@1": 0.5, "recall@3": 0.5, "recall@5": 1.0, "mrr@10": (1 + 1 / 4) / 2,
         "paragraph_hit@3": 0.5})  # d2's paragraph is rank 4 and a sibling anyway
    assert report["retrieval"]["follow-ups"] == pytest.approx(
        {"n": 1, "recall@1": 0.0, "recall@3": 1.0, "recall@5": 1.0, "mrr@10": 0.5, "paragraph_hit@3": 1.0})
    assert report["retrieval"]["follow-ups, question alone"]["recall@1"] == 1.0
    assert report["answers"]["first turns"] == pytest.approx(
        {"answerable": 2, "cites_gold": 0.5, "cites_gold_or_also": 1.0, "citation_precision": 1 / 3,
         "refused_answerable": 0.0, "unanswerable": 2, "refused_unanswerable": 0.5})
    assert report["answers"]["follow-ups"]["refused_answerable"] == 1.0
    assert report["answers"]["all"]["answerable"] == 3
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert lines[0]["citations"][0]["where"] == "273.5(b)(5)(i)" and lines[0]["citations"][0]["correct"] is True
    assert lines[1]["section_rank"] == 4 and lines[3]["section_rank"] is None
    assert lines[1]["citations"][0]["correct"] is False and lines[1]["citations"][0]["correct_or_also"] is True


def test_also_places_are_read_from_the_note() -> None:
    assert also_answering("also: 273.3(a)") == (("273.3", ("a",)),)
    assert also_answering("topic change; also: 273.7(a)(4)") == (("273.7", ("a", "4")),)
    # free text after the place, a section alone, a second place
    assert also_answering("also: 273.1(b)(7)(ii). The regulation text names California.") == (
        ("273.1", ("b", "7", "ii")),)
    assert also_answering("also: 273.26 and 273.27(a)") == (("273.26", ()), ("273.27", ("a",)))
    # no "also:", or nothing that reads as a place: none (never an error: a note is free text)
    assert also_answering("why: a local phone number") == ()
    assert also_answering("also: 273.2(notapath)") == ()
    # a hostile note: read from a bounded window after the first "also:", quickly
    started = time.perf_counter()
    assert also_answering("also: " + "273.1(a)(" * 50_000) == ()
    assert 0 < len(also_answering("also: " + "273.1(a) " * 50_000)) <= 500 // len("273.1(a) ") + 1
    assert time.perf_counter() - started < 0.5
    gold = SectionGold.of({"qid": "q", "gold_section": "273.2", "gold_paths": ["(f)(1)(vi)"], "answerable": True,
                           "note": "also: 273.3(a)"})
    assert gold.correct_or_also(_cite("273.3", "(a)(1)", 1)) and not gold.correct(_cite("273.3", "(a)(1)", 1))
    assert gold.correct_or_also(_cite("273.2", "(f)(1)(vi)", 2))
    assert not gold.correct_or_also(_cite("273.3", "(b)", 3))


def test_section_gold_is_checked() -> None:
    with pytest.raises(ValueError, match="q9"):
        SectionGold.of({"qid": "q9", "gold_section": "273.1", "gold_paths": ["b5"], "answerable": True})
    with pytest.raises(ValueError, match="needs 'gold_section'"):
        SectionGold.of({"qid": "q9", "gold_section": "", "answerable": True})


REGULATION = """# PART 999—TEST BENEFITS

## Subpart A—General

### § 999.1 Households.

(a) General. A household is people who buy and cook food together.

(b) Special rules—(1) Spouses. Spouses must be in the same household.

(2) Boarders. A boarder who pays a reasonable amount for meals is not a household member.

### § 999.2 Students.

(a) Rule. A student enrolled half time or more is not eligible unless exempt.

(b) Exemptions. A student is exempt if the student:

(1) Is under 18;

(2) Works at least 20 hours a week for pay;

(3) Gets work study.
"""


def test_eval_command_on_a_markdown_regulation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write(tmp_path / "reg" / "999.md", REGULATION)
    questions = write(tmp_path / "q.jsonl", "".join(json.dumps(q) + "\n" for q in [
        {"qid": "1", "question": "is a student who works 20 hours a week for pay exempt?", "history": [],
         "gold_section": "999.2", "gold_paths": ["(b)(2)"], "answerable": True},
        {"qid": "2", "question": "what about work study?", "history": ["is a student exempt?"],
         "gold_section": "999.2", "gold_paths": ["(b)(3)"], "answerable": True},
        {"qid": "3", "question": "what is the phone number of the county office?", "history": [],
         "gold_section": "", "gold_paths": [], "answerable": False},
        {"qid": "4", "question": "what about work study?",
         "history": ["what is the phone number of the county office?"],
         "gold_section": "999.2", "gold_paths": ["(b)(3)"], "answerable": True},
    ]))
    out = tmp_path / "r.jsonl"
    # a folder corpus, ingested by the normal ingest path
    assert main(["eval", "--corpus", str(corpus.parent), "--questions", str(questions), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| first turns | 1 | 1.000 | 1.000 | 1.000 | 1.000 |" in printed
    assert "paragraph hit@3" in printed and "refused (unanswerable)" in printed
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert "999.2" in lines[0]["sections"][0]  # a small file's sections are packed into one chunk
    assert "999.2(b)(2)" in lines[0]["paragraphs"][:3]
    assert lines[1]["standalone"].startswith("is a student exempt?")  # plain-string history was used
    # The earlier turns are answered first, as in a thread: one the bot could not answer is not kept as context
    # (bot/chat/handler.py keeps no no-answer), so the follow-up is read alone.
    assert lines[2]["no_answer"] and lines[3]["standalone"] == "what about work study?"


def test_eval_command_reports_a_bad_gold_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write(tmp_path / "999.md", REGULATION)
    questions = write(tmp_path / "q.jsonl", json.dumps(
        {"qid": "x1", "question": "q", "gold_section": "999.1", "gold_paths": ["b.2"], "answerable": True}) + "\n")
    assert main(["eval", "--corpus", str(corpus), "--questions", str(questions),
                 "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "x1: not a paragraph path: 'b.2'" in capsys.readouterr().err


def test_calibration_table_counts_both_kinds_of_question() -> None:
    from rag.evaluation.evaluate import calibration

    def rec(answerable: bool, evidence: float, no_answer: bool) -> dict[str, object]:
        return {"answerable": answerable, "evidence": evidence, "no_answer": no_answer}

    records = [rec(True, 0.8, False), rec(True, 0.3, False), rec(True, 0.9, True),  # the last: the rail refused
               rec(False, 0.0, True), rec(False, 0.5, False)]
    rows = calibration(records, [0.0, 0.4, 0.6], used=0.2)
    expected: list[tuple[float, object, float]] = [(0.0, pytest.approx(2 / 3), 0.0), (0.4, pytest.approx(1 / 3), 0.5),
                                                   (0.6, pytest.approx(1 / 3), 1.0)]
    assert rows == expected
