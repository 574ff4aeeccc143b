"""The glossary of navigators' words: the bundled file, matching, an agency's file merged over it, malformed files,
and the expansion reaching both search paths of the SQLite and the MongoDB store in the running bot."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.cli.main import main
from bot.cli.terminal import cli_turn
from bot.config.settings import Settings
from bot.wiring.runtime import Core, build_bot, build_core
from rag.ingest.chunking import Chunker
from rag.ingest.ingestor import Ingestor
from rag.search.glossary import Glossary, GlossaryFileError, match_key
from rag.search.retrieve import EXPANSION_VECTOR_WEIGHT, Retriever
from tests.conftest import write
from tests.fakes.fake_mongo import FakeDatabase, Server
from tests.rag.mongo.test_mongo_knowledge import open_store

pytestmark = pytest.mark.filterwarnings("ignore:datetime.datetime.utcnow:DeprecationWarning")


@pytest.fixture(scope="module")
def glossary() -> Glossary:
    return Glossary()


def _only(tmp_path: Path, entries: str) -> Glossary:
    """A glossary of `entries` (TOML lines) alone, without the bundled file."""
    path = tmp_path / "glossary.toml"
    path.write_text(f"bundled = false\n[t]\n{entries}", encoding="utf-8")
    return Glossary(path)


# -- the bundled glossary ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "expected"), [
    ("client needs emergency food stamps today", ["expedited service"]),
    ("when is her renewal due?", ["recertification"]),
    ("recert phone interview?", ["recertification", "telephone interview"]),
    ("he has a green card", ["lawful permanent resident", "qualified alien"]),
    ("does TANF count", ["public assistance", "Title IV-A"]),
    ("is a car an asset?", ["resource", "vehicle"]),
    ("she was underpaid for 3 months", ["lost benefits"]),
    ("E&T penalty for a first time", ["employment and training", "work requirements", "failure to comply"]),
    ("can he get food stamps", ["SNAP"]),
    ("is he an ABAWD", ["able-bodied adults without dependents"]),
    ("grandma has a boarder", ["board"]),
    ("the roomer pays rent", ["lodging"]),
    ("she's an Uber driver", ["self-employment"]),
    ("no SSN yet", ["social security number"]),
    ("gets SSI and SSDI", ["supplemental security income", "social security disability insurance"]),
    ("on WIC", ["special supplemental nutrition program for women, infants, and children"]),
    ("got LIHEAP", ["low income home energy assistance"]),
    ("EITC and CTC", ["earned income tax credit", "child tax credit"]),
    ("on UI since May", ["unemployment compensation"]),
    ("Medicade too", ["Medicaid"]),
    ("is she elligible", ["eligible"]),
])
def test_the_bundled_glossary_maps_navigators_words_to_policy_terms(glossary: Glossary, question: str,
                                                                    expected: list[str]) -> None:
    terms = glossary.expand(question).terms
    assert all(term in terms for term in expected), terms


@pytest.mark.parametrize(("question", "expected"), [
    ("single mom w a 4 yr old, does she have to register for work", ["under age 6"]),
    ("full time student with a 3yo at home", ["under age 6"]),
    ("her 9 y/o has a green card too", ["under age 12", "under age 18"]),
    ("her 16-year-old got a job at the mall", ["under age 18", "age 16 or 17"]),
    ("he turned 19 and lives with his parents", ["under 22 years of age"]),
    ("client is 52, no kids, does the time limit apply", ["55 years of age or older"]),
])
def test_a_clients_age_is_searched_as_the_regulations_age_thresholds(glossary: Glossary, question: str,
                                                                     expected: list[str]) -> None:
    expansion = glossary.expand(question)
    assert all(term in expansion.terms for term in expected), expansion.terms
    assert any(all(term in policy for term in expected) for _, policy in expansion.entries)  # the gate sees it


@pytest.mark.parametrize("question", [
    "she is 30 days late with the report",
    "rent is 45 dollars more now",
    "the app has been pending 45 days",
    "her pay is 15 an hour",
    "green card holder for 5 yrs",
    "income is 1,200 a month",
])
def test_numbers_that_are_not_ages_add_no_age_threshold(glossary: Glossary, question: str) -> None:
    terms = " ".join(glossary.expand(question).terms)
    assert "under age" not in terms and "years of age" not in terms, terms


def test_a_long_hostile_question_of_numbers_is_read_quickly(glossary: Glossary) -> None:
    question = "1 - " * 2000 + "yo, 22, is 33 " * 300 + "x" * 5000
    started = time.perf_counter()
    glossary.expand(question)
    assert time.perf_counter() - started < 0.5


def test_the_work_sanction_is_not_read_as_a_fraud_penalty(glossary: Glossary) -> None:
    terms = " ".join(glossary.expand("E&T penalty how long").terms).lower()
    assert "intentional program violation" not in terms and "fraud" not in terms


def test_matching_is_case_insensitive_on_whole_words_and_loose_about_punctuation(glossary: Glossary) -> None:
    for typed in ("E&T penalty", "e & t penalty", "E and T penalty", "e-t penalty", "E & T  PENALTY"):
        assert "failure to comply" in glossary.expand(f"what is the {typed}?").terms, typed
    assert glossary.expand("two GREEN CARDS").matched == ("GREEN CARDS",)  # a plural s, any case
    assert glossary.expand("re-cert due").terms[0] == "recertification"
    assert not glossary.expand("a shopping cart and a scar")  # "car" only as a word
    assert not glossary.expand("greencardholder")
    # At one word the longest phrase wins; a phrase starting later is found too.
    emergency = glossary.expand("emergency food stamps")
    assert emergency.matched == ("emergency food stamps", "food stamps")
    assert emergency.terms[0] == "expedited service"


def test_articles_and_possessives_do_not_count(glossary: Glossary, tmp_path: Path) -> None:
    # The bundled file says "living in a car"; a navigator types whose car it is.
    for typed in ("living in her car", "living in his car", "living in their car", "living in car"):
        assert "homeless individual" in glossary.expand(f"client is {typed}, any shelter deduction?").terms, typed
    assert glossary.expand("she lost her job").matched == ("lost her job",)  # as typed
    assert glossary.expand("he lost his job").terms == glossary.expand("she lost her job").terms
    # Who does it, and the verb's agreement with it, in any form.
    assert glossary.expand("how much money can I have in the bank").terms == glossary.expand(
        "how much money can she have in the bank").terms != ()
    assert glossary.expand("how much does he owe").terms == glossary.expand("how much do they owe").terms != ()
    # Phrases that differ only in such words are one entry: both lists of terms count.
    own = _only(tmp_path, '"the card" = ["EBT card"]\n"card" = ["benefit card"]\n')
    assert set(own.expand("her card").terms) == {"EBT card", "benefit card"}


def test_a_phrase_is_found_with_a_filler_word_inside_it(tmp_path: Path) -> None:
    glossary = _only(tmp_path, '"deduction for working" = ["earned income deduction"]\n'
                     '"count as income" = ["income"]\n"paid every week" = ["weekly"]\n'
                     '"standard deduction amount" = ["standard deduction"]\n"work rules" = ["work requirements"]\n'
                     '"medical deduction" = ["medical expenses"]\n')
    found = glossary.expand("is there any deduction just for working?")
    assert found.matched == ("deduction just for working",) and found.terms == ("earned income deduction",)
    assert found.coverage == 1.0
    assert glossary.expand("do they count that as income").matched == ("count that as income",)
    assert glossary.expand("does snap count her SNAP as income").matched == ("count her SNAP as income",)
    # Not a word that changes the meaning, nor one that makes a phrase of its own with a neighbour.
    assert not glossary.expand("she is paid every other week")
    assert glossary.expand("the standard medical deduction amount").matched == ("medical deduction",)
    assert not glossary.expand("does he count not as income")
    assert glossary.expand("is there a deduction only for working").matched == ()
    assert glossary.expand("is there a deduction extra for working").matched == ("deduction extra for working",)
    # A two-word phrase takes one word of content inside it, not one that turns it.
    assert glossary.expand("the work snap rules").matched == ("work snap rules",)
    assert glossary.expand("are the work program rules strict").matched == ("work program rules",)
    assert not glossary.expand("the work other rules")
    assert not glossary.expand("the work dont rules")  # a negation typed without its apostrophe
    assert not glossary.expand("work and rules")  # a function word: two things, not the phrase
    # An exact phrase still wins where one starts.
    assert glossary.expand("deduction for working").matched == ("deduction for working",)


def test_a_phrase_matches_its_verbs_in_any_form_but_lose(tmp_path: Path) -> None:
    glossary = _only(tmp_path, '"church gave" = ["cash donations"]\n'
                     '"lost benefits" = ["restoration of lost benefits"]\n"paid late" = ["paid on schedule"]\n')
    assert glossary.expand("her church gives her $75 a month").terms == ("cash donations",)
    assert glossary.expand("so the church gave her rent money").matched == ("church gave",)
    assert glossary.expand("they kept paying him late").matched == ("paying him late",)
    assert glossary.expand("boss pays late").terms == ("paid on schedule",)
    assert not glossary.expand("will she lose benefits if she moves")  # losing them is not lost ones restored


def test_asking_to_stop_is_not_being_stopped() -> None:
    glossary = Glossary()
    assert "voluntarily requests" in glossary.expand("she wants to stop her snap").terms
    assert "voluntarily requests" not in glossary.expand("the county stopped her snap").terms


def test_shorthand_inside_a_phrase_is_read_as_the_word_it_stands_for(tmp_path: Path) -> None:
    glossary = _only(tmp_path, '"lives with parents" = ["parents and children"]\n'
                     '"do the application for" = ["authorized representative"]\n"app" = ["application"]\n')
    assert glossary.expand("she lives w her parents").terms == ("parents and children",)
    assert glossary.expand("can her neighbor do the app for her").matched == ("do the app for", "app")
    assert glossary.expand("is there an app").terms == ("application",)  # a one-word entry as typed


def test_amounts_appointments_a_different_county_and_until_in_shorthand(tmp_path: Path) -> None:
    glossary = _only(tmp_path, '"lowest amount" = ["minimum benefit"]\n'
                     '"missed appointment" = ["failure to comply"]\n'
                     '"moved to a different county" = ["household moves within the State"]\n'
                     '"until the hearing" = ["continuation of benefits"]\n'
                     '"cleaning business" = ["self-employment"]\n')
    assert glossary.expand("whats the lowest snap amt he can get").terms == ("minimum benefit",)
    assert glossary.expand("he missed his appt").terms == ("failure to comply",)
    assert glossary.expand("she moved to a diff county").terms == ("household moves within the State",)
    assert glossary.expand("does she keep it til the hearing").terms == ("continuation of benefits",)
    assert glossary.expand("she runs a cleaning biz").terms == ("self-employment",)
    assert not glossary.expand("new amt for her")  # shorthand alone is no phrase


def test_match_key_with_hostile_input() -> None:
    # The key the matcher and the hygiene test compare phrases by: words only, articles, possessives and object
    # pronouns out, verbs in one form, shorthand spelt out; never an error.
    assert match_key("") == ()
    assert match_key("!!! ... ---") == ()
    assert match_key("the her") == ("the", "her")  # nothing but articles: they are the phrase
    assert match_key("Withdraw THE application!!") == match_key("withdraw application") == ("withdraw", "application")
    assert match_key("lent her") == match_key("lent him") == ("lent",)
    assert match_key("app date") == match_key("application date")
    assert match_key("x" * 5000 + " y") == ("x" * 5000, "y")
    assert match_key("\u00e9t\u00e9 \u0000 \u202e snap") == ("t", "snap")

def test_fs_inside_a_phrase_is_snap(tmp_path: Path) -> None:
    glossary = _only(tmp_path, '"snap is getting cut" = ["notice of adverse action"]\n'
                     '"emergency snap" = ["expedited service"]\n"fs" = ["SNAP"]\n')
    assert glossary.expand("her fs is getting cut next week").terms == ("notice of adverse action",)
    assert glossary.expand("does she qualify for emergency FS").matched[0] == "emergency FS"
    assert glossary.expand("is fs a program").terms == ("SNAP",)  # alone, as typed


def test_terms_the_question_already_says_are_not_added(glossary: Glossary) -> None:
    assert glossary.expand("Renewal or recertification?").terms == ("certification period",)
    assert not glossary.expand("When is the recertification interview?")
    assert glossary.expand("how do I get food stamps").text == "SNAP"


def glossary_coverage(question: str) -> float:
    return Glossary().expand(question).coverage


def test_coverage_is_the_share_of_the_question_translated(glossary: Glossary) -> None:
    assert glossary.expand("emergency food stamps?").coverage == 1.0
    assert glossary.expand("is a car an asset").coverage == 1.0  # function words aside
    assert glossary.expand("E&T penalty for a first time").coverage == pytest.approx(3 / 5)
    assert glossary.expand("nothing to translate here").coverage == 0.0


def test_expansion_is_fast(glossary: Glossary) -> None:
    question = "client lives w her bf, they buy + cook food seperately, can she get emergency food stamps? " * 3
    start = time.perf_counter()
    for _ in range(200):
        glossary.expand(question)
    # Well under a millisecond a question on an idle machine; 10x that leaves a loaded 2-core runner room.
    assert (time.perf_counter() - start) / 200 < 0.01


# -- an agency's file ---------------------------------------------------------------------------------------------

AGENCY = """
# Our own program names
[county]
"CalFresh" = ["SNAP", "supplemental nutrition assistance program"]
"GR" = "general relief"
"food stamps" = ["CalFresh"]
"asset" = []
"""


def test_an_agency_file_is_merged_over_the_bundled_one(tmp_path: Path) -> None:
    merged = Glossary(write(tmp_path / "ours.toml", AGENCY))
    assert merged.expand("is she on calfresh").terms == ("SNAP", "supplemental nutrition assistance program")
    assert merged.expand("GR recipients").terms == ("general relief",)  # a single term needs no list
    assert merged.expand("food stamps").terms == ("CalFresh",)  # the same phrase: replaced
    assert not merged.expand("is a bike an asset")  # [] removes a bundled phrase
    assert merged.expand("green card").terms  # the rest of the bundled glossary stays
    alone = Glossary(write(tmp_path / "alone.toml", "bundled = false\n" + AGENCY))
    assert not alone.expand("green card") and alone.expand("GR").terms == ("general relief",)
    assert len(alone) == 3


@pytest.mark.parametrize(("content", "line", "problem"), [
    ("[county]\n\"GR\" = \"general relief\"\n\"MFIP\" = 7\n", 3, "'MFIP' must map to a policy term"),
    ("[county\n\"GR\" = \"general relief\"\n", 1, "not valid TOML"),
    ("[county]\n\"GR\" = [\"general relief\",\n", 2, "not valid TOML"),
    ("\"GR\" = \"general relief\"\n", 1, "'GR' must be inside a [group] table"),
    ("[county]\n\n\"--\" = \"general relief\"\n", 3, "'--' needs at least one letter or digit"),
    ("[county]\n\"GR\" = [\"general relief\", \"  \"]\n", 2, "every policy term needs a word"),
    ("bundled = \"no\"\n[county]\n", 1, "bundled must be true or false"),
])
def test_a_malformed_glossary_file_names_the_file_and_line(tmp_path: Path, content: str, line: int,
                                                           problem: str) -> None:
    path = write(tmp_path / "broken.toml", content)
    with pytest.raises(GlossaryFileError) as err:
        Glossary(path)
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: ") and problem in message and "\n" not in message


def test_a_missing_glossary_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GlossaryFileError, match="cannot read the glossary file"):
        Glossary(tmp_path / "nowhere.toml")


def test_navibot_reports_a_broken_glossary_file_in_one_line(demo_store: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    broken = write(tmp_path / "glossary.toml", "[county]\n\"GR\" = 5\n")
    monkeypatch.setenv("NAVIBOT_GLOSSARY_FILE", str(broken))
    for argv in (["search", "food stamps", "--store", str(demo_store)],
                 ["ask", "food stamps", "--store", str(demo_store)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "Traceback" not in captured.err
        assert captured.err == (f"navibot: {broken}:2: 'GR' must map to a policy term or a list of them, "
                                'e.g. ["expedited service"]\n')


# -- the expansion in search ------------------------------------------------------------------------------------

# Sections in the words of a regulation (one document each), written for this test.
REGULATION = {
    "Expedited service": """Households with less than $150 in monthly gross income and liquid resources of $100 or
less are entitled to expedited service. The State agency shall make benefits available no later than the seventh
calendar day following the date of application.""",
    "Recertification": """No household may participate beyond the expiration of its certification period without a
determination of eligibility for a new period. The State agency shall schedule a recertification interview before
the end of the certification period.""",
    "Resource limits": """The maximum allowable financial resources of all members of a household shall not exceed
$2,750. Cash, money in checking or savings accounts and stocks are counted toward this limit.""",
    "Intentional program violations": """Individuals found to have committed an intentional program violation shall
be ineligible to participate: a disqualification penalty of twelve months for the first violation and twenty-four
months for the second.""",
    "Failure to comply with work requirements": """A nonexempt individual who refuses or fails without good cause to
comply with the work requirements shall be disqualified. The State agency shall impose a disqualification of at
least one month for the first occurrence.""",
    "Lost benefits": """The State agency shall restore lost benefits to a household when the benefits were lost
because of an error by the State agency, for not more than twelve months before the agency learned of the loss.""",
    "Citizenship and alien status": """An alien lawfully admitted for permanent residence who is a qualified alien
may be eligible once the waiting period is met or an exception applies.""",
}


def regulation(folder: Path) -> Path:
    for number, (title, body) in enumerate(REGULATION.items()):
        write(folder / f"section-{number}.md", f"---\ntitle: {title}\n---\n\n{body}\n")
    return folder


# A question in a navigator's words, and the heading of the section that answers it.
NAVIGATOR_QUESTIONS = [
    ("client needs emergency food stamps, how fast?", "Expedited service"),
    ("E&T penalty for a first time", "Failure to comply with work requirements"),
    ("she was underpaid last year, can she get it?", "Lost benefits"),
    ("when is the recert", "Recertification"),
    ("is a car an asset", "Resource limits"),
]


def heading(hit: Any) -> str:
    return str(hit.chunk.title)


def test_a_navigators_words_find_the_regulations_section(core: Core, tmp_path: Path) -> None:
    core.ingestor.ingest_paths([regulation(tmp_path / "kb")])
    assert core.retriever.glossary is not None and len(core.retriever.glossary) > 300  # build_core loads it
    plain = Retriever(core.store, core.embedder)
    for question, section in NAVIGATOR_QUESTIONS:
        found = core.retriever.search(question, k=1)[0]
        assert heading(found) == section and found.lexical_rank == 1 and found.vector_rank == 1, question
        # Without the glossary the navigator's words do not match the section's words.
        assert all(h.lexical_rank != 1 for h in plain.search(question, k=7) if heading(h) == section), question
    # The example: without the glossary, "E&T penalty" found the fraud penalties first.
    assert heading(plain.search("E&T penalty for a first time", k=1)[0]) == "Intentional program violations"


class Recording:
    """A store that records the query text and vector each search step was given."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.seen: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def vector_search(self, vector: np.ndarray, limit: int, filters: Any) -> Any:
        self.seen.append(("vector", vector))
        return self.store.vector_search(vector, limit, filters)

    def lexical_search(self, query: str, limit: int, filters: Any) -> Any:
        self.seen.append(("lexical", query))
        return self.store.lexical_search(query, limit, filters)

    def sentence_rankings(self, query: str, vector: np.ndarray | None, chunk_ids: list[str]) -> Any:
        self.seen.append(("sentences", query))
        self.seen.append(("sentence vector", vector))
        return self.store.sentence_rankings(query, vector, chunk_ids)

    def sentence_evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str],
                          links: Any = None) -> Any:
        self.seen.append(("sentences", query))
        self.seen.append(("sentence vector", vector))
        return self.store.sentence_evidence(query, vector, chunk_ids, links)


def blended(core: Core, question: str, terms: str, weight: float = EXPANSION_VECTOR_WEIGHT) -> np.ndarray:
    vector = core.embedder.embed_query(question) + weight * core.embedder.embed_query(terms)
    return vector / np.linalg.norm(vector)


def test_both_paths_get_the_question_first_then_the_policy_terms(core: Core, tmp_path: Path) -> None:
    core.ingestor.ingest_paths([regulation(tmp_path / "kb")])
    recording = Recording(core.store)
    retriever = Retriever(recording, core.embedder, glossary=Glossary())
    question = "E&T penalty for a first time"
    retriever.search(question, k=3)
    seen = dict(recording.seen)
    expected = f"{question}\nemployment and training; work requirements; failure to comply; disqualification"
    assert seen["lexical"] == expected and seen["sentences"] == expected
    # The vector leans toward the policy terms but stays the question's: a weighted average, not a concatenation.
    want = blended(core, question, "employment and training; work requirements; failure to comply; disqualification")
    assert np.allclose(seen["vector"], want, atol=1e-5) and np.allclose(seen["sentence vector"], want, atol=1e-5)
    assert float(seen["vector"] @ core.embedder.embed_query(question)) > 0.8
    # A long question with one word to translate leans toward the terms by that share only.
    recording.seen.clear()
    long = "my client wants to know which papers to bring to the office when she applies and she has no SSN"
    assert glossary_coverage(long) == pytest.approx(1 / 8)
    retriever.search(long, k=3)
    assert np.allclose(dict(recording.seen)["vector"], blended(core, long, "social security number", 1 / 8),
                       atol=1e-5)
    recording.seen.clear()
    retriever.search("recertification interview", k=3)  # nothing to add: searched exactly as asked
    assert dict(recording.seen)["lexical"] == "recertification interview"
    assert np.allclose(dict(recording.seen)["vector"], core.embedder.embed_query("recertification interview"),
                       atol=1e-6)


@pytest.mark.parametrize("fusion", [True, False])
def test_the_mongodb_store_gets_the_same_expansion(core: Core, tmp_path: Path, fusion: bool) -> None:
    db = FakeDatabase(server=Server(rank_fusion=fusion))
    store = open_store(db)
    try:
        Ingestor(store, core.embedder, Chunker(450)).ingest_paths([regulation(tmp_path / "kb")])
        retriever = Retriever(store, core.embedder, glossary=Glossary())
        for question, section in NAVIGATOR_QUESTIONS:
            assert heading(retriever.search(question, k=1)[0]) == section, question
        db.server.pipelines.clear()
        question = "E&T penalty for a first time"
        retriever.search(question, k=3)
        stages = [stage for p in db.server.pipelines for stage in p]
        stages += [stage for s in stages if "$rankFusion" in s
                   for p in s["$rankFusion"]["input"]["pipelines"].values() for stage in p]
        texts = [c["text"]["query"] for s in stages if "$search" in s for c in s["$search"]["compound"]["should"]]
        vectors = [s["$vectorSearch"]["queryVector"] for s in stages if "$vectorSearch" in s]
        assert texts and all("penalty" in t and "failure comply" in t and "disqualification" in t for t in texts)
        want = blended(core, question,
                       "employment and training; work requirements; failure to comply; disqualification")
        assert vectors and all(np.allclose(v, want, atol=1e-5) for v in vectors)
    finally:
        store.close()


def test_the_understood_as_line_stays_the_navigators_question(demo_store: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    bot = build_bot(Settings(), demo_store)
    try:
        with caplog.at_level(logging.DEBUG, logger="rag.search.retrieve"):
            first = bot.handler.handle(cli_turn("t-glossary", "Can college students get food stamps?"))
            follow = bot.handler.handle(cli_turn("t-glossary", "and what about the recert?"))
    finally:
        bot.close()
    line = next(ln for ln in caplog.text.splitlines() if "glossary: " in ln and "food stamps" in ln)
    assert "SNAP" in line.partition(" -> ")[2].split("; ")
    assert "recert" in caplog.text and "recertification; certification period" in caplog.text
    for reply in (first, follow):  # ... but what the navigator is shown as understood is still their question
        understood = (reply.standalone_question or "").lower()
        assert not {"snap", "recertification", "period"} & set(understood.split())


def test_settings_name_the_agency_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NAVIBOT_GLOSSARY_FILE", str(write(tmp_path / "ours.toml", AGENCY)))
    built = build_core(Settings(), tmp_path / "store.sqlite3")
    try:
        assert built.retriever.glossary is not None
        assert built.retriever.glossary.expand("GR").terms == ("general relief",)
    finally:
        built.close()
