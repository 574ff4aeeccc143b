"""The streamed answer's rail: a sentence is shown only once its citations are checked; a failing first sentence
shows nothing (the no-answer); a later failure stops the stream with only verified text shown."""

from __future__ import annotations

from collections.abc import Iterable

from rag.cite.rail import check
from rag.cite.sentence_rail import RailState, SentenceRail
from rag.documents import Chunk, SearchHit, SubChunk

RULE = "Most college students cannot get SNAP unless they work at least 20 hours a week."
REPORT = "Report a change in income within 10 days of the change."
OTHER = "Call 1-800-555-0100 for help with WIC."


def hits() -> list[SearchHit]:
    def chunk(chunk_id: str, texts: list[str]) -> SearchHit:
        subs = [SubChunk(f"{chunk_id}.{i}", chunk_id, i, "paragraph", t, ["Rules"]) for i, t in enumerate(texts)]
        return SearchHit(Chunk(chunk_id, "snap", 0, "SNAP rules", ["Rules"], subs, text="\n".join(texts)), 1.0)
    return [chunk("snap::0", [RULE]), chunk("snap::1", [REPORT])]


def tokens(text: str, size: int = 3) -> Iterable[str]:
    """The text in small pieces, as a model streams it (markers get cut in the middle)."""
    return [text[i:i + size] for i in range(0, len(text), size)]


def run(text: str, size: int = 3) -> tuple[SentenceRail, list[str]]:
    rail = SentenceRail(hits())
    shown = [out for piece in tokens(text, size) if (out := rail.feed(piece))]
    if last := rail.finish():
        shown.append(last)
    return rail, shown


def test_sentences_are_released_one_by_one_with_markers_numbered_by_first_use() -> None:
    rail, shown = run("Students must work 20 hours a week [snap::0.0]. Report income changes within 10 days "
                      "[snap::1.0]. Both rules apply [snap::0.0].")
    assert shown == ["Students must work 20 hours a week [1]. ", "Report income changes within 10 days [2]. ",
                     "Both rules apply [1]."]
    assert rail.state is RailState.DONE
    checked = check(rail.draft(), hits())
    assert checked.ok and checked.text == rail.shown  # the final message is exactly what was streamed
    assert [c.sub_id for c in checked.citations] == ["snap::0.0", "snap::1.0"]


def test_a_sentence_is_not_released_before_the_next_character_says_it_ended() -> None:
    rail = SentenceRail(hits())
    assert rail.feed("Students need a U.S. [snap::0.0") == ""
    assert rail.feed("] job.") == ""
    assert rail.feed(" Report") == "Students need a U.S. [1] job. "


def test_a_second_sentence_citing_an_unretrieved_paragraph_stops_the_stream() -> None:
    rail, shown = run("Students must work 20 hours a week [snap::0.0]. WIC helps too [wic::9.9]. "
                      "Report changes within 10 days [snap::1.0].")
    assert shown == ["Students must work 20 hours a week [1]. "]
    assert rail.state is RailState.STOPPED and "not retrieved" in rail.failure
    assert check(rail.draft(), hits()).text == "Students must work 20 hours a week [1]."


def test_a_first_sentence_citing_an_unretrieved_paragraph_shows_nothing() -> None:
    rail, shown = run("Call the hotline [wic::9.9]. Students must work 20 hours a week [snap::0.0].")
    assert shown == [] and rail.state is RailState.REFUSED
    assert rail.draft().cited == []


def test_a_claim_the_cited_paragraph_does_not_hold_fails_the_sentence() -> None:
    rail, shown = run("Students must work 20 hours a week [snap::0.0]. Call 1-800-555-0100 [snap::1.0].")
    assert shown == ["Students must work 20 hours a week [1]. "] and rail.state is RailState.STOPPED
    rail, shown = run("Students must work 30 hours a week [snap::0.0]. Report within 10 days [snap::1.0].")
    assert shown == [] and rail.state is RailState.REFUSED and "'30'" in rail.failure


def test_an_unmarked_sentence_waits_for_the_next_marked_one() -> None:
    rail = SentenceRail(hits())
    assert rail.feed("Good question. Students must work 20 hours ") == ""
    assert rail.feed("a week [snap::0.0]. Then") == "Good question. Students must work 20 hours a week [1]. "
    assert rail.finish() == "Then"  # the last unmarked sentence is checked against the previous citations


def test_an_answer_that_cites_nothing_is_refused_without_showing_it() -> None:
    rail, shown = run("I could not find this in the knowledge base.")
    assert shown == [] and rail.state is RailState.REFUSED


def test_list_lines_keep_their_marks_and_numbered_items_are_not_sentences() -> None:
    rail, shown = run("You need:\n1. A job of 20 hours a week [snap::0.0].\n2. To report within 10 days [snap::1.0].")
    assert "".join(shown) == "You need:\n1. A job of 20 hours a week [1].\n2. To report within 10 days [2]."
    assert rail.state is RailState.DONE


def test_ids_as_the_model_writes_them_and_cleaning_are_applied() -> None:
    rail = SentenceRail(hits(), ids={"snap&amp;0": "snap::0.0"}, clean=lambda t: t.replace("&amp;", "&"))
    out = rail.feed("Work &amp; study: 20 hours a week [snap&amp;0]. ") + rail.finish()
    assert out == "Work & study: 20 hours a week [1]. " and rail.state is RailState.DONE


def test_text_cut_off_mid_sentence_is_never_shown() -> None:
    rail = SentenceRail(hits())
    assert rail.feed("Students must work 20 hours a week [snap::0.0]. And then") == \
        "Students must work 20 hours a week [1]. "
    rail.cut_off("connection lost")
    assert rail.finish() == "" and rail.state is RailState.STOPPED
    assert check(rail.draft(), hits()).text == "Students must work 20 hours a week [1]."
