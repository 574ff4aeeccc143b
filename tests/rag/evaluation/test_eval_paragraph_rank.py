"""Per-question records of a section-gold evaluation name the rank of the first gold paragraph, so that an answer
citing another paragraph can be told from one whose gold paragraph was not among those ranked."""

from __future__ import annotations

import json
from pathlib import Path

from rag.evaluation.evaluate import EvalTurn, SectionGold, evaluate_sections
from tests.rag.evaluation.test_eval import _section_hit, _sub


def test_the_rank_of_the_first_gold_paragraph_is_in_each_record(tmp_path: Path) -> None:
    questions = [{"qid": "a", "question": "students?", "gold_section": "273.5", "gold_paths": ["(b)(5)"],
                  "answerable": True},
                 {"qid": "b", "question": "boarders?", "gold_section": "273.1", "gold_paths": ["(b)(3)"],
                  "answerable": True},
                 {"qid": "c", "question": "wic?", "gold_section": "", "gold_paths": [], "answerable": False}]
    ranked = {"students?": [_sub("273.2", "(a)", 0), _sub("273.5", "(b)(4)", 1), _sub("273.5", "(b)(5)(ii)", 2)],
              "boarders?": [_sub("273.1", "(b)(2)", 3)], "wic?": [_sub("273.2", "(c)", 4)]}

    def run(question: str, history: list[str]) -> EvalTurn:
        return EvalTurn([_section_hit("273.2", "(a)", 9)], question, "", True, [], ranked[question])

    evaluate_sections(questions, run, tmp_path / "out.jsonl")
    records = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    # (b)(5)(ii) is under the gold (b)(5): rank 3; no gold paragraph ranked; an unanswerable question has none
    assert [r["gold_paragraph_rank"] for r in records] == [3, None, None]
    gold = SectionGold.of(questions[0])
    assert gold.paragraph_rank(ranked["students?"], k=2) is None
