"""The extractive answer reads a question's glossary phrases in the policy's words: a sentence that says "lawful
permanent resident" holds what "green card" asks, so the answer opens with it rather than with a sentence that
merely repeats the navigator's words ("card")."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.answer.answerer import AnswerRequest
from rag.answer.extractive import ExtractiveAnswerer, _Piece, _policy_phrases
from rag.answer.moods import MoodBook
from rag.documents import Chunk, SearchHit, SubChunk
from rag.search.embedding import WordLlamaEmbedder
from rag.search.glossary import Glossary

CONCISE = MoodBook().resolve(None)
HEADING = ["§ 273.4 Citizenship and alien status."]
QUESTION = "her husband has a green card, can he get snap?"
# Repeats the navigator's word ("card"); says nothing about who is eligible.
REPEATS = "(1) Cards. Each household is given a card, and a new card if the card is lost."
# Answers in the regulation's words, none of them the navigator's.
ANSWERS = ("(2) Eligible aliens. A lawful permanent resident with 40 qualifying quarters of work is eligible to "
           "participate.")


def hits() -> list[SearchHit]:
    subs = [SubChunk("c::0.0", "c::0", 0, "paragraph", REPEATS, [*HEADING, "(1) Cards"]),
            SubChunk("c::0.1", "c::0", 1, "paragraph", ANSWERS, [*HEADING, "(2) Eligible aliens"])]
    chunk = Chunk("c::0", "7-cfr-273", 0, "7 CFR Part 273", HEADING, subs, text="\n\n".join(s.text for s in subs))
    return [SearchHit(chunk, 1.0, paragraph_ranks={"c::0.1": 0, "c::0.0": 1})]


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture(autouse=True)
def one_passage(monkeypatch: pytest.MonkeyPatch) -> None:
    """No second passage joins: the test is about which paragraph the answer opens with."""
    monkeypatch.setattr("rag.answer.extractive.SECOND_PASSAGE", 1.01)
    monkeypatch.setattr("rag.answer.extractive.RANKED_SECOND", 0)


def opening(answerer: ExtractiveAnswerer) -> str:
    return answerer.answer(AnswerRequest(QUESTION, QUESTION, [], hits(), CONCISE)).cited[0]


def test_a_sentence_in_the_policys_words_holds_the_navigators_phrase(embedder: WordLlamaEmbedder,
                                                                     tmp_path: Path) -> None:
    glossary_file = tmp_path / "glossary.toml"
    glossary_file.write_text('bundled = false\n[t]\n"green card" = ["lawful permanent resident"]\n', encoding="utf-8")
    assert opening(ExtractiveAnswerer(embedder, glossary=Glossary(glossary_file))) == "c::0.1"
    # The premise: without the glossary, the sentence that repeats "card" wins.
    assert opening(ExtractiveAnswerer(embedder)) == "c::0.0"



def test_a_sentence_under_a_heading_in_the_policys_words_holds_the_phrase_at_half_weight(
        embedder: WordLlamaEmbedder, tmp_path: Path) -> None:
    # The policy term is only in the paragraph's heading ("(2) Lawful permanent residents"), as a table row's is in
    # its group's title ("(1) Allotment reduction"): the heading still says what the navigator's phrase asks.
    glossary_file = tmp_path / "glossary.toml"
    glossary_file.write_text('bundled = false\n[t]\n"green card" = ["lawful permanent resident"]\n', encoding="utf-8")
    answerer = ExtractiveAnswerer(embedder, glossary=Glossary(glossary_file))
    text = "(2) Eligible with 40 qualifying quarters of work."
    title = [*HEADING, "(2) Lawful permanent residents"]
    titled = _Piece(text, SubChunk("c::0.1", "c::0", 1, "paragraph", text, title), 0, 0)
    untitled = _Piece(text, SubChunk("c::0.2", "c::0", 2, "paragraph", text, [*HEADING, "(2) Others"]), 0, 1)
    in_text = _Piece(f"{text} A lawful permanent resident.",
                     SubChunk("c::0.3", "c::0", 3, "paragraph", text, [*HEADING, "(2) Others"]), 0, 2)
    answerer._score(QUESTION, QUESTION, [titled, untitled, in_text], {},
                    _policy_phrases([Glossary(glossary_file).expand(QUESTION)]))
    assert untitled.overlap < titled.overlap < in_text.overlap  # half of what the sentence's own words earn
