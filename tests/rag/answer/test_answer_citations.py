"""The extractive answer on regulation text: which paragraphs it cites, and that what it quotes comes from them.

A regulation nests its rules: "(1) The following persons are exempt:" is followed by (i), (ii) … stored as
paragraphs of their own, whose heading paths extend the lead-in's."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from rag.answer.answerer import AnswerRequest
from rag.answer.extractive import ExtractiveAnswerer, _introduces, _phrase_match, _Piece, asks_quantity
from rag.answer.moods import Mood, MoodBook
from rag.documents import Chunk, SearchHit, SubChunk
from rag.search.embedding import WordLlamaEmbedder
from rag.search.glossary import Glossary

CONCISE = MoodBook().resolve(None)
SECTION = ["§ 273.7 Work provisions.", "(b) Exemptions from work requirements"]


@pytest.fixture(scope="module")
def answerer() -> ExtractiveAnswerer:
    return ExtractiveAnswerer(WordLlamaEmbedder())


def para(sub_id: str, text: str, *labels: str, heading: Sequence[str] = SECTION) -> SubChunk:
    chunk_id = sub_id.rsplit(".", 1)[0]
    return SubChunk(sub_id, chunk_id, int(sub_id.rsplit(".", 1)[1]), "paragraph", text, [*heading, *labels])


def hits_of(*chunks: list[SubChunk]) -> list[SearchHit]:
    return [SearchHit(Chunk(subs[0].chunk_id, "7-cfr-273", i, "7 CFR Part 273", [], subs,
                            text="\n\n".join(s.text for s in subs)), score=1.0 / (i + 1))
            for i, subs in enumerate(chunks)]


def ask(answerer: ExtractiveAnswerer, question: str, hits: list[SearchHit],
        mood: Mood = CONCISE) -> tuple[str, list[str]]:
    draft = answerer.answer(AnswerRequest(question, question, [], hits, mood))
    return draft.text, draft.cited


def sentences_of(text: str) -> list[str]:
    return [s for s in re.split(r"\s?\[\d+\]\s*", text) if s]


EXEMPT = [
    para("r::0.0", "(1) The following persons are exempt from SNAP work requirements:", "(1)"),
    para("r::0.1", "(i) A person younger than 16 years of age or a person 60 years of age or older.", "(1)", "(i)"),
    para("r::0.2", "(ii) A person physically or mentally unfit for employment.", "(1)", "(ii)"),
    para("r::0.3", "(iii) A parent or other household member who is responsible for the care of a dependent child "
                   "under 6 or of an incapacitated person.", "(1)", "(iii)"),
    para("r::0.4", "(iv) A person receiving unemployment compensation.", "(1)", "(iv)"),
]


def test_a_regulation_lead_in_comes_with_the_items_that_answer_each_citing_its_own_paragraph(
        answerer: ExtractiveAnswerer) -> None:
    text, cited = ask(answerer, "who is exempt from the snap work requirements?", hits_of(EXEMPT))
    # Not the lead-in alone ("The following persons are exempt:" answers nothing).
    assert cited[0] == "r::0.0" and len(cited) == 3
    assert set(cited[1:]) <= {"r::0.1", "r::0.2", "r::0.3", "r::0.4"}
    quoted = {s.sub_id: s.text for s in EXEMPT}
    for sentence, sub_id in zip(sentences_of(text), cited, strict=True):  # each sentence from the paragraph it cites
        assert sentence in quoted[sub_id]


def test_a_titled_subparagraph_is_shown_by_its_rule_not_its_title(answerer: ExtractiveAnswerer) -> None:
    subs = [para("t::0.0", "(5) The following requirements apply to simplified reporting systems:", "(5)"),
            para("t::0.1", "(i) Included households. The State agency may include any household certified for at "
                           "least 4 months.", "(5)", "(i) Included households"),
            para("t::0.2", "(ii) Reporting income. A household must report when its monthly gross income exceeds "
                           "the gross monthly income limit.", "(5)", "(ii) Reporting income")]
    text, cited = ask(answerer, "what must a household on simplified reporting report?", hits_of(subs))
    assert cited[0] == "t::0.0" and "t::0.2" in cited
    assert "must report when its monthly gross income exceeds" in text
    assert "Included households." not in sentences_of(text) and "(ii) Reporting income." not in sentences_of(text)


def test_a_question_asking_for_a_quantity_is_answered_by_the_paragraph_that_states_one(
        answerer: ExtractiveAnswerer, monkeypatch: pytest.MonkeyPatch) -> None:
    heading = ["§ 273.24 Time limit for able-bodied adults."]
    subs = [para("q::0.0", "(i) Working 20 hours per week, averaged monthly, means 80 hours a month.",
                 "(a) Definitions", "(1)", "(i)", heading=heading),
            para("q::0.1", "(8) The State agency shall inform each ABAWD of the work requirement and the time limit "
                           "in writing.", "(b) General rule", "(8)", heading=heading)]
    question = "how many hrs a week does an ABAWD have to work to keep snap"
    one_sentence = Mood("short", "", "", max_words=16)  # room for one sentence only
    text, cited = ask(answerer, question, hits_of(subs), one_sentence)
    assert cited == ["q::0.0"] and text.startswith("(i) Working 20 hours per week")
    monkeypatch.setattr("rag.answer.extractive.QUANTITY_WEIGHT", 0.0)  # without it, the paragraph naming the topic wins
    monkeypatch.setattr("rag.answer.extractive.SECOND_PASSAGE", 1.01)  # (alone: it would join as a close second)
    monkeypatch.setattr("rag.answer.extractive.PARAGRAPH_PRIOR", 0.0)  # the paragraph ranking also prefers the amount
    _, cited = ask(answerer, question, hits_of(subs), one_sentence)
    assert cited == ["q::0.1"]
    # A question that asks for no quantity is not steered to amounts.
    monkeypatch.undo()
    _, cited = ask(answerer, "does the state have to tell each ABAWD about the work requirement in writing?",
                   hits_of(subs), one_sentence)
    assert cited == ["q::0.1"]


LONG_RULE = ("(ii) A student enrolled at least half-time in an institution of higher education is eligible to "
             "participate in SNAP if the student is employed for a minimum of 20 hours per week and is paid for such "
             "employment or, if self-employed, is employed for a minimum of 20 hours per week and receives weekly "
             "earnings at least equal to the Federal minimum wage multiplied by 20 hours.")
LONG_NEIGHBOUR = ("(iii) A student enrolled at least half-time in an institution of higher education is eligible to "
                  "participate in SNAP if the student participates in a State or federally financed work study "
                  "program during the regular school year, as long as the student is approved for work study at "
                  "the time of application for SNAP and the school term has begun.")


QUESTION_BOTH = "half-time student works 20 hrs a week or does work study, can they get snap?"


def test_a_close_second_paragraph_gets_room_in_the_answer_with_its_own_citation(
        answerer: ExtractiveAnswerer) -> None:
    heading = ["§ 273.5 Students."]
    hits = hits_of([para("s::0.0", LONG_RULE, "(b) Exemptions", "(5)", heading=heading)],
                   [para("s::1.0", LONG_NEIGHBOUR, "(b) Exemptions", "(7)", heading=heading)])
    text, cited = ask(answerer, QUESTION_BOTH, hits)
    # Each sentence alone is longer than half the answer: both are trimmed so that both paragraphs are cited,
    # the best first (here the second hit's), each sentence from the paragraph it cites.
    assert cited == ["s::1.0", "s::0.0"]
    first, second = sentences_of(text)
    assert first.endswith("…") and LONG_NEIGHBOUR.startswith(first.rstrip("…"))
    assert second.endswith("…") and LONG_RULE.startswith(second.rstrip("…"))
    assert len(re.sub(r"\s?\[\d+\]", "", text).split()) <= CONCISE.max_words


def test_a_sentence_after_a_trimmed_one_starts_a_line_so_the_rail_checks_it_against_its_own_paragraph(
        answerer: ExtractiveAnswerer) -> None:
    from rag.cite.rail import check
    heading = ["§ 273.5 Students."]
    hits = hits_of([para("s::0.0", LONG_RULE, "(b) Exemptions", "(5)", heading=heading)],
                   [para("s::1.0", LONG_NEIGHBOUR, "(b) Exemptions", "(7)", heading=heading)])
    draft = answerer.answer(AnswerRequest(QUESTION_BOTH, QUESTION_BOTH, [], hits, CONCISE))
    # "…" is no sentence end for the rail: on one line, "… [1] (ii) A student … 20 hours …" would be read as one
    # sentence, and a number stated after the "…" checked against the first paragraph as well.
    first, second = draft.text.split("\n")
    assert first.endswith("… [1]") and second.endswith("… [2]")
    checked = check(draft, hits)
    assert checked.unsupported == [] and [c.sub_id for c in checked.citations] == ["s::1.0", "s::0.0"]


@pytest.mark.parametrize("question", ["what ages does the abawd rule apply to", "how old do you have to be",
                                      "what amount can they take out", "whats the max benefit", "how many days",
                                      "is there a cap on the shelter deduction", "whats the deadline",
                                      "how long does the time limit apply"])
def test_questions_asking_for_a_quantity(question: str) -> None:
    assert asks_quantity(question)


@pytest.mark.parametrize("question", ["who is exempt from work rules", "can she get snap", "how do i apply",
                                      "his doctor says he cant work, does the 3 month limit still apply?",
                                      "does the asset limit apply to her"])
def test_questions_asking_for_no_quantity(question: str) -> None:
    assert not asks_quantity(question)


def test_an_answer_does_not_end_on_a_lead_in_whose_items_it_does_not_show(answerer: ExtractiveAnswerer) -> None:
    # The best sentence's neighbour in its paragraph introduces a list it does not hold (the procedures are
    # paragraphs the answer has no room for): "… shall use the following procedures:" would end the answer on ":".
    heading = ["§ 273.2 Office operations and application processing.", "(f) Verification"]
    immigration = [para("v::0.0", "(10) Households must submit documentation of the immigration status of each "
                                  "alien applying for benefits so that the State agency can verify it. When using "
                                  "SAVE to verify immigration status, State agencies shall use the following "
                                  "procedures:", "(10)", heading=heading)]
    text, _ = ask(answerer, "what papers does she need to show for her immigration status", hits_of(immigration))
    assert "documentation of the immigration status" in text
    assert not text.rstrip(" []0123456789").endswith(":"), text


def test_whether_a_limit_applies_is_answered_by_the_exception_not_by_a_figure(answerer: ExtractiveAnswerer) -> None:
    # "does the 3 month limit still apply?" asks whether the rule applies: the medical exemption answers it (the
    # glossary reads "cant work" as "unfit for employment"), not a sentence that merely states an age.
    answerer = ExtractiveAnswerer(answerer.embedder, glossary=Glossary())
    heading = ["§ 273.24 Time limit for able-bodied adults.", "(c) Exceptions"]
    exceptions = [
        para("t::0.1", "(2) Determined by the State agency to be medically certified as physically or mentally "
                       "unfit for employment.", "(2)", heading=heading),
        para("t::0.2", "(9) An individual who is 24 years of age or younger and who was in foster care on the date "
                       "of attaining 18 years of age.", "(9)", heading=heading),
    ]
    text, cited = ask(answerer, "abawd client has a bad back and his doctor says he cant work, does the 3 month "
                                "limit still apply?", hits_of(exceptions))
    assert cited[0] == "t::0.1", text


def test_a_lead_in_announcing_the_following_items_comes_with_the_one_that_answers(
        answerer: ExtractiveAnswerer) -> None:
    # Not every lead-in ends on ":" ("… must be included in the same household, unless otherwise specified.").
    heading = ["§ 273.1 Household concept.", "(b) Special household requirements"]
    combinations = [
        para("h::0.0", "(1) Required household combinations. The following individuals who live with others must be "
                       "considered as customarily purchasing food and preparing meals with the others, and thus must "
                       "be included in the same household, unless otherwise specified.", "(1)", heading=heading),
        para("h::0.1", "(i) Spouses;", "(1)", "(i)", heading=heading),
        para("h::0.2", "(ii) A person under 22 years of age who is living with his or her natural or adoptive "
                       "parent(s) or step-parent(s); and", "(1)", "(ii)", heading=heading),
    ]
    # The item that answers is quoted after the lead-in it continues, each citing its own paragraph.
    text, cited = ask(answerer, "must a 21 year old living with her parents be in the same household",
                      hits_of(combinations))
    assert cited[:2] == ["h::0.0", "h::0.2"], text
    assert text.index("The following individuals") < text.index("under 22 years of age")


@pytest.mark.parametrize(("sentence", "introduces"), [
    ("The following individuals must be included in the same household, unless otherwise specified.", True),
    ("Benefits shall be calculated as follows.", True),
    ("The following persons are exempt:", True),
    ("Benefits are issued in the following month.", False),
    ("The household reapplies the following day.", False),
])
def test_what_introduces_a_list(sentence: str, introduces: bool) -> None:
    sub = para("x::0.0", sentence, "(1)")
    assert _introduces(_Piece(sentence, sub, 0, 0)) is introduces


@pytest.mark.parametrize(("question", "heading", "matches"), [
    ("Who can get WIC?", "Who can get WIC", True),  # a question-word pair
    ("What does WIC provide?", "What WIC provides", True),  # every topic word, "provide" included
    ("does the interview have to be in person", "(e) Interviews", False),  # one of three
    ("What is WIC?", "WIC", False),  # one topic word says too little
])
def test_a_section_titled_by_the_question(question: str, heading: str, matches: bool) -> None:
    assert _phrase_match(question, ["Page", heading]) == (1.0 if matches else 0.0)
