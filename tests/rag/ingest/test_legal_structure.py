"""Regulation paragraph labels resolved by their sequence: every sub-chunk's heading path is its true location.

The whole of 7 CFR 273 is walked through the real loader and chunker; the structure read back from the heading
paths must be a well-formed outline (per section a, b, c…; under each paragraph 1, 2, 3… or i, ii, iii… of the
kind its level takes), with the source's own slips tolerated only where they are.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from rag.documents import SubChunk
from rag.ingest.chunking import Chunker
from rag.ingest.legal_labels import LEVEL_KINDS, label_path, label_value, leading_labels, resolve_labels, section_number
from rag.ingest.loaders import load_file, load_html

SHARED = Path(__file__).resolve().parents[4] / "shared"
CFR_273 = SHARED / "corpus" / "snap" / "7-cfr-273.md"
DEV_QUESTIONS = SHARED / "eval" / "cfr273-dev" / "questions.jsonl"
needs_cfr = pytest.mark.skipif(not CFR_273.exists(), reason=f"{CFR_273} not available")

# The slips printed in the source (see ../shared/eval/cfr273-dev/README.md), as (section, parent, what).
GAPS = {("273.8", "(e)(20)"), ("273.14", "(b)(3)")}  # (ii) run into (i) on one line; no (i), straight to (ii)
REPEATS = {("273.8", "(e)(2)(iv)")}  # two paragraphs labelled (iv)
WRONG_STYLE = {("273.21", "(q)(6)(i)")}  # printed "(1)", read as (i)


def _labels(path: str) -> list[str]:
    return re.findall(r"\(([^)]+)\)", path)


def _section(sub: SubChunk) -> str:
    return section_number(sub.heading_path)


@pytest.fixture(scope="module")
def cfr_subs() -> list[SubChunk]:
    doc = load_file(CFR_273, CFR_273.parent).documents[0]
    return [s for c in Chunker().chunk(doc) for s in c.subchunks]


def _sub(subs: list[SubChunk], section: str, starts: str) -> SubChunk:
    found = [s for s in subs if _section(s) == section and s.text.startswith(starts)]
    assert len(found) == 1, (section, starts, len(found))
    return found[0]


# ------------------------------------------------------------------------------------- the whole regulation


@needs_cfr
def test_every_section_reads_as_a_well_formed_outline(cfr_subs: list[SubChunk]) -> None:
    # The outline per section: every labelled location named by a heading path, in document order.
    outline: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for sub in cfr_subs:
        section, labels = _section(sub), tuple(_labels(label_path(sub.heading_path)))
        for n in range(1, len(labels) + 1):
            if labels[:n] not in outline[section]:
                outline[section].append(labels[:n])
    assert len(outline) >= 28
    total = sum(len(v) for v in outline.values())
    assert 2600 <= total <= 2700  # about 2,670 labelled paragraphs in the Part
    gaps: set[tuple[str, str]] = set()
    for section, paths in outline.items():
        top = [p[0] for p in paths if len(p) == 1]
        assert top == [chr(ord("a") + i) for i in range(len(top))], section  # a, b, c… no gap, no repeat
        children: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for path in paths:
            level = len(path) - 1
            assert label_value(path[-1], LEVEL_KINDS[level]) is not None, (section, path)  # the level's kind
            children[path[:-1]].append(path[-1])
        for parent, siblings in children.items():
            kind = LEVEL_KINDS[len(parent)]
            values = [label_value(x, kind) for x in siblings]
            if values != list(range(1, len(values) + 1)):
                gaps.add((section, "".join(f"({x})" for x in parent)))
    assert gaps == GAPS
    # No section without labels gets any ("§§ 273.30 and 273.32 have no labeled paragraphs").
    assert "273.30" not in outline and "273.32" not in outline


@needs_cfr
def test_each_labelled_paragraph_sits_at_its_own_label(cfr_subs: list[SubChunk]) -> None:
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for sub in cfr_subs:
        printed = leading_labels(sub.text)
        if not printed:
            continue
        section, path = _section(sub), label_path(sub.heading_path)
        own = _labels(path)[-len(printed):]
        if (section, path) in WRONG_STYLE:
            assert (printed, own) == (["6", "1"], ["6", "i"])
        else:
            assert own == printed, (section, path, sub.text[:60])  # run-in labels: the deepest holds the text
        seen[(section, path)] += 1
    repeats = {key for key, n in seen.items() if n > 1}
    assert repeats == REPEATS


@needs_cfr
def test_heading_paths_keep_their_format(cfr_subs: list[SubChunk]) -> None:
    sub = _sub(cfr_subs, "273.5", "(5) Be employed for a minimum of 20 hours per week")
    assert sub.heading_path == ["Subpart C—Education and Employment", "§ 273.5 Students.",
                                "(b) Student Exemptions", "(5)"]
    sub = _sub(cfr_subs, "273.5", "(i) To qualify under this provision")
    assert sub.heading_path[2:] == ["(b) Student Exemptions", "(6)", "(i)"]


@needs_cfr
@pytest.mark.skipif(not DEV_QUESTIONS.exists(), reason=f"{DEV_QUESTIONS} not available")
def test_every_gold_path_of_the_dev_set_is_a_location(cfr_subs: list[SubChunk]) -> None:
    # The dev set's paths were checked by a separate parser: each must be a location read from the chunks.
    locations = set()
    for sub in cfr_subs:
        labels = _labels(label_path(sub.heading_path))
        locations |= {(_section(sub), "".join(f"({x})" for x in labels[:n])) for n in range(1, len(labels) + 1)}
    gold = [(q["gold_section"], p) for q in map(json.loads, DEV_QUESTIONS.read_text().splitlines())
            for p in q["gold_paths"]]
    assert len(gold) > 100
    assert [g for g in gold if g not in locations] == []


# ------------------------------------------------------------------------------------- spot checks


@needs_cfr
def test_273_2_i_to_o_are_letters_of_the_section_not_under_h(cfr_subs: list[SubChunk]) -> None:
    section_heading = "§ 273.2 Office operations and application processing."
    for starts, path in [("(i) Expedited service—(1)", "(i)(1)"),  # run-in: the paragraph is (i)(1)'s text
                         ("(j) PA, GA and categorically eligible households", "(j)"),
                         ("(2) Categorically eligible PA and SSI households.", "(j)(2)(i)"),
                         ("(k) SSI households", "(k)"),
                         ("(l) Households applying for or receiving social security", "(l)"),
                         ("(m) Households where not all", "(m)"),
                         ("(n) Authorized representatives", "(n)"),
                         ("(o) Each State agency", "(o)")]:
        sub = _sub(cfr_subs, "273.2", starts)
        assert label_path(sub.heading_path) == path, starts
        top = sub.heading_path[sub.heading_path.index(section_heading) + 1]
        assert top.startswith(f"({path[1]})")  # directly under the section, not under "(h) Delays in processing"
    assert label_path(_sub(cfr_subs, "273.2", "(A) State agency employees who").heading_path) == "(n)(4)(i)(A)"
    assert label_path(_sub(cfr_subs, "273.2", "(iii) In the event employers").heading_path) == "(n)(4)(iii)"


@needs_cfr
def test_273_11_l_to_s_and_273_15_l_to_u(cfr_subs: list[SubChunk]) -> None:
    for section, letters in (("273.11", "lmnopqrs"), ("273.15", "lmnopqrstu")):
        tops = [_labels(label_path(s.heading_path))[0] for s in cfr_subs
                if _section(s) == section and label_path(s.heading_path)]
        assert list(dict.fromkeys(t for t in tops if t >= "l")) == list(letters), section
    assert [label_path(s.heading_path) for s in cfr_subs if _section(s) == "273.11"
            and s.text.startswith("(v) Pursuant to Section 454(29)(E)")] == ["(o)(1)(v)", "(p)(1)(v)"]
    assert label_path(_sub(cfr_subs, "273.15", "(v) An executive officer").heading_path) == "(m)(1)(v)"
    assert label_path(_sub(cfr_subs, "273.15", "(u) Departmental review").heading_path) == "(u)"


@needs_cfr
def test_fifth_and_sixth_levels(cfr_subs: list[SubChunk]) -> None:
    # (1), (2) under (A), (B): the fifth level, not the second.
    assert label_path(_sub(cfr_subs, "273.2", "(2) In cases jointly processed").heading_path) == "(k)(1)(iii)(B)(2)"
    assert label_path(_sub(cfr_subs, "273.18", "(2) The claim is paid up;").heading_path) == "(n)(4)(ii)(B)(2)"
    assert label_path(_sub(cfr_subs, "273.18", "(5) Receiving and reporting.").heading_path) == "(n)(5)"
    # (i) under a fifth-level (3): the sixth.
    sub = _sub(cfr_subs, "273.9", "(ii) A payment received by a household or made on behalf")
    assert label_path(sub.heading_path) == "(d)(6)(iii)(D)(3)(ii)"


@needs_cfr
def test_273_18_table_rows_are_paragraphs(cfr_subs: list[SubChunk]) -> None:
    rows = {label_path(s.heading_path): s for s in cfr_subs if _section(s) == "273.18" and s.kind == "table"}
    assert rows["(b)(1)"].text.startswith("| (1) Intentional Program violation (IPV) claim |")
    assert rows["(b)(3)"].heading_path[-1] == "(3) Agency error (AE) claim"  # a first cell the others define
    assert rows["(c)(1)(i)"].heading_path[-1] == "(i)"  # a lone cell is a sentence, not a title
    assert rows["(c)(1)(i)"].text.startswith("| (i) As a State agency, you |\n|---|\n| must calculate")
    assert rows["(c)(1)(ii)(D)"].text.startswith("| (D) reduce the overpayment amount")
    assert rows["(g)(1)(iii)"].text.startswith("| (iii) For an IHE or AE claim")
    assert rows["(e)(3)(iv)(P)"].text.startswith("| (P) If allotment reduction is to be imposed")
    # Column headings before the first labelled row stay with their lead-in paragraph.
    header = _sub(cfr_subs, "273.18", "| An . . . | is . . . |")
    assert label_path(header.heading_path) == "(b)"


@needs_cfr
def test_documented_slips(cfr_subs: list[SubChunk]) -> None:
    assert [label_path(s.heading_path) for s in cfr_subs
            if _section(s) == "273.8" and s.text.startswith("(iv) Any other retirement")] == ["(e)(2)(iv)"] * 2
    assert label_path(_sub(cfr_subs, "273.8", "(i) Funds in a qualified tuition program").heading_path) \
        == "(e)(20)(i)"
    assert label_path(_sub(cfr_subs, "273.8", "(iii) Funds in any other education").heading_path) == "(e)(20)(iii)"
    assert label_path(_sub(cfr_subs, "273.14", "(ii) If a household receives PA/GA").heading_path) == "(b)(3)(ii)"
    assert label_path(_sub(cfr_subs, "273.21", "(6) Interview. (1) The State agency").heading_path) == "(q)(6)(i)"
    assert label_path(_sub(cfr_subs, "273.21", "(ii) The State agency shall schedule the interview at any time "
                                              "during the last month").heading_path) == "(q)(6)(ii)"
    # A heading with a parenthesis before a run-in label: "(n) Treasury's Offset Programs (TOP)—(1) …".
    assert label_path(_sub(cfr_subs, "273.18", "(n) Treasury's Offset Programs (TOP)").heading_path) == "(n)(1)(i)"
    assert label_path(_sub(cfr_subs, "273.18", "(ii) You must certify").heading_path) == "(n)(1)(ii)"


# ------------------------------------------------------------------------------------- the resolver alone


def _cites(paragraphs: list[list[str]]) -> list[str]:
    return [p.cite for p in resolve_labels(paragraphs)]


def test_letters_that_look_like_roman_numerals() -> None:
    seq = [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"], ["h"], ["1"], ["2"], ["3"]]
    # (i) after numbered paragraphs: the letter when (1) or (j) follows, the roman numeral when (ii) follows.
    assert _cites([*seq, ["i"], ["1"]])[-2:] == ["(i)", "(i)(1)"]
    assert _cites([*seq, ["i"], ["j"]])[-2:] == ["(i)", "(j)"]
    assert _cites([*seq, ["i"], ["ii"], ["j"]])[-3:] == ["(h)(3)(i)", "(h)(3)(ii)", "(j)"]
    assert _cites([*seq[:8], ["i"]])[-1] == "(i)"  # straight after (h): the letter
    # (v) and (x) after (iv) and (ix) are roman; after (u) and (w) with their own numbered items, letters.
    letters = [[chr(ord("a") + n)] for n in range(21)]  # a … u
    assert _cites([*letters, ["1"], ["i"], ["ii"], ["iii"], ["iv"], ["v"], ["w"]])[-2:] == ["(v)", "(w)"]
    romans_to_vi = [["i"], ["ii"], ["iii"], ["iv"], ["v"], ["vi"]]
    assert _cites([*letters, ["1"], *romans_to_vi, ["v"]])[-3:] == ["(u)(1)(v)", "(u)(1)(vi)", "(v)"]
    assert _cites([*letters, ["1"], ["2"], ["v"], ["1"]])[-2:] == ["(v)", "(v)(1)"]
    romans = [["i"], ["ii"], ["iii"], ["iv"], ["v"], ["vi"], ["vii"], ["viii"], ["ix"], ["x"], ["xi"]]
    assert _cites([["a"], ["1"], *romans])[-3:] == ["(a)(1)(ix)", "(a)(1)(x)", "(a)(1)(xi)"]
    # (l) after (k)(1)(i): the letter, although "l" is also a roman numeral.
    k = [[chr(ord("a") + n)] for n in range(11)]
    assert _cites([*k, ["1"], ["i"], ["ii"], ["l"], ["1"]])[-2:] == ["(l)", "(l)(1)"]


def test_six_levels_and_back() -> None:
    seq = [["a"], ["1"], ["i"], ["A"], ["1"], ["i"], ["ii"], ["2"], ["B"], ["ii"], ["2"], ["b"]]
    assert _cites(seq) == ["(a)", "(a)(1)", "(a)(1)(i)", "(a)(1)(i)(A)", "(a)(1)(i)(A)(1)", "(a)(1)(i)(A)(1)(i)",
                           "(a)(1)(i)(A)(1)(ii)", "(a)(1)(i)(A)(2)", "(a)(1)(i)(B)", "(a)(1)(ii)", "(a)(2)", "(b)"]


def test_run_in_labels_open_deeper_levels() -> None:
    placements = resolve_labels([["a"], ["b", "1"], ["2"], ["i"], ["3", "i"], ["ii"], ["c"]])
    assert [p.cite for p in placements] == ["(a)", "(b)", "(b)(2)", "(b)(2)(i)", "(b)(3)", "(b)(3)(ii)", "(c)"]
    assert placements[1].run_in == (("b", "1"),)
    assert placements[4].run_in == (("b", "3", "i"),)


def test_slips_cost_one_label_not_the_rest_of_the_section() -> None:
    repeat = resolve_labels([["a"], ["1"], ["i"], ["ii"], ["ii"], ["iii"], ["2"], ["b"]])
    assert [p.cite for p in repeat] == ["(a)", "(a)(1)", "(a)(1)(i)", "(a)(1)(ii)", "(a)(1)(ii)", "(a)(1)(iii)",
                                        "(a)(2)", "(b)"]
    assert [p.slip for p in repeat] == ["", "", "", "", "repeat", "", "", ""]
    gap = resolve_labels([["a"], ["1"], ["ii"], ["iii"], ["2"], ["b"]])
    assert [p.cite for p in gap] == ["(a)", "(a)(1)", "(a)(1)(ii)", "(a)(1)(iii)", "(a)(2)", "(b)"]
    assert gap[2].slip == "gap"
    wrong = resolve_labels([["a"], ["1", "1"], ["ii"], ["iii"], ["2"], ["b"]])
    assert [p.cite for p in wrong] == ["(a)", "(a)(1)", "(a)(1)(ii)", "(a)(1)(iii)", "(a)(2)", "(b)"]
    assert wrong[1].run_in == (("a", "1", "i"),) and wrong[1].slip == "wrong style"
    # A level whose first label was never seen (run in where it was not recognised).
    skipped = resolve_labels([["m"], ["5"], ["n"], ["ii"], ["iii"], ["o"]])
    assert [p.cite for p in skipped] == ["(m)", "(m)(5)", "(n)", "(n)(ii)", "(n)(iii)", "(o)"]
    # A section that starts below the top level, and paragraphs without labels.
    assert _cites([["1"], [], ["2"], ["i"]]) == ["(1)", "", "(2)", "(2)(i)"]


def test_leading_labels() -> None:
    assert leading_labels("(b) Special household requirements—(1) Required household combinations. The") == \
        ["b", "1"]
    assert leading_labels("(3) Boarders. (i) Residents of a commercial boarding house") == ["3", "i"]
    assert leading_labels("(2)(i) Text") == ["2", "i"]
    assert leading_labels("(vii)(A) Text") == ["vii", "A"]
    assert leading_labels("(i) Recertification (A) At recertification the State agency") == ["i", "A"]
    assert leading_labels("(n) Treasury's Offset Programs (TOP)—(1) Referring debts to TOP. (i) As a") == \
        ["n", "1", "i"]
    assert leading_labels("| (iii) For an IHE or AE claim, limit | x |") == ["iii"]
    # Citations and later labels in the text are not run-in labels.
    assert leading_labels("(D) The provisions of paragraph (i)(4)(iii)(C) of this section do not apply") == ["D"]
    assert leading_labels("(f) Expedited service. A State agency is not required to apply § 273.2(i) to") == ["f"]
    assert leading_labels("(l) School Attendance. Section 404(i) of Part A") == ["l"]
    assert leading_labels("(i) Funds in a qualified tuition program; (ii) Funds in a Coverdell account") == ["i"]
    assert leading_labels("(see below) not a label") == [] and leading_labels("Plain text (a) here") == []


def test_label_path_reads_the_trailing_labels_of_a_heading_path() -> None:
    assert label_path(["Subpart C", "§ 273.5 Students.", "(b) Exemptions", "(5)", "(i)"]) == "(b)(5)(i)"
    assert label_path(["Subpart C", "§ 273.5 Students."]) == ""
    assert section_number(["Subpart C", "§ 273.5 Students.", "(b) Exemptions"]) == "273.5"
    assert section_number(["§§ 273.30 Transitional", "(a)"]) == "273.30"
    assert section_number(["Chapter 4", "(a) General"]) == ""


# ------------------------------------------------------------------------------------- a state manual page


_MANUAL = """<!doctype html><html><head><title>Policy Manual 4.2 | State Dept</title></head><body>
<nav><a href="/">Home</a></nav>
<main>
<h1>Policy Manual</h1>
<h2>4.2 Students</h2>
<p>(a) General. A student enrolled half-time or more is not eligible unless exempt.</p>
<p>(b) Exemptions—(1) Age. The student is under 18 or 50 or older.</p>
<p>(2) Work. The student works 20 hours a week.</p>
<p>(c) Verification.</p>
<p>(d) Notices.</p><p>(e) Hearings.</p><p>(f) Records.</p><p>(g) Reviews.</p>
<p>(h) Work study. The student takes part in work study:</p>
<p>(1) Approval. The student must be approved.</p>
<p>(2) Start. The work must start during the term.</p>
<p>(i) Exceptions. These apply:</p>
<p>(1) Care of a child under 6.</p>
<p>(i) A single parent.</p>
<p>(ii) A parent with a spouse who works.</p>
<p>(A) The spouse's hours count once.</p>
<p>(1) Hours are weekly.</p>
<p>(2) Overtime counts.</p>
<p>(B) Other cases.</p>
<p>(2) Care of a child aged 6 to 11.</p>
<p>(j) Ending the exemption.</p>
</main></body></html>
"""


def test_state_manual_html_in_the_same_style(tmp_path: Path) -> None:
    page = tmp_path / "students.html"
    page.write_text(_MANUAL, encoding="utf-8")
    doc = load_html(page, "manual/students")
    subs = [s for c in Chunker().chunk(doc) for s in c.subchunks]
    paths = {s.text[:12]: label_path(s.heading_path) for s in subs}
    assert paths["(b) Exemptio"] == "(b)(1)"
    assert paths["(2) Work. Th"] == "(b)(2)"
    assert paths["(i) Exceptio"] == "(i)"  # the letter: (1) follows it
    assert paths["(1) Care of "] == "(i)(1)"
    assert paths["(i) A single"] == "(i)(1)(i)"  # the roman numeral: right after a (1) paragraph, and (ii) follows
    assert paths["(A) The spou"] == "(i)(1)(ii)(A)"
    assert paths["(1) Hours ar"] == "(i)(1)(ii)(A)(1)"  # fifth level
    assert paths["(B) Other ca"] == "(i)(1)(ii)(B)"
    assert paths["(2) Care of "] == "(i)(2)"
    assert paths["(j) Ending t"] == "(j)"
    sub = next(s for s in subs if s.text.startswith("(1) Hours are weekly"))
    assert sub.heading_path[:2] == ["4.2 Students", "(i) Exceptions"]


def test_labelled_headings_are_placed_by_the_same_sequence(tmp_path: Path) -> None:
    # A manual that makes some labelled paragraphs headings: they join the sequence instead of restarting it.
    page = tmp_path / "manual.html"
    page.write_text("""<main><h1>Manual</h1><h2>4.2 Students</h2><p>(a) General. Text a.</p>
<h3>(b) Exemptions</h3><p>Who is exempt.</p><p>(1) Age. Under 18.</p><h4>(2) Work</h4><p>Works 20 hours.</p>
<p>(i) Approved.</p><p>(ii) Paid.</p><h3>(c) Verification</h3><p>(1) Proof.</p>
<h3>(d) Notices—(1) Timing</h3><p>Ten days ahead.</p><p>(2) Content.</p><h2>4.3 Other</h2><p>More.</p>
</main>""", encoding="utf-8")
    chunks = Chunker().chunk(load_html(page, "manual"))
    paths = {s.text: s.heading_path for c in chunks for s in c.subchunks}
    assert paths["Who is exempt."] == ["4.2 Students", "(b) Exemptions"]
    assert paths["Works 20 hours."] == ["4.2 Students", "(b) Exemptions", "(2) Work"]
    assert label_path(paths["(ii) Paid."]) == "(b)(2)(ii)"
    assert label_path(paths["(1) Proof."]) == "(c)(1)"
    assert paths["Ten days ahead."] == ["4.2 Students", "(d) Notices—(1) Timing", "(1)"]
    assert label_path(paths["Ten days ahead."]) == "(d)(1)" and label_path(paths["(2) Content."]) == "(d)(2)"
    assert paths["More."] == ["4.3 Other"]
    # A heading's words are not in any paragraph, so the chunk text keeps them.
    assert "(c) Verification" in chunks[0].text


def test_pdf_manual_with_paragraphs_run_together(tmp_path: Path) -> None:
    from tests.rag.ingest.test_loaders import _pdf_bytes

    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(_pdf_bytes([
        ["Section 4.2 Students", "(a) General. A student enrolled half-time is not eligible", "unless exempt under",
         "(b)(1) of this section.", "(b) Exemptions", "(1) Age. The student is under 18.",
         "(2) Work. The student works 20 hours;", "(i) In a work study program; or", "(ii) Paid by an employer."],
        ["(c) Other rules. Text.", "(1) First rule.", "(2) Second rule.", "(i) Exceptions apply:"],
    ]))
    doc = load_file(pdf, pdf).documents[0]
    subs = [s for c in Chunker().chunk(doc) for s in c.subchunks]
    got = [(label_path(s.heading_path), s.text[:12], s.page) for s in subs]
    assert got == [
        ("(a)", "(a) General.", 1),  # a wrapped line starting with a citation "(b)(1) of" stays in its paragraph
        ("(b)(1)", "(1) Age. The", 1),
        ("(b)(2)", "(2) Work. Th", 1),
        ("(b)(2)(i)", "(i) In a wor", 1),
        ("(b)(2)(ii)", "(ii) Paid by", 1),
        ("(c)", "(c) Other ru", 2),
        ("(c)(1)", "(1) First ru", 2),
        ("(c)(2)", "(2) Second r", 2),
        ("(c)(2)(i)", "(i) Exceptio", 2),
    ]
    assert subs[0].text.endswith("unless exempt under (b)(1) of this section.")


# ------------------------------------------------------------------------------------- the measuring script


@needs_cfr
def test_legal_paths_benchmark_counts_wrong_paths() -> None:
    from benchmarks.legal_paths import count
    from rag.documents import Chunk, SourceDocument

    now = count(CFR_273, Chunker())
    assert (now.total, now.exact_wrong, now.prefix_wrong) == (2502, 0, 0)

    class OneLevelShort(Chunker):
        """A chunker that names every labelled paragraph's parent instead of the paragraph itself."""

        def chunk(self, doc: SourceDocument) -> list[Chunk]:
            chunks = super().chunk(doc)
            for c in chunks:
                for s in c.subchunks:
                    if label_path(s.heading_path):
                        s.heading_path = s.heading_path[:-1]
            return chunks

    short = count(CFR_273, OneLevelShort(), show=1)
    assert short.exact_wrong > 2000 and short.prefix_wrong == 0 and len(short.examples) == 1
