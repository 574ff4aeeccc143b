"""bench_eval.py's table by qid halves: the figures of the issue-16 targets for the odd qids (tuned on), the even
ones and all, from the records `navibot eval` writes for a section-gold set."""

from __future__ import annotations

from typing import Any

from benchmarks.bench_eval import halves_table


def record(qid: str, *, answerable: bool = True, first: bool = True, section_rank: int | None = 1,
           hit: bool = True, refused: bool = False, citations: tuple[bool, ...] = (True,)) -> dict[str, Any]:
    return {"qid": qid, "answerable": answerable, "first_turn": first, "section_rank": section_rank,
            "paragraph_hit@3": hit, "no_answer": refused, "citations": [{"correct": c} for c in citations]}


def test_the_halves_are_split_by_qid_and_score_the_targets() -> None:
    records = [
        record("dev-001", citations=(True, False)),  # odd: cites a gold paragraph, precision 1 of 2
        record("dev-003", section_rank=4, hit=False, citations=(False,)),  # odd: misses
        record("dev-005", first=False, citations=(True,)),  # odd follow-up: counts for citations, not first turns
        record("dev-002", refused=True, citations=()),  # even: refused (a miss for "cite a gold paragraph")
        record("dev-004", answerable=False, section_rank=None, hit=False, refused=True, citations=()),
        record("dev-006", answerable=False, section_rank=None, hit=False, citations=(False,)),
    ]
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1:] for line in halves_table(records).splitlines()[2:]}
    assert list(rows) == ["odd qids (tuned on)", "even qids", "all"]
    # first-turn section R@3, paragraph hit@3, cite a gold paragraph, precision, refused answerable / unanswerable
    assert rows["odd qids (tuned on)"] == ["0.500", "0.500", "0.667", "0.500", "0.000", "- |"]
    assert rows["even qids"] == ["1.000", "1.000", "0.000", "-", "1.000", "0.500 |"]
    assert rows["all"] == ["0.667", "0.667", "0.500", "0.500", "0.250", "0.500 |"]
