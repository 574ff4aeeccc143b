"""A follow-up asks for what the previous answer did not say: the paragraphs that answer quoted move down the
paragraph ranking and score lower in the extractive answer, so the answer moves on to the rule not yet shown. Only
for a question read with the thread (a new topic or a thread's first question is unchanged)."""

from __future__ import annotations

import pytest

from rag.answer.answerer import AnswerRequest
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import MoodBook
from rag.answer.rewrite import Exchange, HeuristicRewriter, Rewrite
from rag.documents import Chunk, SearchHit, SubChunk
from rag.engine import already_read
from rag.search.embedding import WordLlamaEmbedder
from rag.search.paragraphs import read_later

CONCISE = MoodBook().resolve(None)
HEADING = ["§ 273.16 Disqualification for intentional Program violation.", "(b) Disqualification penalties"]
FIRST = ("(i) For a period of twelve months for the first intentional Program violation, except as provided "
         "under paragraphs (b)(2) through (b)(5) of this section.")
SECOND = ("(ii) For a period of twenty-four months upon the second occasion of any intentional Program "
          "violation, except as provided under paragraphs (b)(2) through (b)(5) of this section.")
ASKED = "client signed the waiver for an ipv, first time. how long is she disqualified?"
FOLLOW_UP = "and if she does it again?"


def sub(n: int, text: str, label: str) -> SubChunk:
    return SubChunk(f"c::0.{n}", "c::0", n, "paragraph", text, [*HEADING, "(1) Disqualification periods", label])


SUBS = [sub(0, FIRST, "(i)"), sub(1, SECOND, "(ii)")]


def hits(ranks: dict[str, int]) -> list[SearchHit]:
    chunk = Chunk("c::0", "7-cfr-273", 0, "7 CFR Part 273", HEADING, SUBS, text="\n\n".join(s.text for s in SUBS))
    return [SearchHit(chunk, 1.0, paragraph_ranks=ranks)]


def test_read_paragraphs_move_down_the_ranking_by_read_places() -> None:
    ranks = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    chunk = Chunk("c::0", "d", 0, "t", [], [], text="x")
    moved = read_later([SearchHit(chunk, 1.0, paragraph_ranks=ranks)], frozenset({"a"}), places=3)
    assert moved[0].paragraph_ranks == {"b": 0, "c": 1, "d": 2, "a": 3, "e": 4}
    two = read_later([SearchHit(chunk, 1.0, paragraph_ranks=ranks)], frozenset({"a", "b"}), places=3)
    assert sorted(two[0].paragraph_ranks, key=two[0].paragraph_ranks.__getitem__) == ["c", "d", "a", "e", "b"]
    same = [SearchHit(chunk, 1.0, paragraph_ranks=ranks)]
    assert read_later(same, frozenset()) is same and read_later(same, frozenset({"zz"})) is same


def test_only_a_follow_up_counts_the_previous_quotes_as_read() -> None:
    history = [Exchange(ASKED, "For a period of twelve months ... [1]", ASKED, ("c::0.0",))]
    follow = HeuristicRewriter().rewrite(FOLLOW_UP, history)
    assert follow.follows and ASKED in follow.standalone
    assert already_read(follow, history) == frozenset({"c::0.0"})
    assert not HeuristicRewriter().rewrite(ASKED, []).follows  # a thread's first question
    new_topic = HeuristicRewriter().rewrite("new question - how do I apply for Medicaid?", history)
    assert not new_topic.follows and already_read(new_topic, history) == frozenset()
    assert already_read(Rewrite("x", follows=True), []) == frozenset()


@pytest.fixture(scope="module")
def answerer() -> ExtractiveAnswerer:
    return ExtractiveAnswerer(WordLlamaEmbedder())


def test_the_follow_up_answer_moves_on_from_the_paragraph_already_quoted(answerer: ExtractiveAnswerer) -> None:
    # Searched with the thread's words, the first violation's paragraph still ranks first and scores best.
    standalone = f"{ASKED} {FOLLOW_UP}"
    ranks = {"c::0.0": 0, "c::0.1": 1}
    before = answerer.answer(AnswerRequest(FOLLOW_UP, standalone, [], hits(ranks), CONCISE))
    assert before.cited[0] == "c::0.0"
    read = frozenset({"c::0.0"})
    after = answerer.answer(AnswerRequest(FOLLOW_UP, standalone, [], read_later(hits(ranks), read), CONCISE,
                                          already_read=read))
    assert after.cited[0] == "c::0.1" and "twenty-four months" in after.text
