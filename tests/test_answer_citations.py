"""The extractive answer on regulation text: which paragraphs it cites, and that what it quotes comes from them.

A regulation nests its rules: "(1) The following persons are exempt:" is followed by (i), (ii) … stored as
paragraphs of their own, whose heading paths extend the lead-in's."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from rag.answering import AnswerRequest
from rag.embedding import WordLlamaEmbedder
from rag.extractive import ExtractiveAnswerer
from rag.models import Chunk, SearchHit, SubChunk
from rag.moods import Mood, MoodBook

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
    monkeypatch.setattr("rag.extractive.QUANTITY_WEIGHT", 0.0)  # without it, the paragraph naming the topic wins
    _, cited = ask(answerer, question, hits_of(subs), one_sentence)
    assert cited == ["q::0.1"]
    # A question that asks for no quantity is not steered to amounts.
    monkeypatch.undo()
    _, cited = ask(answerer, "does the state have to tell each ABAWD about the work requirement in writing?",
                   hits_of(subs), one_sentence)
    assert cited == ["q::0.1"]
