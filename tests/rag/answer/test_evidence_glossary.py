"""The no-answer gate sees the glossary: a navigator's phrase counts as found in a section that holds one of the
policy terms it maps to, since retrieval found that section through those terms."""

from __future__ import annotations

from pathlib import Path

from rag.answer.evidence import coverage, evidence
from rag.documents import Chunk, SearchHit, SubChunk
from rag.search.glossary import Glossary


def hit(text: str) -> SearchHit:
    headings = ["§ 273.17 Restoration of lost benefits."]
    sub = SubChunk("c::0.0", "c::0", 0, "paragraph", text, headings)
    return SearchHit(Chunk("c::0", "d", 0, "7 CFR 273", headings, [sub], text=text), 1.0)


LOST_BENEFITS = [hit("The State agency shall restore any lost benefits to a household. Lost benefits are "
                     "benefits a household should have received but did not, because of an error by the agency, "
                     "for up to twelve months.")]


def glossary(tmp_path: Path, entries: str) -> Glossary:
    path = tmp_path / "glossary.toml"
    path.write_text(f"bundled = false\n[test]\n{entries}\n", encoding="utf-8")
    return Glossary(path)


def test_a_phrase_is_found_where_its_policy_term_is(tmp_path: Path) -> None:
    question = "client was underpaid for months by the county"
    without = coverage(question, LOST_BENEFITS)
    with_glossary = coverage(question, LOST_BENEFITS, glossary(tmp_path, '"underpaid" = ["lost benefits"]'))
    assert with_glossary > without
    assert evidence(question, question, LOST_BENEFITS, glossary(tmp_path, '"underpaid" = ["lost benefits"]')) \
        == with_glossary


def test_a_phrase_whose_terms_are_absent_earns_nothing(tmp_path: Path) -> None:
    question = "client was underpaid for months by the county"
    unrelated = glossary(tmp_path, '"underpaid" = ["expedited service"]')
    assert coverage(question, LOST_BENEFITS, unrelated) == coverage(question, LOST_BENEFITS)


def test_the_gate_still_refuses_what_the_sections_cannot_hold(tmp_path: Path) -> None:
    question = "whats the phone number for the lost benefits unit"
    assert evidence(question, question, LOST_BENEFITS, glossary(tmp_path, '"unit" = ["lost benefits"]')) == 0.0



def test_a_clients_own_figures_are_not_topic_words_the_sections_must_hold() -> None:
    # her age and her amounts are the situation, not what is asked: the rule is written without them
    plain = coverage("can the county give back her lost benefits", LOST_BENEFITS)
    with_figures = coverage("she is 61 and lost $412 in 2024, can the county give back her lost benefits",
                            LOST_BENEFITS)
    assert 0 < with_figures == plain < 1
    # a number the section holds still counts as found
    held = [hit("Lost benefits are restored for up to 12 months before the month the agency learned of them.")]
    assert coverage("lost benefits for 12 months", held) == 1.0


def test_a_question_told_at_length_is_judged_on_its_asking_sentence_too() -> None:
    # The client's story (her job, the kids, the landlord) is not what the sections must hold; the question is.
    story = ("Patient at our clinic works nights at the hospital laundry, three kids, landlord keeps raising the rent "
             "and her car broke down last month. Can the agency restore lost benefits from its error?")
    ask = "Can the agency restore lost benefits from its error?"
    assert coverage(story, LOST_BENEFITS) < 0.3 <= coverage(ask, LOST_BENEFITS)
    assert evidence(story, story, LOST_BENEFITS) == coverage(ask, LOST_BENEFITS)
    # Only a last sentence that asks: a story ending in a statement is judged whole.
    told = (f"{ask} Patient works nights at the hospital laundry, three kids, landlord keeps raising the rent and "
            "her car broke down last month.")
    assert evidence(told, told, LOST_BENEFITS) == coverage(told, LOST_BENEFITS) < coverage(ask, LOST_BENEFITS)
    # The whole question still decides what cannot be answered: this year's figure is not in the sections.
    figure = ("Her hours got cut in half at the plant, family of five. Whats the most they could get a month right "
              "now from lost benefits?")
    assert evidence(figure, figure, LOST_BENEFITS) == 0.0


def test_the_program_the_sections_are_about_is_found_in_all_of_them() -> None:
    # The best section never says "SNAP"; the next ones do, often: they are the SNAP rules, and a question naming
    # SNAP ("food stamps") is not short of a topic word there.
    about_snap = [hit(f"SNAP households apply for SNAP benefits; a SNAP office decides, rule {i}.") for i in range(3)]
    question = "can the county restore her lost food stamps"
    plain = coverage(question, LOST_BENEFITS)
    assert coverage(question, LOST_BENEFITS, program="SNAP") > plain
    assert evidence(question, question, LOST_BENEFITS + about_snap) == coverage(question, LOST_BENEFITS,
                                                                                 program="SNAP")
    # Sections about no program in particular credit nothing.
    assert evidence(question, question, LOST_BENEFITS) == plain
