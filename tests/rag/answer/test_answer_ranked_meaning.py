"""The retrieval's first paragraph joins the extractive answer when it says what the question asks in other words
(close in meaning, RANKED_MEANING), not only when it repeats the question's words; but not a paragraph that shares
a word and nothing else, and not at the cost of an opening item's lead-in."""

from __future__ import annotations

import pytest

from rag.answer.answerer import AnswerRequest
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import MoodBook
from rag.documents import Chunk, SearchHit, SubChunk
from rag.search.embedding import WordLlamaEmbedder

CONCISE = MoodBook().resolve(None)  # 60 words
HEADING = ["§ 273.2 Office operations and application processing.", "(e) Interviews"]
QUESTION = "does the interview have to be in person or can they do it by phone?"

# The answerer opens with the paragraph that shares most of the question's words ("interview", "person"); the
# one that answers "by phone" says "telephone" and shares only "interview".
IN_PERSON = ("The interview must be held in person at the certification office, and a person who misses it must be "
             "offered a second one.")
TELEPHONE = ("A State agency may hold the interview by telephone instead of face to face when the household asks "
             "for that.")
OFFICE_HOURS = "Offices must stay open during normal business hours and post them in each office."
LEAD_IN = "The following households must be interviewed:"


def sub(i: int, text: str, *labels: str) -> SubChunk:
    return SubChunk(f"c::0.{i}", "c::0", i, "paragraph", text, [*HEADING, *labels])


def hits(subs: list[SubChunk], ranks: dict[str, int]) -> list[SearchHit]:
    """One section chunk whose paragraphs the retrieval ranked as given (0 = best)."""
    chunk = Chunk("c::0", "7-cfr-273", 0, "7 CFR Part 273", HEADING, subs, text="\n\n".join(s.text for s in subs))
    return [SearchHit(chunk, 1.0, paragraph_ranks=ranks)]


@pytest.fixture(scope="module")
def answerer() -> ExtractiveAnswerer:
    return ExtractiveAnswerer(WordLlamaEmbedder())


@pytest.fixture(autouse=True)
def no_close_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answerer's own close second is turned off: what joins here joins on the retrieval's ranking."""
    monkeypatch.setattr("rag.answer.extractive.SECOND_PASSAGE", 1.01)


PARAGRAPHS = [sub(0, IN_PERSON, "(1)"), sub(1, TELEPHONE, "(2)"), sub(2, OFFICE_HOURS, "(3)")]


def test_the_retrievals_first_paragraph_joins_when_it_answers_in_other_words(
        answerer: ExtractiveAnswerer, monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = {"c::0.1": 0, "c::0.0": 1, "c::0.2": 2}
    draft = answerer.answer(AnswerRequest(QUESTION, QUESTION, [], hits(PARAGRAPHS, ranks), CONCISE))
    assert draft.cited == ["c::0.0", "c::0.1"]  # opens with its own choice, then the telephone rule
    assert "telephone" in draft.text and draft.text.index("[1]") < draft.text.index("telephone")
    monkeypatch.setattr("rag.answer.extractive.RANKED_MEANING", 10.0)  # on shared words alone it stays out
    draft = answerer.answer(AnswerRequest(QUESTION, QUESTION, [], hits(PARAGRAPHS, ranks), CONCISE))
    assert draft.cited == ["c::0.0"]


def test_a_paragraph_far_in_meaning_does_not_join_however_it_is_ranked(answerer: ExtractiveAnswerer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = {"c::0.2": 0, "c::0.0": 1, "c::0.1": 2}  # office hours ranked first: nothing in common but the office
    draft = answerer.answer(AnswerRequest(QUESTION, QUESTION, [], hits(PARAGRAPHS, ranks), CONCISE))
    assert draft.cited == ["c::0.0"]
    monkeypatch.setattr("rag.answer.extractive.RANKED_MEANING", 0.0)  # the meaning test is what keeps it out
    draft = answerer.answer(AnswerRequest(QUESTION, QUESTION, [], hits(PARAGRAPHS, ranks), CONCISE))
    assert draft.cited == ["c::0.0", "c::0.2"]


def test_an_opening_item_keeps_its_lead_in_rather_than_take_a_paragraph_close_in_meaning(
        answerer: ExtractiveAnswerer) -> None:
    # The in-person rule is an item under a lead-in paragraph ((e)(1) under (e)): the lead-in is quoted with it,
    # and the telephone paragraph, which would join on its meaning alone, does not take that room.
    subs = [sub(0, LEAD_IN), sub(1, IN_PERSON, "(1)"), sub(2, TELEPHONE, "(2)")]
    ranks = {"c::0.2": 0, "c::0.1": 1, "c::0.0": 2}
    draft = answerer.answer(AnswerRequest(QUESTION, QUESTION, [], hits(subs, ranks), CONCISE))
    assert draft.cited == ["c::0.0", "c::0.1"]
    assert draft.text.startswith(LEAD_IN)
