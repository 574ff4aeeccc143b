"""The citation rail: only retrieved paragraphs are cited, quotes are the stored text, markers follow the
citations; and the deep links that jump to the quote."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from urllib.parse import unquote

import pytest

from rag.answer.answerer import Answerer, AnswerRequest
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import MoodBook
from rag.answer.rewrite import Exchange, HeuristicRewriter
from rag.cite.rail import Citation, Draft, check, link_to_quote
from rag.documents import BlockKind, Chunk, SearchHit, SubChunk
from rag.engine import Engine
from rag.search.embedding import WordLlamaEmbedder
from rag.search.glossary import Glossary

URL = "https://www.fns.usda.gov/snap/students"
EXEMPT = "A student enrolled at least half-time can still get SNAP if one of these applies:"
ITEMS = "- works at least 20 hours a week for pay\n- takes part in work study"
RULE = "Most college students cannot get SNAP unless they meet an exemption."
WIC = "WIC serves pregnant women, infants and children under five."


def sub(sub_id: str, text: str, kind: BlockKind = "paragraph", heading: Sequence[str] = (),
        page: int | None = None) -> SubChunk:
    return SubChunk(sub_id, sub_id.rsplit(".", 1)[0], int(sub_id.rsplit(".", 1)[1]), kind, text, list(heading), page)


def hit(chunk_id: str, subs: list[SubChunk], title: str = "SNAP for college students", url: str | None = URL,
        heading: Sequence[str] = ()) -> SearchHit:
    chunk = Chunk(chunk_id, chunk_id.split("::")[0], 0, title, list(heading), subs,
                  text="\n\n".join(s.text for s in subs), url=url)
    return SearchHit(chunk, score=1.0)


def student_hits() -> list[SearchHit]:
    return [
        hit("students::0", [sub("students::0.0", RULE)]),
        hit("students::1", [sub("students::1.0", EXEMPT, heading=["Exemptions"]),
                            sub("students::1.1", ITEMS, "list", heading=["Exemptions"])], heading=["Exemptions"]),
    ]


# --- check(): the rail itself -------------------------------------------------------------------------------------

def test_valid_citations_quote_the_stored_paragraph() -> None:
    checked = check(Draft("Students need an exemption. [1] Work of 20 hours counts. [2]",
                          ["students::0.0", "students::1.1"]), student_hits())
    assert checked.ok and checked.dropped == []
    assert checked.text == "Students need an exemption. [1] Work of 20 hours counts. [2]"
    first, second = checked.citations
    assert (first.number, first.sub_id, first.quote) == (1, "students::0.0", RULE)
    assert (second.number, second.sub_id, second.quote) == (2, "students::1.1", ITEMS)
    assert second.doc_id == "students" and second.chunk_id == "students::1"
    assert second.title == "SNAP for college students" and second.heading_path == ["Exemptions"]
    assert second.url is not None and second.url.startswith(URL + "#:~:text=")


def test_unknown_sub_chunk_is_dropped_and_markers_renumbered() -> None:
    draft = Draft("Rule. [1] Made up. [2] Exemptions. [3]", ["students::0.0", "students::9.9", "students::1.0"])
    checked = check(draft, student_hits())
    assert [c.sub_id for c in checked.citations] == ["students::0.0", "students::1.0"]
    assert [c.number for c in checked.citations] == [1, 2]
    assert checked.text == "Rule. [1] Made up. Exemptions. [2]"
    assert checked.dropped == ["students::9.9: not among the retrieved paragraphs"]


def test_a_paragraph_not_retrieved_for_this_question_is_not_citable() -> None:
    # The WIC paragraph exists (in another hit list), but was not retrieved now.
    checked = check(Draft("WIC serves infants. [1]", ["wic::0.0"]), student_hits())
    assert not checked.ok and checked.citations == []
    assert checked.text == "WIC serves infants."


def test_misquoted_citation_is_dropped() -> None:
    draft = Draft("Students can always get SNAP. [1] Rule. [2]", ["students::0.0", "students::0.0"],
                  claimed_quotes={"students::0.0": "All college students can get SNAP."})
    checked = check(draft, student_hits())
    assert not checked.ok
    assert checked.citations == [] and checked.text == "Students can always get SNAP. Rule."
    assert checked.dropped == ["students::0.0: the quoted text is not in the source"] * 2


def test_claimed_quote_may_differ_in_spacing_and_case_but_the_shown_quote_is_the_stored_text() -> None:
    claimed = "  most COLLEGE students\n cannot get   SNAP "
    checked = check(Draft("Rule. [1]", ["students::0.0"], claimed_quotes={"students::0.0": claimed}), student_hits())
    assert checked.ok
    assert checked.citations[0].quote == RULE


def test_duplicate_ids_collapse_into_one_citation() -> None:
    draft = Draft("A. [1] B. [2] C. [3]", ["students::1.1", "students::0.0", "students::1.1"])
    checked = check(draft, student_hits())
    assert [c.sub_id for c in checked.citations] == ["students::1.1", "students::0.0"]
    assert checked.text == "A. [1] B. [2] C. [1]"


def test_marker_without_a_citation_is_removed_and_markers_name_the_cited_paragraph() -> None:
    draft = Draft("First. [2] Second. [1] Stray. [7] Zero. [0]", ["students::0.0", "students::1.0"])
    checked = check(draft, student_hits())
    # Citations are numbered in the order the text first uses them; each marker keeps pointing at the paragraph
    # it named.
    assert checked.text == "First. [1] Second. [2] Stray. Zero."
    assert {c.number: c.sub_id for c in checked.citations} == {1: "students::1.0", 2: "students::0.0"}
    # A cited paragraph the text never marks is still listed, after the ones it does.
    unmarked = check(Draft("Only this. [2]", ["students::0.0", "students::1.0"]), student_hits())
    assert [c.sub_id for c in unmarked.citations] == ["students::1.0", "students::0.0"]
    assert unmarked.text == "Only this. [1]"


def test_an_empty_claimed_quote_is_a_misquote() -> None:
    checked = check(Draft("Rule. [1]", ["students::0.0"], claimed_quotes={"students::0.0": "  "}), student_hits())
    assert not checked.ok and "not in the source" in checked.dropped[0]


def test_nothing_valid_or_no_text_is_not_an_answer() -> None:
    assert not check(Draft("Made up. [1]", ["nowhere::0.0"]), student_hits()).ok
    assert not check(Draft("", ["students::0.0"]), student_hits()).ok
    assert not check(Draft("Uncited text.", []), student_hits()).ok
    assert not check(Draft("Rule. [1]", ["students::0.0"]), []).ok


# --- link_to_quote(): jump to the quote -----------------------------------------------------------------------------

def test_web_page_link_has_a_text_fragment_of_the_first_words() -> None:
    short = sub("d::0.0", "SNAP-Ed, the nutrition education program.")
    link = link_to_quote("https://example.gov/snap", short)
    assert link == "https://example.gov/snap#:~:text=SNAP%2DEd%2C%20the%20nutrition%20education%20program."
    long = sub("d::0.1", "The student rule is an extra test, so a student who meets an exemption must still pass.")
    link = link_to_quote("https://example.gov/snap", long)
    assert link is not None
    start, end = link.split("#:~:text=")[1].split(",")
    # The first and last four words of the paragraph: a start,end range the browser highlights.
    assert unquote(start) == "The student rule is" and unquote(end) == "exemption must still pass."
    assert link.count(",") == 1  # the directive's own comma; the text's comma ("test,") is not in the range


def test_fragment_encodes_commas_and_dashes_inside_words() -> None:
    text = "Self-employed students, at least 20 hours a week, must earn the federal minimum wage."
    link = link_to_quote("https://example.gov/p", sub("d::0.0", text))
    assert link is not None
    directive = link.split("#:~:text=")[1]
    assert "-" not in directive and directive.count(",") == 1
    start, end = directive.split(",")
    assert unquote(start) == "Self-employed students, at least" and unquote(end) == "the federal minimum wage."


def test_list_fragment_starts_at_the_first_item_without_its_bullet() -> None:
    link = link_to_quote(URL, sub("d::0.0", ITEMS, "list"))
    assert link == URL + "#:~:text=works%20at%20least%2020,a%20week%20for%20pay"
    link = link_to_quote(URL, sub("d::0.1", "1. Apply online\n2. Call us", "list"))
    assert link == URL + "#:~:text=Apply%20online"


def test_pdf_links_to_the_page_and_tables_to_the_plain_page() -> None:
    para = sub("d::0.0", "Students need an exemption.", page=12)
    assert link_to_quote("https://example.gov/rules.pdf", para) == "https://example.gov/rules.pdf#page=12"
    assert link_to_quote("https://example.gov/rules.PDF#page=3", para) == "https://example.gov/rules.PDF#page=12"
    assert link_to_quote("https://example.gov/rules.pdf", sub("d::0.1", "No page.")) == \
        "https://example.gov/rules.pdf"
    table = sub("d::0.2", "| size | limit |\n| 1 | $1,632 |", "table")
    assert link_to_quote("https://example.gov/limits", table) == "https://example.gov/limits"


def test_existing_anchor_gets_the_directive_appended() -> None:
    link = link_to_quote("https://example.gov/snap#students", sub("d::0.0", "Students need an exemption."))
    assert link == "https://example.gov/snap#students:~:text=Students%20need%20an%20exemption."


def test_no_url_or_a_local_file_is_left_as_is() -> None:
    para = sub("d::0.0", "Students need an exemption.")
    assert link_to_quote(None, para) is None
    assert link_to_quote("", para) is None
    assert link_to_quote("/srv/kb/students.md", para) == "/srv/kb/students.md"
    assert link_to_quote(URL, sub("d::0.1", "   ")) == URL


# --- the rail inside the engine, whatever the answerer says ---------------------------------------------------------

class StubRetriever:
    """Returns fixed hits, so the test decides exactly what was retrieved."""

    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.queries: list[str] = []
        self.follow_ups: list[str] = []  # the follow-up's own words, "" for a question read alone
        self.glossary: Glossary | None = None  # as a Retriever without a glossary file

    def search(self, query: str, k: int = 5, tags: list[str] | None = None,
               groups: list[str] | None = None, follow_up: str = "") -> list[SearchHit]:
        self.queries.append(query)
        self.follow_ups.append(follow_up)
        return self.hits[:k]


@dataclass
class ScriptedAnswerer:
    """An `Answerer` that returns a fixed draft, like a language model that may cite wrongly or misquote."""

    draft: Draft
    calls: list[tuple[str, list[str], str]] = field(default_factory=list)
    requests: list[AnswerRequest] = field(default_factory=list)

    def answer(self, request: AnswerRequest) -> Draft:
        self.requests.append(request)
        self.calls.append((request.standalone, [h.chunk.chunk_id for h in request.hits], request.mood.name))
        return self.draft


def engine_with(draft: Draft, hits: list[SearchHit] | None = None,
                top_k: int = 5) -> tuple[Engine, ScriptedAnswerer]:
    answerer = ScriptedAnswerer(draft)
    scripted: Answerer = answerer  # it satisfies the protocol
    retriever = StubRetriever(student_hits() if hits is None else hits)
    return Engine(retriever, HeuristicRewriter(), scripted, top_k=top_k), answerer  # type: ignore[arg-type]


def queries(engine: Engine) -> list[str]:
    assert isinstance(engine.retriever, StubRetriever)
    return engine.retriever.queries


QUESTION = "Can college students get SNAP?"
MOOD = MoodBook().resolve(None)


def test_engine_corrects_an_answer_citing_an_unknown_sub_chunk() -> None:
    engine, answerer = engine_with(Draft("Rule. [1] Invented. [2] Work counts. [3]",
                                         ["students::0.0", "students::7.7", "students::1.1"]))
    outcome = engine.answer(QUESTION, [], MOOD)
    assert answerer.calls == [(QUESTION, ["students::0", "students::1"], "concise")]
    assert outcome.kind == "answer"
    assert outcome.text == "Rule. [1] Invented. Work counts. [2]"
    assert [(c.number, c.sub_id, c.quote) for c in outcome.citations] == [(1, "students::0.0", RULE),
                                                                         (2, "students::1.1", ITEMS)]


def test_engine_turns_an_answer_with_no_valid_citation_into_a_no_answer() -> None:
    engine, answerer = engine_with(Draft("Everyone qualifies. [1] [2]", ["students::7.7", "wic::0.0"]))
    outcome = engine.answer(QUESTION, [], MOOD)
    assert answerer.calls
    assert outcome.kind == "no_answer" and outcome.citations == []
    assert "Everyone qualifies" not in outcome.text
    assert outcome.text.startswith("I couldn't find this in the knowledge base.")
    assert "SNAP for college students" in outcome.text  # the closest topics are offered


def test_engine_gives_the_answerer_the_question_as_asked_the_standalone_one_and_the_history() -> None:
    engine, answerer = engine_with(Draft("Work counts. [1]", ["students::1.1"]))
    history = [Exchange(QUESTION, "Only with an exemption. [1]")]
    outcome = engine.answer("what if they work 20 hours a week?", history, MOOD)
    [request] = answerer.requests
    assert request.question == "what if they work 20 hours a week?"
    assert request.standalone == outcome.standalone == f"{QUESTION} what if they work 20 hours a week?"
    assert list(request.history) == history and request.mood == MOOD
    assert queries(engine) == [f"{outcome.standalone}\nOnly with an exemption. [1]"]  # with the last answer
    # its own words rank the paragraphs too (rag/search/retrieve.py FOLLOW_UP_WEIGHT); a question read alone has none
    assert isinstance(engine.retriever, StubRetriever)
    assert engine.retriever.follow_ups == ["what if they work 20 hours a week?"]
    engine.answer("new question - how do I apply for WIC?", history, MOOD)
    assert engine.retriever.follow_ups[-1] == ""


def test_engine_tells_the_answerer_and_the_ranking_what_a_follow_up_has_already_read() -> None:
    # The previous answer quoted students::0.0: for a follow-up it moves down the paragraph ranking and is named to
    # the answerer as read (rag/search/paragraphs.py read_later). A question on a new topic reads nothing as seen.
    ranked = [replace(h, paragraph_ranks={s.sub_id: n for n, s in enumerate(h.chunk.subchunks, start=2 * i)})
              for i, h in enumerate(student_hits())]
    engine, answerer = engine_with(Draft("Work counts. [1]", ["students::1.1"]), hits=ranked)
    history = [Exchange(QUESTION, "Only with an exemption. [1]", QUESTION, ("students::0.0",))]
    engine.answer("what if they work 20 hours a week?", history, MOOD)
    [request] = answerer.requests
    assert request.already_read == frozenset({"students::0.0"})
    ranks = {s: r for h in request.hits for s, r in h.paragraph_ranks.items()}
    assert sorted(ranks, key=ranks.__getitem__)[0] != "students::0.0"
    assert ranks["students::0.0"] > {s: r for h in ranked for s, r in h.paragraph_ranks.items()}["students::0.0"]
    engine.answer("new question - how do I apply for WIC?", history, MOOD)
    assert answerer.requests[-1].already_read == frozenset()


def test_the_gate_reads_what_the_best_ten_sections_are_about_and_the_answer_the_best_five() -> None:
    # The best five sections never say the program's name, the next five do: a question asking into SNAP asks about
    # this knowledge base's program. Read from the five alone, it was refused as asking about a program they do not
    # name (rag/answer/answerability.py PROGRAM_SECTIONS).
    plain = [hit(f"rules::{i}", [sub(f"rules::{i}.0", "A student enrolled at least half-time in college cannot apply "
                                                       "unless an exemption applies.")], title="Student rules")
             for i in range(5)]
    named = [hit(f"snap::{i}", [sub(f"snap::{i}.0", "SNAP households apply for SNAP benefits at the SNAP office.")],
                 title="Applying") for i in range(5)]
    engine, answerer = engine_with(Draft("Rule. [1]", ["rules::0.0"]), hits=plain + named)
    outcome = engine.answer("can a college student apply for snap?", [], MOOD)
    [request] = answerer.requests
    assert request.coverage > 0 and outcome.kind == "answer"
    assert [h.chunk.chunk_id for h in request.hits] == [f"rules::{i}" for i in range(5)]  # the answer's top_k
    assert [h.chunk.chunk_id for h in outcome.hits] == [f"rules::{i}" for i in range(5)]
    # Without the next five, the same question has no evidence.
    engine, answerer = engine_with(Draft("Rule. [1]", ["rules::0.0"]), hits=plain)
    engine.answer("can a college student apply for snap?", [], MOOD)
    assert answerer.requests[-1].coverage == 0.0


def test_engine_drops_a_misquoted_citation_and_keeps_the_true_one() -> None:
    engine, _ = engine_with(Draft("Rule. [1] Everyone qualifies. [2]", ["students::0.0", "students::1.0"],
                                  claimed_quotes={"students::1.0": "Every student can get SNAP.",
                                                  "students::0.0": RULE.upper()}))
    outcome = engine.answer(QUESTION, [], MOOD)
    assert outcome.kind == "answer"
    assert outcome.text == "Rule. [1] Everyone qualifies."
    assert [c.quote for c in outcome.citations] == [RULE]


def test_engine_collapses_duplicate_citations() -> None:
    engine, _ = engine_with(Draft("A. [1] B. [2]", ["students::1.0", "students::1.0"]))
    outcome = engine.answer(QUESTION, [], MOOD)
    assert [c.sub_id for c in outcome.citations] == ["students::1.0"]
    assert outcome.text == "A. [1] B. [1]"


def test_engine_only_lets_the_answerer_cite_the_top_k_sections() -> None:
    engine, answerer = engine_with(Draft("Exemptions. [1]", ["students::1.0"]), top_k=1)
    outcome = engine.answer(QUESTION, [], MOOD)
    assert answerer.calls[0][1] == ["students::0"]
    assert outcome.kind == "no_answer"  # students::1 was retrieved below the cut: not citable


def test_engine_tells_the_answerer_how_little_the_sections_cover_the_question() -> None:
    wic = [hit("wic::0", [sub("wic::0.0", WIC)], title="WIC basics")]
    engine, answerer = engine_with(Draft("WIC. [1]", ["wic::0.0"]), hits=wic)
    engine.answer("How much is the Child Tax Credit per child?", [], MOOD)
    assert answerer.requests[0].coverage < 0.6  # a model may still judge; the extractive answerer declines:
    extractive = Engine(StubRetriever(wic), HeuristicRewriter(), ExtractiveAnswerer(WordLlamaEmbedder()))  # type: ignore[arg-type]
    outcome = extractive.answer("How much is the Child Tax Credit per child?", [], MOOD)
    assert outcome.kind == "no_answer" and outcome.closest == ["WIC basics"]


def test_engine_answers_greetings_without_retrieving() -> None:
    engine, answerer = engine_with(Draft("Rule. [1]", ["students::0.0"]))
    outcome = engine.answer("Hello there!", [], MOOD)
    assert outcome.kind == "smalltalk" and outcome.citations == []
    assert answerer.calls == [] and queries(engine) == []


def test_citation_as_dict_round_trips() -> None:
    [citation] = check(Draft("Rule. [1]", ["students::0.0"]), student_hits()).citations
    assert Citation(**citation.as_dict()) == citation


@pytest.mark.parametrize("marker", ["[1]", " [1]", "[01]"])
def test_marker_forms(marker: str) -> None:
    checked = check(Draft(f"Rule.{marker}", ["students::0.0"]), student_hits())
    assert checked.text == "Rule. [1]"
