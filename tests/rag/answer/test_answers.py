"""Answers on the demo knowledge base: the engine, the extractive answerer, moods, small talk and the evidence
threshold that turns a loosely related question into an honest no-answer."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.config.settings import Settings
from bot.wiring.runtime import Core, build_engine
from rag.answer.answerer import AnswerRequest
from rag.answer.evidence import coverage, evidence
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.moods import Mood, MoodBook, MoodFileError
from rag.answer.rewrite import Exchange
from rag.answer.smalltalk import smalltalk_reply
from rag.cite.rail import Citation, Draft, check
from rag.documents import BlockKind, Chunk, SearchHit, SubChunk
from rag.engine import Engine, Outcome
from rag.search.sentences import reading_sentences
from tests.conftest import write

STUDENTS = "Can college students get SNAP?"
WORK = "what if they work 20 hours a week?"
STUDENTS_DOC = "demo_kb/snap-students"
MOODS = MoodBook()
CONCISE = MOODS.resolve(None)


@pytest.fixture(scope="module")
def engine(demo: Core) -> Engine:
    return build_engine(demo)


def stored_text(core: Core, citation: Citation) -> str:
    [chunk] = core.store.get_chunks([citation.chunk_id])
    [sub] = [s for s in chunk.subchunks if s.sub_id == citation.sub_id]
    return sub.text


def answer_words(text: str, mood: Mood = CONCISE) -> list[str]:
    """The words of the answer proper: without citation markers, the mood's prefix or its offline note."""
    if mood.offline_note:
        assert text.endswith("\n" + mood.offline_note)
        text = text[: -len(mood.offline_note) - 1]
    if mood.prefix:
        assert text.startswith(mood.prefix + " ")
        text = text[len(mood.prefix) + 1:]
    return re.sub(r"\s?\[\d+\]", "", text).split()


# --- the engine on the demo knowledge base -------------------------------------------------------------------------

def test_students_question_is_answered_briefly_with_a_verbatim_quote(demo: Core, engine: Engine) -> None:
    outcome = engine.answer(STUDENTS, [], CONCISE)
    assert outcome.kind == "answer"
    assert outcome.standalone == STUDENTS
    assert 5 <= len(answer_words(outcome.text)) <= 70
    assert re.search(r"\[[12]\]$", outcome.text)  # the retrieval's first paragraph may be quoted second
    assert outcome.citations and outcome.citations[0].number == 1
    for citation in outcome.citations:
        assert citation.doc_id == STUDENTS_DOC
        assert citation.quote == stored_text(demo, citation)  # the exact stored paragraph, not a paraphrase
        assert citation.title == "SNAP for college students"
        assert citation.url is not None and citation.url.startswith("https://www.fns.usda.gov/snap/students#:~:text=")
    # Extractive: every sentence of the answer is the source's own.
    quotes = " ".join(c.quote for c in outcome.citations)
    for sentence in re.split(r"(?<=[.!?])\s+", re.sub(r"\s?\[\d+\]", "", outcome.text)):
        assert sentence.rstrip("…") in quotes
    assert {"rewrite", "retrieve", "generate", "total"} <= set(outcome.timings_ms)


def test_follow_up_is_answered_from_the_section_on_working_20_hours(demo: Core, engine: Engine) -> None:
    first = engine.answer(STUDENTS, [], CONCISE)
    outcome = engine.answer(WORK, [Exchange(STUDENTS, first.text)], CONCISE)
    assert outcome.kind == "answer"
    assert STUDENTS in outcome.standalone and WORK in outcome.standalone
    assert "20 hours" in outcome.text
    best = outcome.citations[0]
    assert best.doc_id == STUDENTS_DOC
    assert "20 hours" in " > ".join(best.heading_path) or "20 hours" in best.quote
    assert best.quote == stored_text(demo, best)


def test_a_replayed_thread_holds_what_the_bot_would_have_kept(engine: Engine) -> None:
    # For evaluations whose history is the user's turns only (navibot eval on a section set).
    first = engine.answer(STUDENTS, [], CONCISE)
    [kept] = engine.replay(["What is the capital of France?", STUDENTS], CONCISE)  # a no-answer is not kept
    assert kept == Exchange(STUDENTS, first.answer, first.standalone, tuple(c.sub_id for c in first.citations))
    assert kept.cited and engine.replay([STUDENTS], CONCISE, quotes_known=False)[0].cited == ()


@pytest.mark.parametrize(("question", "heading"), [
    ("Who can get WIC?", "Who can get WIC"),
    ("How much is SSI a month?", "How much SSI pays"),
    ("How often do I renew Medicaid?", "How often Medicaid is renewed"),
])
def test_the_question_word_picks_the_section_that_answers_it(engine: Engine, question: str, heading: str) -> None:
    # Every sentence of the page shares the program's name with the question; "who can", "how much" decide.
    outcome = engine.answer(question, [], CONCISE)
    assert outcome.kind == "answer"
    assert outcome.citations[0].heading_path[-1] == heading


@pytest.mark.parametrize(("question", "heading"), [
    # "eligible for snap" said of people (until session 12 read as an item bought with SNAP, and refused)
    ("is a green card holder eligible for snap?", "Which non-citizens can get SNAP"),
    # another program named as the client's situation, not as the program asked into
    ("mom gets TANF, is the household categorically eligible?", "Resource limits"),
])
def test_eligibility_questions_naming_other_programs_or_people_are_answered(engine: Engine, question: str,
                                                                             heading: str) -> None:
    outcome = engine.answer(question, [], CONCISE)
    assert outcome.kind == "answer"
    assert outcome.citations[0].heading_path[-1] == heading


def test_off_topic_question_is_a_no_answer_with_the_closest_topics(engine: Engine) -> None:
    outcome = engine.answer("What is the capital of France?", [], CONCISE)
    assert outcome.kind == "no_answer"
    assert outcome.citations == []
    assert outcome.text.startswith("I couldn't find this in the knowledge base.")
    assert outcome.closest and "The closest topics I found: " + "; ".join(outcome.closest) in outcome.text
    assert all(c in {h.chunk.heading_text for h in outcome.hits} for c in outcome.closest)


def test_greetings_and_thanks_are_small_talk_but_a_greeting_with_a_question_is_a_question(engine: Engine) -> None:
    for text in ("hi", "Hello there!", "good morning", "thanks so much", "Thank you!", "bye"):
        outcome = engine.answer(text, [], CONCISE)
        assert outcome.kind == "smalltalk", text
        assert outcome.text and outcome.citations == [] and outcome.hits == []
    outcome = engine.answer("hi, can students get SNAP?", [], CONCISE)
    assert outcome.kind == "answer"
    assert outcome.citations[0].doc_id == STUDENTS_DOC


@pytest.mark.parametrize("question", [
    STUDENTS,
    "How do I apply for LIHEAP?",
    "What does WIC provide?",
    "What is the income limit for SNAP?",
    "How long does a Medicaid renewal take?",
])
def test_extractive_drafts_pass_the_rail_untouched(engine: Engine, question: str) -> None:
    rewrite, hits = engine.rewrite_and_retrieve(question, [])
    draft = engine.answerer.answer(AnswerRequest(question, rewrite.standalone, [], hits, CONCISE))
    checked = check(draft, hits[: engine.top_k])
    assert checked.ok and checked.dropped == []
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", draft.text)}
    assert markers == set(range(1, len(draft.cited) + 1))  # every cited paragraph is marked, nothing else


def test_an_answer_never_stops_at_a_list_lead_in(engine: Engine) -> None:
    """ "WIC participants receive:" alone says nothing: the list it introduces must come with it."""
    for question in ("What does WIC provide?", "Who can get WIC?"):
        outcome = engine.answer(question, [], CONCISE)
        assert outcome.kind == "answer"
        plain = re.sub(r"\s?\[\d+\]", "", outcome.text).strip()
        assert not plain.endswith(":"), outcome.text
        assert "- " in plain  # at least one item of the list
        assert any(c.quote.startswith("- ") for c in outcome.citations)


# --- moods with the offline answerer ------------------------------------------------------------------------------

def test_emoji_mood_puts_its_prefix_before_the_answer(engine: Engine) -> None:
    emoji = MOODS.moods["emoji"]
    outcome = engine.answer(STUDENTS, [], emoji)
    assert outcome.kind == "answer"
    assert outcome.text.startswith("💡 ")
    assert answer_words(outcome.text, emoji) == answer_words(engine.answer(STUDENTS, [], CONCISE).text)


def test_spanish_mood_answers_in_english_with_an_honest_note(engine: Engine) -> None:
    spanish = MOODS.moods["spanish"]
    outcome = engine.answer(STUDENTS, [], spanish)
    assert outcome.kind == "answer"
    note = outcome.text.split("\n")[-1]
    assert note == spanish.offline_note and "modelo de lenguaje" in note and "inglés" in note
    words = answer_words(outcome.text, spanish)
    assert {"students", "college"} <= {w.lower().strip(".,") for w in words}  # the answer itself is English


@pytest.mark.parametrize("max_words", [12, 20, 35])
def test_a_moods_length_bounds_the_answer(engine: Engine, max_words: int) -> None:
    short = Mood("short", "Short.", "Be short.", max_words=max_words)
    outcome = engine.answer(STUDENTS, [], short)
    assert outcome.kind == "answer" and outcome.citations
    assert len(answer_words(outcome.text, short)) <= max_words
    assert len(answer_words(engine.answer(STUDENTS, [], MOODS.moods["formal"]).text)) > max_words


def test_kids_and_elderly_moods_are_shorter_than_formal(engine: Engine) -> None:
    lengths = {name: len(answer_words(engine.answer(STUDENTS, [], MOODS.moods[name]).text, MOODS.moods[name]))
               for name in ("kids", "elderly", "formal")}
    assert lengths["kids"] <= MOODS.moods["kids"].max_words == 35
    assert lengths["elderly"] <= MOODS.moods["elderly"].max_words == 45
    assert lengths["kids"] < lengths["formal"] <= 80


# --- the extractive answerer on hand-made sections -----------------------------------------------------------------

def sub(sub_id: str, text: str, kind: BlockKind = "paragraph", heading: Sequence[str] = ()) -> SubChunk:
    chunk_id = sub_id.rsplit(".", 1)[0]
    return SubChunk(sub_id, chunk_id, int(sub_id.rsplit(".", 1)[1]), kind, text, list(heading))


def hits_of(*chunks: list[SubChunk], title: str = "SNAP for college students") -> list[SearchHit]:
    return [SearchHit(Chunk(subs[0].chunk_id, "doc", i, title, [], subs, text="\n\n".join(s.text for s in subs)),
                      score=1.0 / (i + 1)) for i, subs in enumerate(chunks)]


def extract(core: Core, question: str, hits: list[SearchHit], mood: Mood = CONCISE) -> tuple[str, list[str]]:
    draft = ExtractiveAnswerer(core.embedder).answer(AnswerRequest(question, question, [], hits, mood))
    return draft.text, draft.cited


def test_a_second_paragraph_that_matches_nearly_as_well_joins_with_its_own_citation(demo: Core) -> None:
    hits = hits_of([sub("c::0.0", "Students who work at least 20 hours a week can get SNAP."),
                    sub("c::0.1", "Students in work study can get SNAP too."),
                    sub("c::0.2", "WIC serves infants and young children.")])
    text, cited = extract(demo, "Can students who work get SNAP?", hits)
    # Which of the two opens also follows the paragraph ranking (PARAGRAPH_PRIOR); both are quoted, each cited.
    assert sorted(cited) == ["c::0.0", "c::0.1"] and "[1]" in text and text.endswith("[2]")
    # A loosely related paragraph stays out.
    assert "WIC" not in text


def test_abbreviations_do_not_end_answer_sentences(demo: Core) -> None:
    para = "SNAP is open to U.S. citizens who meet the rules. Some lawfully present people qualify too."
    hits = hits_of([sub("c::0.0", para)])
    text, _ = extract(demo, "Can U.S. citizens get SNAP?", hits)
    assert text.startswith("SNAP is open to U.S. citizens who meet the rules.")
    assert reading_sentences("It covers Part A. Then Part B. Apply by Oct. 1 each year.") == [
        "It covers Part A.", "Then Part B.", "Apply by Oct. 1 each year."]


def test_one_marker_after_a_run_of_sentences_from_one_paragraph(demo: Core) -> None:
    para = ("Students who work at least 20 hours a week can get SNAP. Work must be paid work. "
            "Unpaid internships do not count toward the 20 hours.")
    hits = hits_of([sub("c::0.0", para)], [sub("c::1.0", "WIC serves infants and young children.")])
    text, cited = extract(demo, "Can students who work 20 hours a week get SNAP?", hits)
    assert cited == ["c::0.0"]
    assert text.count("[1]") == 1 and text.endswith("[1]")
    assert text.startswith("Students who work at least 20 hours a week can get SNAP.")


def test_a_list_item_comes_with_its_lead_in(demo: Core) -> None:
    items = ("A student can still get SNAP if one of these applies:\n- works at least 20 hours a week for pay\n"
             "- takes part in work study\n- cares for a child under age 6")
    hits = hits_of([sub("c::0.0", items, "list", ["Exemptions"])])
    text, cited = extract(demo, "Does work study let a student get SNAP?", hits)
    assert cited == ["c::0.0"]
    assert text.startswith("A student can still get SNAP if one of these applies:")
    assert "- takes part in work study" in text


LEAD = "WIC participants receive:"
PROVIDES = ["- Benefits for specific healthy foods, such as milk, eggs and infant formula.",
            "- Nutrition education and counseling.", "- Breastfeeding support, including peer counselors.",
            "- Referrals to health care, immunizations and social services."]


def lead_and_list() -> list[SearchHit]:
    """As the chunker stores them: the lead-in paragraph and its list are two sub-chunks of one section."""
    return hits_of([sub("w::0.0", "WIC is a nutrition program run by states.", heading=["About"]),
                    sub("w::0.1", LEAD, heading=["What WIC provides"]),
                    sub("w::0.2", "\n".join(PROVIDES), "list", ["What WIC provides"])], title="WIC")


def test_a_lead_in_paragraph_comes_with_the_items_of_the_list_after_it(demo: Core) -> None:
    text, cited = extract(demo, "What do WIC participants receive?", lead_and_list())
    assert cited == ["w::0.1", "w::0.2"]
    assert text == f"{LEAD} [1] " + " ".join(PROVIDES) + " [2]"
    # Fewer words allowed: the items that fit, in order, never the lead-in alone.
    text, cited = extract(demo, "What do WIC participants receive?", lead_and_list(),
                          Mood("tiny", "Tiny.", "Be tiny.", max_words=10))
    assert cited == ["w::0.1", "w::0.2"]
    assert text.startswith(f"{LEAD} [1] - Benefits for specific") and text.endswith("… [2]")
    assert len(re.sub(r"\s?\[\d\]", "", text).split()) <= 10


def test_an_item_from_a_separate_list_comes_with_the_lead_in_paragraph_before_it(demo: Core) -> None:
    text, cited = extract(demo, "Does WIC offer breastfeeding support with peer counselors?", lead_and_list())
    assert cited == ["w::0.1", "w::0.2"]
    assert text.startswith(f"{LEAD} [1] ")
    assert "- Breastfeeding support, including peer counselors." in text and text.endswith("[2]")


def test_a_tables_rows_are_quoted_only_with_their_header(demo: Core) -> None:
    # Without a header row (no |---| under it) the cells do not say what their figures are (rag/answer/table_rows.py).
    table = "| household size | gross monthly limit |\n| 1 | $1,632 |"
    hits = hits_of([sub("c::0.0", table, "table")])
    assert extract(demo, "What is the gross monthly limit for one person?", hits) == ("", [])
    assert extract(demo, "anything", []) == ("", [])
    headed = hits_of([sub("c::0.0", "| household size | gross monthly limit |\n|---|---|\n| 1 | $1,632 |", "table")])
    assert extract(demo, "What is the gross monthly limit for one person?", headed) == (
        "household size 1 gross monthly limit $1,632 [1]", ["c::0.0"])


def test_a_long_sentence_is_trimmed_to_the_moods_length(demo: Core) -> None:
    long = " ".join(["Students"] + ["who work"] * 40 + ["can get SNAP."])
    text, cited = extract(demo, "Can students who work get SNAP?", hits_of([sub("c::0.0", long)]),
                          Mood("tiny", "Tiny.", "Be tiny.", max_words=10))
    assert cited == ["c::0.0"]
    assert text.endswith("… [1]") and len(text.replace(" [1]", "").split()) == 10


# --- small talk ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["hi", "Hello!", "hey there", "good afternoon everyone", "hi navibot"])
def test_greetings(text: str) -> None:
    reply = smalltalk_reply(text)
    assert reply is not None and reply.startswith("Hi!") and "help" in reply


@pytest.mark.parametrize("text", ["thanks", "Thank you so much!", "thx", "great, that's perfect", "cheers"])
def test_thanks(text: str) -> None:
    assert smalltalk_reply(text) == "You're welcome! Ask me anything else about benefits rules whenever you need."


@pytest.mark.parametrize("text", [
    "hi, can students get SNAP?", "thanks, and what about WIC?", "", "   ", "ok", "is it", "SNAP",
    "hi hi hi hi hi hi hi hi hi",  # more than a greeting's worth of words
])
def test_not_small_talk(text: str) -> None:
    assert smalltalk_reply(text) is None


def test_goodbye() -> None:
    assert smalltalk_reply("bye!") == "Goodbye, and good luck with the call!"
    assert smalltalk_reply("Thanks, bye") is not None and "welcome" in (smalltalk_reply("Thanks, bye") or "")


# --- evidence: does what was retrieved cover the question? ---------------------------------------------------------

def test_coverage_counts_title_heading_and_text_words_of_the_top_three_sections() -> None:
    snap = hits_of([sub("a::0.0", "Most students need an exemption.")])[0]
    filler = [hits_of([sub(f"f{i}::0.0", "Unrelated words about heating bills.")], title="LIHEAP")[0]
              for i in range(3)]
    assert coverage("Can college students get SNAP?", [snap]) == pytest.approx(1.0)  # "college", "snap": title
    # One shared word of two is chance ("capital" of France on a page about capital gains): no evidence.
    assert coverage("Can students get WIC?", [snap]) == 0.0
    assert coverage("Can college students get WIC?", [snap]) == pytest.approx(2 / 3)
    assert coverage("Can college students get SNAP?", [*filler, snap]) == 0.0  # only the top three count
    assert coverage("Can college students get SNAP?", []) == 0.0
    assert coverage("what is it?", [snap]) == 0.0  # no topic words at all


def test_evidence_lets_a_follow_up_vouch_for_itself_but_not_a_one_word_one() -> None:
    work = hits_of([sub("w::0.0", "A student who works 20 hours a week meets the work exemption.")],
                   title="Working students")
    standalone = "Can college students in Ohio get SNAP or Medicaid? what if they work 20 hours a week?"
    assert coverage(standalone, work) < 0.6
    assert evidence(WORK, standalone, work) == pytest.approx(1.0)  # its own words are all there
    wic = "Can college students in Ohio get SNAP or Medicaid? and WIC?"
    assert evidence("and WIC?", wic, work) == coverage(wic, work)  # one topic word cannot vouch for itself
    assert evidence(STUDENTS, STUDENTS, work) == coverage(STUDENTS, work)


# --- moods: bundled, extended, broken ------------------------------------------------------------------------------

def test_bundled_moods() -> None:
    assert MOODS.default == "concise"
    assert set(MOODS.names) >= {"concise", "formal", "elderly", "kids", "emoji", "rhymes", "spanish"}
    assert MOODS.get("EMOJI") is MOODS.moods["emoji"] and MOODS.get(" Formal ") is MOODS.moods["formal"]
    assert MOODS.get("pirate") is None and MOODS.get(None) is None
    assert MOODS.resolve("pirate").name == "concise"  # a preference saved before a mood was removed
    for mood in MOODS.moods.values():
        assert mood.description and mood.instructions and 10 <= mood.max_words <= 400


def test_listing_shows_every_mood_with_its_description_and_marks_the_current_one() -> None:
    listing = MOODS.listing("elderly")
    lines = listing.splitlines()
    assert lines[0] == "Current mood: elderly"
    assert f"▸ elderly — {MOODS.moods['elderly'].description}" in lines
    for mood in MOODS.moods.values():
        assert f"{mood.name} — {mood.description}" in listing
    assert sum(line.startswith("▸") for line in lines) == 1
    assert MOODS.listing(None).splitlines()[0] == "Current mood: concise"


def test_an_admin_file_adds_and_replaces_moods(tmp_path: Path) -> None:
    extra = write(tmp_path / "moods.toml", """
default = "pirate"

[moods.pirate]
description = "Arr."
instructions = "Talk like a pirate."
max_words = 30
prefix = "🏴‍☠️"

[moods.Formal]
description = "Stiffer than ever."
instructions = "Be very formal."
""")
    book = MoodBook(extra)
    assert book.default == "pirate" and book.resolve(None).name == "pirate"
    assert book.moods["pirate"] == Mood("pirate", "Arr.", "Talk like a pirate.", 30, "🏴‍☠️", "")
    assert book.moods["formal"].description == "Stiffer than ever." and book.moods["formal"].max_words == 60
    assert "concise" in book.names  # the bundled ones stay


@pytest.mark.parametrize(("content", "problem"), [
    ("default = [unclosed", "not valid TOML"),
    ("[moods.terse]\ninstructions = 'Be terse.'", "missing description"),
    ("[moods.terse]\ndescription = 'T.'\ninstructions = 'Be terse.'\nmax_words = 5", "between 10 and 400"),
    ("[moods.terse]\ndescription = 'T.'\ninstructions = 'Be terse.'\nmax_words = 'many'", "whole number"),
    ("[moods.'two words']\ndescription = 'T.'\ninstructions = 'I.'", "one-word name"),
    ("moods = 3", "must be a table"),
    ("default = 'nonexistent'", "'nonexistent' is not defined"),
])
def test_a_malformed_moods_file_is_refused_with_its_name(tmp_path: Path, content: str, problem: str) -> None:
    path = write(tmp_path / "my-moods.toml", content)
    with pytest.raises(MoodFileError) as err:
        MoodBook(path)
    assert str(path) in str(err.value) and problem in str(err.value)


def test_a_missing_moods_file_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(MoodFileError, match=re.escape(str(tmp_path / "absent.toml")) + ".*cannot read"):
        MoodBook(tmp_path / "absent.toml")


def test_outcome_defaults() -> None:
    outcome = Outcome("no_answer", "text", "standalone")
    assert outcome.citations == [] and outcome.closest == [] and outcome.hits == [] and outcome.timings_ms == {}


class _FirstParagraphAnswerer:
    """Stands in for a language model: cites the first retrieved paragraph, and records what it was asked."""

    def __init__(self) -> None:
        self.requests: list[AnswerRequest] = []

    def answer(self, request: AnswerRequest) -> Draft:
        self.requests.append(request)
        sub = request.hits[0].chunk.subchunks[0]
        return Draft("Students need an exemption [1].", [sub.sub_id])


def test_a_paraphrase_reaches_a_model_answerer_but_the_extractive_one_declines_it(demo: Core,
                                                                                 engine: Engine) -> None:
    paraphrase = "Can pupils at a university join?"  # one word of the students page but its topic
    offline = engine.answer(paraphrase, [], CONCISE)
    assert offline.kind == "no_answer"
    # With two of its words there ("food stamps"), the extractive answer quotes the students page.
    offline = engine.answer("Can university pupils receive food stamps?", [], CONCISE)
    assert offline.kind == "answer" and offline.citations[0].doc_id == STUDENTS_DOC

    model = _FirstParagraphAnswerer()
    with_model = Engine(engine.retriever, engine.rewriter, model).answer(paraphrase, [], CONCISE)
    assert len(model.requests) == 1 and model.requests[0].coverage < Settings().min_coverage
    assert with_model.kind == "answer" and with_model.citations


# --- answers that state the rule ------------------------------------------------------------------------------------

def test_rule_features_name_obligations_amounts_conditions_and_who_qualifies() -> None:
    from rag.answer.extractive import rule_features
    assert rule_features("Navigators often ask about the resource limit for elderly households.") == 0
    assert rule_features("The household must report it within 10 days.") == 3  # modal, duration, deadline word
    assert rule_features("A student is exempt if the student works 20 hours a week.") == 3
    assert rule_features("Resources may not exceed $4,250.") == 2


ECHO = "Navigators are often asked about the resource limit for elderly households."
RULE = "A household with an elderly member is eligible only if its resources do not exceed $4,250."


def test_the_answer_opens_with_the_sentence_that_states_the_rule(demo: Core,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    hits = hits_of([sub("c::0.0", f"{ECHO} {RULE} The office reviews each case.")])
    question = "what is the resource limit for elderly households?"
    one_sentence = Mood("short", "", "", max_words=18)  # room for one sentence only
    text, _ = extract(demo, question, hits, one_sentence)
    assert text.startswith(RULE[:40]) and ECHO not in text
    monkeypatch.setattr("rag.answer.extractive.RULE_WEIGHT", 0.0)  # without the rule preference the echo wins
    monkeypatch.setattr("rag.answer.extractive.QUANTITY_WEIGHT", 0.0)  # (and the amount a question on a limit asks for)
    text, _ = extract(demo, question, hits, one_sentence)
    assert text.startswith(ECHO[:40])


def test_an_answer_has_at_most_three_sentences(demo: Core) -> None:
    para = " ".join(f"Students in group {n} must work 20 hours a week to get SNAP." for n in range(1, 7))
    hits = hits_of([sub("c::0.0", para)])
    long_mood = Mood("long", "", "", max_words=400)
    text, _ = extract(demo, "must students work 20 hours a week to get SNAP?", hits, long_mood)
    assert len(reading_sentences(re.sub(r"\s?\[\d+\]", "", text))) == 3


def test_the_glossary_terms_rank_the_paragraphs_the_answer_comes_from(demo: Core,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from rag.search.glossary import Glossary
    from rag.search.paragraphs import rank_paragraphs
    # "renewal" is no word of the regulation; the glossary maps it to "recertification"
    hits = hits_of([sub("c::0.0", "Rent that is due each month is a shelter cost."),
                    sub("c::0.1", "Recertification must be completed before the certification period ends.")])
    question = "when is the renewal due?"
    assert rank_paragraphs(question, hits)[0].sub.sub_id == "c::0.0"  # the word "due" alone
    expansion = Glossary().expand(question).text
    assert rank_paragraphs(question, hits, expansion=expansion)[0].sub.sub_id == "c::0.1"
    seen: list[str] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["expansion"])
        return rank_paragraphs(*args, **kwargs)

    monkeypatch.setattr("rag.answer.extractive.rank_paragraphs", spy)
    ExtractiveAnswerer(demo.embedder, glossary=Glossary()).answer(AnswerRequest(question, question, [], hits, CONCISE))
    assert seen == [expansion]  # the answerer ranks with the glossary's terms
