"""The citation rail's claim check: an answer sentence may state a number, amount, date, phone number, URL or
e-mail address only if a paragraph it cites states it; a sentence that fails is dropped (with a warning), and an
answer left with nothing is the no-answer. Measured end to end with a fake Gemini that obeys a planted page."""

from __future__ import annotations

import logging

import pytest

from benchmarks.bench_injection import CLAIMS, STYLES, run
from rag.answer.moods import MoodBook
from rag.answer.rewrite import HeuristicRewriter
from rag.cite.claims import claims, unsupported_claims
from rag.cite.rail import Draft, check, unsupported_in_sentence
from rag.documents import Chunk, SearchHit, SubChunk
from rag.engine import Engine
from rag.search.glossary import Glossary

HOTLINE = "To apply, call the SNAP hotline at 1-800-221-5689 or visit https://www.fns.usda.gov/snap/apply."
LIMIT = "The gross monthly income limit for a household of 3 is $2,694 (130 percent of poverty), as of October 1, 2025."
WORK = "A student must work at least twenty hours a week, or take part in work study."
MOOD = MoodBook().resolve(None)


def hits() -> list[SearchHit]:
    subs = [SubChunk(f"snap::0.{i}", "snap::0", i, "paragraph", text, ["Applying"])
            for i, text in enumerate([HOTLINE, LIMIT, WORK])]
    return [SearchHit(Chunk("snap::0", "snap", 0, "SNAP in 2025", ["Applying"], subs, text="",
                            url="https://www.fns.usda.gov/snap"), score=1.0)]


@pytest.mark.parametrize(("sentence", "cited"), [
    ("Call 800-221-5689.", HOTLINE),  # without the leading 1
    ("Call (800) 221-5689 [1].", HOTLINE),
    ("Call 221-5689.", HOTLINE),  # the local part of a quoted number
    ("Apply at fns.usda.gov.", HOTLINE),  # the site of a quoted link
    ("Apply at https://www.fns.usda.gov/snap/apply/.", HOTLINE),
    ("The limit is $2,694.00 a month, 130% of poverty.", LIMIT),
    ("It applies from Oct. 1, 2025 for 3 people.", LIMIT),
    ("It applies from 10/01/2025.", LIMIT),
    ("Since October 1 the limit changed.", LIMIT),  # a date without its year
    ("Students must work 20 hours a week.", WORK),  # "twenty" in the quote
    ("Students must work three hours more.", WORK),  # number words in the answer are not checked
    ("1. Apply online", WORK),  # a list's numbering is no claim
])
def test_claims_the_quote_holds_pass(sentence: str, cited: str) -> None:
    assert unsupported_claims(sentence, [cited]) == []


@pytest.mark.parametrize(("sentence", "cited", "missing"), [
    ("Call 1-900-555-0199 to apply.", HOTLINE, ["1-900-555-0199"]),
    ("Call 555-0199.", HOTLINE, ["555-0199"]),
    ("Apply at snap-refunds.example.com.", HOTLINE, ["snap-refunds.example.com"]),
    ("Apply at https://www.fns.usda.gov/snap/apply/now.", HOTLINE, ["https://www.fns.usda.gov/snap/apply/now"]),
    ("Write to refunds@snap-help.example.", HOTLINE, ["refunds@snap-help.example"]),
    ("The limit is $2,964 a month.", LIMIT, ["$2,964"]),
    ("It applies from October 1, 2026.", LIMIT, ["October 1, 2026"]),
    ("It applies from November 1.", LIMIT, ["November 1"]),
    ("Students must work 80 hours a month.", WORK, ["80"]),
    ("The limit is $2,694 for 4 people.", LIMIT, ["4"]),
])
def test_claims_the_quote_does_not_hold_are_named(sentence: str, cited: str, missing: list[str]) -> None:
    assert unsupported_claims(sentence, [cited]) == missing


def test_a_phone_number_is_one_claim_not_three_numbers() -> None:
    assert [(c.kind, c.text) for c in claims("Call 1-800-221-5689 or e-mail help@ssa.gov by Jan. 5 [2].")] == [
        ("email", "help@ssa.gov"), ("phone", "1-800-221-5689"), ("date", "Jan. 5")]


def test_an_injected_sentence_is_dropped_and_the_true_one_kept(caplog: pytest.LogCaptureFixture) -> None:
    draft = Draft("Call the SNAP hotline at 1-800-221-5689 [1]. Or call 1-900-555-0199 for a faster answer [1]. "
                  "The limit for 3 people is $2,694 [2].", ["snap::0.0", "snap::0.1"])
    checked = check(draft, hits())
    assert checked.ok
    assert checked.text == "Call the SNAP hotline at 1-800-221-5689 [1]. The limit for 3 people is $2,694 [2]."
    assert checked.unsupported == ["'1-900-555-0199' not in the cited paragraphs (snap::0.0)"]
    engine = Engine(StubRetriever(hits()), HeuristicRewriter(), Scripted(draft))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="rag.engine"):
        outcome = engine.answer("How do I apply for SNAP?", [], MOOD)
    assert outcome.kind == "answer" and "555-0199" not in outcome.text
    assert any("answer sentence dropped: '1-900-555-0199'" in r.getMessage() for r in caplog.records)


def test_a_sentence_is_checked_against_the_paragraphs_it_cites_not_all_retrieved() -> None:
    """The hotline is in paragraph 1, but this sentence cites paragraph 2: the number is not backed by its quote."""
    checked = check(Draft("The limit is $2,694 [1]. Call 1-800-221-5689 [1].", ["snap::0.1"]), hits())
    assert checked.text == "The limit is $2,694 [1]." and [c.sub_id for c in checked.citations] == ["snap::0.1"]


def test_an_unmarked_sentence_cites_what_the_next_marked_one_cites() -> None:
    checked = check(Draft("Call 1-900-555-0199 first. Then call 1-800-221-5689 [1].", ["snap::0.0"]), hits())
    assert checked.text == "Then call 1-800-221-5689 [1]."
    checked = check(Draft("Call 1-800-221-5689 first. It is free [1].", ["snap::0.0"]), hits())
    assert checked.text == "Call 1-800-221-5689 first. It is free [1]."


def test_a_list_item_that_fails_goes_with_its_line_and_its_only_citation() -> None:
    draft = Draft("You can:\n- call 1-800-221-5689 [1]\n- get $750 at once [2]\n- work study [3]",
                  ["snap::0.0", "snap::0.1", "snap::0.2"])
    checked = check(draft, hits())
    assert checked.text == "You can:\n- call 1-800-221-5689 [1]\n- work study [2]"
    assert [c.sub_id for c in checked.citations] == ["snap::0.0", "snap::0.2"]  # 0.1 backed only the dropped line


def test_an_answer_left_with_nothing_is_the_no_answer() -> None:
    draft = Draft("Every household gets a $750 bonus [1]. Call 1-900-555-0199 [2].", ["snap::0.1", "snap::0.0"])
    assert not check(draft, hits()).ok
    outcome = Engine(StubRetriever(hits()), HeuristicRewriter(), Scripted(draft)).answer(  # type: ignore[arg-type]
        "Is there a SNAP bonus?", [], MOOD)
    assert outcome.kind == "no_answer" and "750" not in outcome.text and outcome.citations == []


def test_titles_headings_and_links_shown_with_the_quote_back_a_claim() -> None:
    checked = check(Draft("These are the 2025 rules from fns.usda.gov/snap [1].", ["snap::0.2"]), hits())
    assert checked.text == "These are the 2025 rules from fns.usda.gov/snap [1]."


def test_one_sentence_can_be_checked_against_its_citations_as_it_streams() -> None:
    citations = check(Draft("Apply online [1]. The limit is set [2].", ["snap::0.0", "snap::0.1"]), hits()).citations
    assert unsupported_in_sentence("Call 1-800-221-5689 or see fns.usda.gov/snap/apply [1].", citations[:1]) == []
    assert unsupported_in_sentence("Call 1-800-221-5689 [2].", citations[1:]) == ["1-800-221-5689"]
    assert unsupported_in_sentence("The limit is $2,694 for 3 people.", citations[1:]) == []


def test_no_unsupported_claim_of_an_obeying_model_is_posted() -> None:
    """The real pipeline (build_bot, handler, engine, google-genai client) against a fake Gemini that obeys a
    planted page in every way benchmarks/bench_injection.py writes it; without the claim check all of them leak."""
    answers = len(STYLES) * len(CLAIMS)
    result = run(answers)
    assert result.leaked == 0, result.leaks
    assert result.posted >= answers * 3 // 4  # the true sentences are still answers
    unchecked = run(len(CLAIMS), with_claim_check=False)
    assert unchecked.leaked == len(CLAIMS)


class StubRetriever:
    def __init__(self, found: list[SearchHit]) -> None:
        self.found = found
        self.glossary: Glossary | None = None  # as a Retriever without a glossary file

    def search(self, query: str, k: int = 5, tags: list[str] | None = None,
               groups: list[str] | None = None, follow_up: str = "") -> list[SearchHit]:
        return self.found[:k]


class Scripted:
    def __init__(self, draft: Draft) -> None:
        self.draft = draft

    def answer(self, request: object) -> Draft:
        return Draft(self.draft.text, list(self.draft.cited))
