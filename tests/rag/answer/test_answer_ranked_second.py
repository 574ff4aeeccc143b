"""The retrieval's second opinion in the extractive answer: when the answer opens with a paragraph that the
retrieval did not rank first, the retrieval's first one is quoted too, with its own citation (and the other way
round), but only the best-ranked quotable one of its first three, only when its best sentence is not far weaker
and shares the question's words about as well, and only in an answer long enough for two quotes."""

from __future__ import annotations

import re

import pytest

from rag.answer.answerer import AnswerRequest
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import Mood, MoodBook
from rag.documents import Chunk, SearchHit, SubChunk
from rag.search.embedding import WordLlamaEmbedder

CONCISE = MoodBook().resolve(None)  # 60 words
HEADING = ["§ 273.2 Office operations and application processing.", "(c) Filing an application"]
QUESTION = "can she apply today even though she does not have all her paperwork yet?"

# The answerer's own word overlap prefers the paragraph that repeats the question's words (paperwork, apply, today);
# the rule that answers (file with name, address and signature) shares fewer of them.
REPEATS = ("(1) Paperwork. A household that wants to apply today must provide the paperwork the State agency asks "
           "for when it applies.")
ANSWERS = ("(iii) Households must be encouraged to apply the same day they contact the office, without their "
           "paperwork: a household may file with only its name, address and the signature of a responsible member.")
UNRELATED = ("(2) Interviews. Office interviews are held at a time convenient for the household, during normal "
             "office hours.")


def sub(sub_id: str, text: str, *labels: str) -> SubChunk:
    return SubChunk(sub_id, "c::0", int(sub_id.rsplit(".", 1)[1]), "paragraph", text, [*HEADING, *labels])


SUBS = [sub("c::0.0", REPEATS, "(1) Paperwork"), sub("c::0.1", ANSWERS, "(1) Paperwork", "(iii)"),
        sub("c::0.2", UNRELATED, "(2) Interviews")]


def hits(ranks: dict[str, int]) -> list[SearchHit]:
    """One section chunk whose paragraphs the retrieval ranked as given (0 = best)."""
    chunk = Chunk("c::0", "7-cfr-273", 0, "7 CFR Part 273", HEADING, SUBS, text="\n\n".join(s.text for s in SUBS))
    return [SearchHit(chunk, 1.0, paragraph_ranks=ranks)]


@pytest.fixture(scope="module")
def answerer() -> ExtractiveAnswerer:
    return ExtractiveAnswerer(WordLlamaEmbedder())


@pytest.fixture(autouse=True)
def no_close_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """The answerer's own close second (a paragraph scoring >= SECOND_PASSAGE of the best) is turned off: what
    joins here joins on the retrieval's ranking."""
    monkeypatch.setattr("rag.answer.extractive.SECOND_PASSAGE", 1.01)


def cited(answerer: ExtractiveAnswerer, ranks: dict[str, int], mood: Mood = CONCISE) -> tuple[str, list[str]]:
    draft = answerer.answer(AnswerRequest(QUESTION, QUESTION, [], hits(ranks), mood))
    return draft.text, draft.cited


def test_the_retrievals_first_paragraph_is_quoted_with_the_one_the_answer_opens_with(
        answerer: ExtractiveAnswerer) -> None:
    text, ids = cited(answerer, {"c::0.1": 0, "c::0.0": 1, "c::0.2": 2})
    assert ids[0] == "c::0.0"  # the answerer still opens with its own choice
    assert ids == ["c::0.0", "c::0.1"]  # and the retrieval's first paragraph is quoted after it
    quotes = [q for q in re.split(r"\s?\[\d\]\s*", text) if q]
    assert len(quotes) == 2 and quotes[0].rstrip("…") in REPEATS.replace("\n", " ")
    assert quotes[1].rstrip("…") in ANSWERS  # what follows [1] comes from the paragraph [2] cites


def test_only_the_retrievals_first_two_count_and_only_on_the_questions_words(
        answerer: ExtractiveAnswerer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ranked third, the answering paragraph is not added; ranked first, the interviews paragraph shares none of the
    # question's words (what the opening shares, at least RANKED_OVERLAP of it): not added either.
    ranks = {"c::0.2": 0, "c::0.0": 1, "c::0.1": 2}
    _, ids = cited(answerer, ranks)
    assert ids == ["c::0.0"]
    monkeypatch.setattr("rag.answer.extractive.RANKED_FLOOR", 0.0)  # its score alone would not keep it out
    _, ids = cited(answerer, ranks)
    assert ids == ["c::0.0"]
    monkeypatch.setattr("rag.answer.extractive.RANKED_OVERLAP", 0.0)
    _, ids = cited(answerer, ranks)
    assert ids == ["c::0.0", "c::0.2"]


def test_a_far_weaker_paragraph_or_a_short_answer_gets_no_second_quote(
        answerer: ExtractiveAnswerer, monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = {"c::0.1": 0, "c::0.0": 1, "c::0.2": 2}
    _, ids = cited(answerer, ranks, Mood("kids", "", "", max_words=35))  # too short for two quotes
    assert ids == ["c::0.0"]
    monkeypatch.setattr("rag.answer.extractive.RANKED_FLOOR", 2.0)  # it would have to beat the opening twice over
    _, ids = cited(answerer, ranks)
    assert ids == ["c::0.0"]
