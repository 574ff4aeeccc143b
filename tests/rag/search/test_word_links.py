"""Learned word links (rag/search/word_links.py): the file, its scope, the paragraph ranking's `links` column, and
how benchmarks/paragraph_ltr.py learns them."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest

from benchmarks import paragraph_ltr
from bot.cli.main import main
from bot.wiring.runtime import Core
from rag.search.paragraph_features import FEATURES
from rag.search.retrieve import Retriever
from rag.search.sentences import SentenceEvidence
from rag.search.sqlite_store import SQLiteKnowledgeStore
from rag.search.store import Filters
from rag.search.word_links import QuestionLinks, WordLinksError, load_word_links, parse_word_links
from tests.conftest import write

LINKS = "# test links\n#scope\t^§\\s*273\\.\\d\nboss\temploy\t2.0\nboss\tlandlord\t1.0\nrent\tshelter\t0.5\n"

# One regulation-style section (in the links' scope) and the same rules in a page that is not (no "§ 273.n").
REGULATION = """# Reporting rules

## § 273.99 Reporting changes

(a) General rule. A household must report a change in its income within 10 days of the change. The household
reports it by phone, by mail or in person.

(b) Simplified reporting. Households assigned to simplified reporting report when income exceeds the limit.

(c) Changes reported by others. When a landlord or an employer tells the office about a change, the office
treats it as a report of the household only after the household confirms it.
"""
PAGE = REGULATION.replace("§ 273.99 Reporting changes", "Reporting changes (county handbook)")


def test_a_links_file_is_read_plain_or_gzipped(tmp_path: Path) -> None:
    plain = write(tmp_path / "links.tsv", LINKS)
    packed = tmp_path / "links.tsv.gz"
    packed.write_bytes(gzip.compress(LINKS.encode()))
    for path in (plain, packed):
        links = load_word_links(path)
        assert links.links == {"boss": {"employ": 2.0, "landlord": 1.0}, "rent": {"shelter": 0.5}}
        assert links.covers(["Subpart A—General Rules", "§ 273.1 Household concept.", "(a) General"])
        assert not links.covers(["Reporting changes (county handbook)", "(a) General rule"])
    question = links.for_question("her boss called the office about her rent, does that count?")
    assert question is not None and list(question.words) == [{"employ": 2.0, "landlord": 1.0}, {"shelter": 0.5}]
    assert links.for_question("what about the interview?") is None
    assert parse_word_links("# nothing learned yet\n").for_question("boss") is None  # an empty file: no links


@pytest.mark.parametrize(("text", "message"), [
    ("boss\temploy\t2.0\n", "no '#scope<TAB><pattern>' line"),
    ("#scope\t^§ 273\nboss employ 2.0\n", "line 2: expected question stem, paragraph stem and weight"),
    ("#scope\t^§ 273\nboss\temploy\tmany\n", "line 2: expected question stem"),
    ("#scope\t^§ 273\nboss\t\t2.0\n", "line 2: empty stem or a weight outside (0, 100)"),
    ("#scope\t^§ 273\nboss\temploy\t-1\n", "line 2: empty stem or a weight outside (0, 100)"),
    ("#scope\t^§ (273\n", "line 1: the scope is not a regular expression"),
])
def test_a_broken_links_file_says_where(text: str, message: str) -> None:
    with pytest.raises(WordLinksError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_word_links(text, "links.tsv")


def test_an_unreadable_links_file_is_one_clear_error(tmp_path: Path) -> None:
    for path, content in ((tmp_path / "missing.tsv", None), (tmp_path / "bad.gz", b"\x1f\x8b not gzip"),
                          (tmp_path / "latin1.tsv", "#scope\t^§ 273\n".encode("latin-1"))):
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(WordLinksError, match="cannot read the word links file"):
            load_word_links(path)


def test_the_bundled_links_apply_to_7_cfr_273_only() -> None:
    links = load_word_links()
    assert len(links.links) > 500 and all(w > 0 for ps in links.links.values() for w in ps.values())
    assert links.covers(["Subpart D—Eligibility and Benefit Levels", "§ 273.9 Income and deductions."])
    assert not links.covers(["Subpart D—Eligibility and Benefit Levels"])
    assert not links.covers(["Apply for disability benefits", "How to apply"])  # a doc2dial-style page


def test_navibot_reports_a_broken_links_file_in_one_line(demo_store: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    broken = write(tmp_path / "links.tsv", "boss\temploy\t2.0\n")
    monkeypatch.setenv("NAVIBOT_WORD_LINKS_FILE", str(broken))
    assert main(["search", "food stamps", "--store", str(demo_store)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err == (f"navibot: {broken}: no '#scope<TAB><pattern>' line: links must name the text they "
                            "apply to\n")


def _links_column(core: Core, question: str) -> dict[tuple[str, str], float]:
    """The `links` feature of every candidate paragraph, by (document, first words)."""
    store = core.store
    assert isinstance(store, SQLiteKnowledgeStore)
    chunk_ids = [cid for cid, _ in store.lexical_search(question, 10, Filters())]
    links = core.retriever.word_links.for_question(question) if core.retriever.word_links else None
    evidence = store.sentence_evidence(question, core.embedder.embed_query(question), chunk_ids, links)
    chunks = store.get_chunks(chunk_ids)
    where = {s.sub_id: (c.doc_id, s.text[:3]) for c in chunks for s in c.subchunks}
    return {where[sub]: row[FEATURES.index("links")] for sub, row in evidence.features.items()}


def test_a_paragraph_scores_its_strongest_link_per_question_word_in_scope_only(core: Core, tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    core.ingestor.ingest_paths([write(kb / "reg.md", REGULATION), write(kb / "page.md", PAGE)])
    question = "her boss told the office about the change, does that count as her report?"
    core.retriever.word_links = parse_word_links("")  # no links: the column is 0
    assert not any(_links_column(core, question).values())
    core.retriever.word_links = load_word_links(write(tmp_path / "links.tsv", LINKS))
    column = _links_column(core, question)
    regulation = next(doc for doc, _ in column if doc.endswith("reg"))
    page = next(doc for doc, _ in column if doc.endswith("page"))
    assert column[(regulation, "(c)")] == 2.0  # "boss": employer (2.0) and landlord (1.0), the strongest counts
    assert column[(regulation, "(a)")] == 0.0 and column[(regulation, "(b)")] == 0.0
    assert all(value == 0.0 for (doc, _), value in column.items() if doc == page)  # outside the scope
    assert _links_column(core, "does a change in income have to be reported?") == dict.fromkeys(column, 0.0)


def test_the_retriever_gives_the_store_each_searchs_own_links(core: Core, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    core.ingestor.ingest_paths([write(tmp_path / "kb" / "reg.md", REGULATION)])
    store = core.store
    assert isinstance(store, SQLiteKnowledgeStore)
    seen: list[tuple[str, QuestionLinks | None]] = []
    original = store.sentence_evidence

    def spy(query: str, vector: np.ndarray | None, chunk_ids: list[str],
            links: QuestionLinks | None = None) -> SentenceEvidence:
        seen.append((query.partition("\n")[0], links))
        return original(query, vector, chunk_ids, links)

    monkeypatch.setattr(store, "sentence_evidence", spy)
    retriever = Retriever(store, core.embedder, word_links=load_word_links(write(tmp_path / "links.tsv", LINKS)))
    assert retriever.search("her boss reported her raise, is that enough?", k=3)
    (_, links), = seen
    assert links is not None and list(links.words) == [{"employ": 2.0, "landlord": 1.0}]
    assert features_of(retriever, "her boss reported her raise, is that enough?")["(c)"] == 2.0
    seen.clear()
    # A follow-up: the thread's words find the sections; its own words are ranked with their own links.
    assert retriever.search("how does a household report a change in income? what about her rent?", k=3,
                            follow_up="what about her rent?")
    assert [(text, links and list(links.words)) for text, links in seen] == [
        ("how does a household report a change in income? what about her rent?", [{"shelter": 0.5}]),
        ("what about her rent?", [{"shelter": 0.5}])]
    seen.clear()
    assert Retriever(store, core.embedder).search("her boss reported her raise", k=3)  # no links: none passed
    assert [links for _, links in seen] == [None]


def features_of(retriever: Retriever, question: str) -> dict[str, float]:
    """The `links` column of each candidate paragraph, by its first words, as the retriever's search computes it."""
    text, vector = retriever._searched(question)
    chunk_ids = [cid for cid, _ in retriever.store.lexical_search(text, 10, Filters())]
    evidence = retriever.store.sentence_evidence(text, vector, chunk_ids, retriever._links(text))
    subs = {s.sub_id: s.text for c in retriever.store.get_chunks(chunk_ids) for s in c.subchunks}
    return {subs[sub][:3]: row[FEATURES.index("links")] for sub, row in evidence.features.items()}


def test_links_are_learned_from_the_answers_and_their_rivals(tmp_path: Path) -> None:
    texts = ["(a) Loans from private persons are excluded.", "(b) Wages are counted.", "(c) Gifts are counted."]
    rows = [{"qid": f"p1-{n:03d}", "question": f"her cousin lent her money #{n}", "subs": ["a", "b", "c"],
             "order": ["b", "a", "c"], "text": [("273.9", ("c", str(i)), t) for i, t in enumerate(texts)],
             "labels": np.array([1, 0, 0]), "strict": np.array([1, 0, 0])} for n in range(1, 7)]
    data = tmp_path / "rows.pkl"
    data.write_bytes(pickle.dumps(rows))
    out = tmp_path / "links.tsv.gz"
    paragraph_ltr.learn_links(data, out)
    links = load_word_links(out)
    assert links.links["lent"]["privat"] > 0 and "wage" not in links.links["lent"]  # the rivals' words are not linked
    assert links.covers(["§ 273.9 Income and deductions."])
    paragraph_ltr.learn_links(data, out, half="odd")  # three questions: below LINK_MIN, nothing is kept
    assert not load_word_links(out)


@pytest.mark.parametrize("line", ["boss\temploy\tnan", "boss\temploy\tinf", "boss\temploy\t1e999", "boss\x00\temploy\t",
                                  "boss\temploy\t" + "9" * 5000, "\tboss\t1.0"])
def test_hostile_lines_are_refused_with_their_line_number(line: str) -> None:
    with pytest.raises(WordLinksError, match="line 2"):
        parse_word_links(f"#scope\t^§ 273\n{line}\n", "links.tsv")


def test_a_hostile_question_finds_no_links_and_nothing_breaks(core: Core, tmp_path: Path) -> None:
    core.ingestor.ingest_paths([write(tmp_path / "kb" / "reg.md", REGULATION)])
    core.retriever.word_links = load_word_links(write(tmp_path / "links.tsv", LINKS))
    for question in ("", "   ", "?!", "a" * 5000, "boss\x00rent", "\u202eboss\u202c rent", "boss " * 2000):
        links = core.retriever.word_links.for_question(question)
        assert links is None or set(links.stems) <= {"boss", "rent"}
        core.retriever.search(question, k=3)  # no exception, whatever it finds


def test_a_links_file_is_parsed_once_while_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path / "links.tsv", LINKS)
    first = load_word_links(path)
    assert load_word_links(path) is first  # shared: every core built in a process reads the same links
    write(path, LINKS + "rent\tlandlord\t0.25\n")  # changed: read again
    assert load_word_links(path).links["rent"] == {"shelter": 0.5, "landlord": 0.25}
