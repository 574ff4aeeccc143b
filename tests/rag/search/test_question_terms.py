"""Which words of a navigator's question are its topic: not the words of how it is typed mid-call."""

from __future__ import annotations

import pytest

from rag.answer.evidence import coverage
from rag.documents import Chunk, SearchHit, SubChunk
from rag.search.terms import question_terms


@pytest.mark.parametrize(("typed", "topic"), [
    # A negated verb is no topic, with or without its apostrophe ("doesn't" used to leave "doesn", "won't" "won").
    ("she doesn't have her paperwork and he won't sign", ["paperwork", "sign"]),
    ("she doesnt have her paperwork and he cant sign", ["paperwork", "sign"]),
    # A contraction is its first word: a pronoun goes, a name stays.
    ("hes on strike, what's SNAP's rule", ["strike", "snap", "rule"]),
    ("client just had a baby bc her sister moved out tho", ["baby", "sister", "moved"]),
    ("this guy pays rent for his room", ["pays", "rent", "room"]),
    # "cl" is a caseworker's "client"; "gets" is "get" (session 19: answerable refused 4 fewer, on sets typing "cl")
    ("cl gets ssi and is going into rehab", ["ssi", "going", "rehab"]),
    ("diff q - pt says the worker told her 2 wks ago shes cut off rn", ["worker", "2", "wks", "cut"]),
    # "what happens" asks what the rule does; "happen" is not what the rule is about
    ("she won $6,000 on a scratch off, whats going to happen with her snap", ["won", "6", "000", "scratch", "going",
                                                                              "snap"]),
])
def test_how_a_question_is_typed_is_not_its_topic(typed: str, topic: list[str]) -> None:
    assert question_terms(typed) == topic


@pytest.mark.parametrize("word", ["ill", "id", "shed", "wont", "right", "still", "yet"])
def test_words_of_their_own_stay(word: str) -> None:
    assert question_terms(f"photo {word} for the interview") == ["photo", word, "interview"]


def test_a_question_of_filler_alone_keeps_its_words() -> None:
    assert question_terms("client dont know") == ["client", "dont", "know"]


def test_the_no_answer_gate_does_not_look_for_the_way_a_question_is_typed() -> None:
    text = "A household member on strike is not eligible unless the household was eligible before the strike."
    sub = SubChunk("c::0.0", "c::0", 0, "paragraph", text, ["§ 273.1 Household concept."])
    section = SearchHit(Chunk("c::0", "d", 0, "7 CFR 273", sub.heading_path, [sub], text=text), 1.0)
    # Three of the four topic words are there ("lose" is not); "client", "hes" and "doesnt" used to count as three
    # more words the section lacks (3 of 7).
    assert coverage("client: hes on strike, doesnt the household lose eligibility?", [section]) == 0.75
