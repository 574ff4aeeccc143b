"""Chunk boundaries on tricky Markdown: sections, merged siblings, glued lists and tables, regulation labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.documents import Chunk, SourceDocument
from rag.ingest.chunking import Chunker
from rag.ingest.loaders import load_markdown
from rag.ingest.text_blocks import markdown_blocks

# ../shared beside the repo
CFR_273 = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "snap" / "7-cfr-273.md"


def _doc(markdown: str, doc_id: str = "doc") -> SourceDocument:
    return SourceDocument(doc_id=doc_id, title="Test Document", blocks=markdown_blocks(markdown))


def _words(n: int, tag: str) -> str:
    """n distinct words ending with a full stop, so that a lost or reordered paragraph is visible."""
    return " ".join(f"{tag}w{i}" for i in range(n)) + "."


def _norm(text: str) -> str:
    return " ".join(text.split())


def _all_subs(chunks: list[Chunk]) -> list[str]:
    return [s.text for c in chunks for s in c.subchunks]


# ------------------------------------------------------------------------------------- verbatim sub-chunks

_TRICKY = """---
title: Tricky Markdown
tags: test
---

<!-- an editor's note that must not be quoted -->

# Tricky   Markdown

An opening paragraph that is
wrapped over   three source lines,	with a tab
and double  spaces.

## Lists ##

Bring these documents:
- A photo ID such as a
  driver's license or passport
- Proof of income

Or any of these:

* loose item one

* loose item two

**Authority:**

7 U.S.C. 2011-2036.

### A table

| Household size | Monthly limit |
|---|---|
|  1  | $1,632 |
| 2 | $2,215 |

```
code   stays   as is
```

A last paragraph.
"""


def test_every_subchunk_is_verbatim_source_text(tmp_path: Path) -> None:
    path = tmp_path / "tricky.md"
    path.write_text(_TRICKY, encoding="utf-8")
    doc = load_markdown(path, "tricky")
    chunks = Chunker(max_words=50).chunk(doc)
    source = _norm(_TRICKY)
    subs = _all_subs(chunks)
    assert subs == [b.text for b in doc.blocks if b.kind != "heading"]  # nothing lost, nothing reordered
    for text in subs:
        assert _norm(text) in source, text
    assert "editor's note" not in " ".join(subs)
    assert subs[0] == "An opening paragraph that is wrapped over three source lines, with a tab and double spaces."
    assert "- A photo ID such as a driver's license or passport\n- Proof of income" in subs
    assert "* loose item one\n* loose item two" in subs  # a loose list is one block
    # "**Authority:**" acts as a minor heading under "Lists"; the title heading is not part of the paths.
    assert [(c.heading_path, [s.heading_path for s in c.subchunks]) for c in chunks] == [
        ([], [[]]),
        (["Lists"], [["Lists"]] * 4 + [["Lists", "Authority"]]),
        (["Lists", "A table"], [["Lists", "A table"]] * 3),
    ]
    assert "| 1 | $1,632 |" in next(s for s in subs if s.startswith("| Household size"))
    assert "code   stays   as is" in next(s for s in subs if s.startswith("```"))  # code keeps its spacing


# ------------------------------------------------------------------------------------- lead-ins stay glued


def test_list_and_table_stay_with_their_lead_in_sentence() -> None:
    lead_list = "You need these documents:"
    items = "\n".join(f"- Document number {i} here" for i in range(5))  # 25 words
    lead_table = "The income limits are:"
    table = "| Size | Limit |\n| 1 | 100 |\n| 2 | 200 |"  # 15 words
    md = f"## Documents\n\n{_words(30, 'a')}\n\n{lead_list}\n{items}\n\n{_words(10, 'b')}\n\n{lead_table}\n\n{table}\n"
    # 30 + 4 fits under 50, 30 + 4 + 25 does not: a naive splitter cuts between the lead-in and its list.
    chunks = Chunker(max_words=50).chunk(_doc(md))
    kinds = [[s.kind for s in c.subchunks] for c in chunks]
    texts = [[s.text for s in c.subchunks] for c in chunks]
    assert kinds == [["paragraph"], ["paragraph", "list", "paragraph"], ["paragraph", "table"]]
    assert texts[1][:2] == [lead_list, items]
    assert texts[2] == [lead_table, table]
    assert all(c.heading_path == ["Documents"] for c in chunks)


def test_lead_in_and_list_longer_than_the_limit_stay_together() -> None:
    items = "\n".join(f"- {_words(8, f'i{i}')}" for i in range(8))  # 72 words
    md = f"## Steps\n\n{_words(20, 'a')}\n\nDo all of the following:\n\n{items}\n\n{_words(20, 'z')}\n"
    chunks = Chunker(max_words=50).chunk(_doc(md))
    texts = [[s.text for s in c.subchunks] for c in chunks]
    assert texts == [[_words(20, "a")], ["Do all of the following:", items], [_words(20, "z")]]
    assert chunks[1].word_count == 5 + 72 > 50


# ------------------------------------------------------------------------------------- heading paths

_DEEP = f"""# Guide

## Eligibility

### Income

#### Gross income

{_words(20, 'g')}

#### Net income

{_words(20, 'n')}

#### Deductions

{_words(90, 'd')}

### Resources

{_words(40, 'r1')}

{_words(40, 'r2')}

{_words(40, 'r3')}

## Applying

{_words(30, 'ap')}
"""


def test_deep_heading_paths_and_merged_siblings() -> None:
    chunks = Chunker(max_words=100).chunk(_doc(_DEEP))
    summary = [(c.heading_path, [(s.heading_path[-1], s.text.split()[0]) for s in c.subchunks]) for c in chunks]
    assert summary == [
        # Two short #### siblings merge; the chunk is named by their common parent.
        (["Guide", "Eligibility", "Income"], [("Gross income", "gw0"), ("Net income", "nw0")]),
        # A #### section that fits alone keeps its full path.
        (["Guide", "Eligibility", "Income", "Deductions"], [("Deductions", "dw0")]),
        # A section too big for one chunk is split at paragraphs; every part keeps the section's path.
        (["Guide", "Eligibility", "Resources"], [("Resources", "r1w0"), ("Resources", "r2w0")]),
        (["Guide", "Eligibility", "Resources"], [("Resources", "r3w0")]),
        (["Guide", "Applying"], [("Applying", "apw0")]),
    ]
    merged = chunks[0]
    assert [s.heading_path for s in merged.subchunks] == [
        ["Guide", "Eligibility", "Income", "Gross income"],
        ["Guide", "Eligibility", "Income", "Net income"],
    ]
    # The answerer's text names the sub-sections the merged paragraphs come from.
    assert merged.text == f"Gross income\n\n{_words(20, 'g')}\n\nNet income\n\n{_words(20, 'n')}"
    assert merged.heading_text == "Test Document > Guide > Eligibility > Income"
    assert [c.ordinal for c in chunks] == list(range(5))


def test_heading_whitespace_is_normalised_in_paths() -> None:
    md = f"#   Guide \t  Title  #\n\n##  Sub    One ##\n\n{_words(5, 'a')}\n"
    (chunk,) = Chunker(max_words=50).chunk(_doc(md))
    assert chunk.heading_path == ["Guide Title", "Sub One"]
    assert chunk.subchunks[0].text == _words(5, "a")


def test_small_document_is_one_chunk_with_common_path() -> None:
    md = f"## A\n\n{_words(10, 'a')}\n\n### A1\n\n{_words(10, 'b')}\n\n## B\n\n{_words(10, 'c')}\n"
    (chunk,) = Chunker(max_words=100).chunk(_doc(md))
    assert chunk.heading_path == []
    assert [s.heading_path for s in chunk.subchunks] == [["A"], ["A", "A1"], ["B"]]
    assert chunk.text == f"A\n\n{_words(10, 'a')}\n\nA1\n\n{_words(10, 'b')}\n\nB\n\n{_words(10, 'c')}"


# ------------------------------------------------------------------------------------- long sections


def _long_section_doc() -> tuple[SourceDocument, list[str]]:
    paragraphs = [_words(100, f"p{n}_") for n in range(50)]  # 5,000 words
    assert all(len(p.split()) == 100 for p in paragraphs)
    md = "# Manual\n\n## Work Requirements\n\n" + "\n\n".join(paragraphs) + "\n"
    return _doc(md, doc_id="manual"), paragraphs


def test_long_section_is_split_at_paragraphs_without_loss() -> None:
    doc, paragraphs = _long_section_doc()
    chunks = Chunker(max_words=450).chunk(doc)
    # Greedy packing: 4 paragraphs per chunk (400 words; a fifth would make 500), the rest in the last one.
    assert [len(c.subchunks) for c in chunks] == [4] * 12 + [2]
    for chunk in chunks:
        assert chunk.word_count <= 450 or len(chunk.subchunks) == 1
        assert chunk.heading_path == ["Manual", "Work Requirements"]
    assert _all_subs(chunks) == paragraphs
    assert " ".join(_all_subs(chunks)) == " ".join(paragraphs)


def test_chunk_and_subchunk_ids_are_stable_and_unique() -> None:
    doc1, _ = _long_section_doc()
    doc2, _ = _long_section_doc()
    run1 = Chunker(max_words=450).chunk(doc1)
    run2 = Chunker(max_words=450).chunk(doc2)
    ids1 = [(c.chunk_id, [s.sub_id for s in c.subchunks]) for c in run1]
    ids2 = [(c.chunk_id, [s.sub_id for s in c.subchunks]) for c in run2]
    assert ids1 == ids2
    chunk_ids = [c.chunk_id for c in run1]
    sub_ids = [s.sub_id for c in run1 for s in c.subchunks]
    assert len(set(chunk_ids)) == len(chunk_ids)
    assert len(set(sub_ids)) == len(sub_ids)
    assert chunk_ids[:2] == ["manual::0", "manual::1"]
    assert run1[1].subchunks[0].sub_id == "manual::1.0"
    assert all(s.chunk_id == c.chunk_id for c in run1 for s in c.subchunks)
    assert len({c.content_hash for c in run1}) == 1 and run1[0].content_hash == doc1.content_hash


def test_paragraph_longer_than_limit_is_its_own_intact_chunk() -> None:
    huge = _words(600, "h")
    md = f"## Section\n\n{_words(20, 'a')}\n\n{huge}\n\n{_words(20, 'z')}\n"
    chunks = Chunker(max_words=450).chunk(_doc(md))
    assert [[s.text for s in c.subchunks] for c in chunks] == [[_words(20, "a")], [huge], [_words(20, "z")]]
    assert chunks[1].word_count == 600
    assert chunks[1].text == huge


# ------------------------------------------------------------------------------------- regulations

_REG = """## Subpart C—Education and Employment

### § 273.5 Students.

(a) Applicability. An individual who is enrolled at least half-time in an institution of higher education shall be ineligible to participate in SNAP unless the individual qualifies for one of the exemptions listed below.

(b) Student Exemptions. To be eligible for the program, a student as defined in paragraph (a) of the section must meet at least one of the following criteria.

(1) Be age 17 or younger or age 50 or older;

(2) Be participating in a State or federally financed work study program.

(i) roman sub item: the student must be approved for work study at the time of application.

(c) The enrollment status of a student shall begin on the first day of the school term of the institution of higher education and continue through normal vacations.
"""  # noqa: E501 - the regulation's paragraphs, one a line as in the source


def test_regulation_labels_become_sections() -> None:
    # (a) 34 words, (b) with its items 68, (c) 28: (a)+(b) and (b)+(c) exceed 80, so (b) is a chunk of its own.
    chunks = Chunker(max_words=80).chunk(_doc(_REG))
    base = ["Subpart C—Education and Employment", "§ 273.5 Students."]
    assert [c.heading_path for c in chunks] == [[*base, "(a) Applicability"], [*base, "(b) Student Exemptions"],
                                                 [*base, "(c)"]]
    b_chunk = chunks[1]
    assert b_chunk.heading_path[-1] == "(b) Student Exemptions"
    assert [(s.heading_path[len(base):], s.text[:4]) for s in b_chunk.subchunks] == [
        (["(b) Student Exemptions"], "(b) "),
        (["(b) Student Exemptions", "(1)"], "(1) "),
        (["(b) Student Exemptions", "(2)"], "(2) "),
        (["(b) Student Exemptions", "(2)", "(i)"], "(i) "),  # roman sub-item of (2), not a letter section (i)
    ]
    # Derived label headings are not repeated in the text: the paragraphs start with their labels already.
    assert b_chunk.text == "\n\n".join(s.text for s in b_chunk.subchunks)


def test_regulation_letter_i_after_h_is_a_letter_unless_numbered_items_intervene() -> None:
    def paragraph(label: str) -> str:
        return f"({label}) {_words(30, label)}"

    # (h) directly followed by (i): the next letter.
    md = "### § 1.1 Rules.\n\n" + "\n\n".join(paragraph(x) for x in "abcdefghi") + "\n"
    chunks = Chunker(max_words=50).chunk(_doc(md))
    assert [c.heading_path[-1] for c in chunks] == [f"({x})" for x in "abcdefghi"]

    # (h), (1), then (i): a roman sub-item of (1), not the letter after (h).
    md = "### § 1.1 Rules.\n\n" + "\n\n".join(paragraph(x) for x in [*"abcdefgh", "1", "i"]) + "\n"
    chunks = Chunker(max_words=50).chunk(_doc(md))
    subs = [s for c in chunks for s in c.subchunks]
    assert [(s.text[:4], s.heading_path) for s in subs[-3:]] == [
        ("(h) ", ["§ 1.1 Rules.", "(h)"]),
        ("(1) ", ["§ 1.1 Rules.", "(h)", "(1)"]),
        ("(i) ", ["§ 1.1 Rules.", "(h)", "(1)", "(i)"]),
    ]
    assert chunks[-1].heading_path == ["§ 1.1 Rules.", "(h)", "(1)", "(i)"]


def test_non_regulation_parentheses_do_not_create_sections() -> None:
    # Only a document with both (a) and (b) paragraphs is a regulation.
    md = f"## Notes\n\n(1) {_words(30, 'x')}\n\n(2) {_words(30, 'y')}\n\n(a) {_words(30, 'z')}\n"
    chunks = Chunker(max_words=50).chunk(_doc(md))
    assert all(s.heading_path == ["Notes"] for c in chunks for s in c.subchunks)


@pytest.mark.skipif(not CFR_273.exists(), reason=f"{CFR_273} not available")
def test_real_regulation_students_section() -> None:
    doc = load_markdown(CFR_273, "snap/7-cfr-273")
    chunks = Chunker().chunk(doc)
    assert len(chunks) > 100
    assert all(c.subchunks and c.text.strip() for c in chunks)
    assert all(s.text.strip() for c in chunks for s in c.subchunks)
    matches = [
        c for c in chunks
        if "§ 273.5 Students." in c.heading_path and "(b) Student Exemptions" in c.heading_path
        and "Be employed for a minimum of 20 hours per week" in c.text
    ]
    assert len(matches) == 1
    assert matches[0].heading_path[-2:] == ["§ 273.5 Students.", "(b) Student Exemptions"]
    assert matches[0].word_count <= 450
    assert len({c.chunk_id for c in chunks}) == len(chunks)


def test_max_words_too_small_is_rejected() -> None:
    with pytest.raises(ValueError, match="max_words"):
        Chunker(max_words=10)
    assert Chunker(max_words=50).max_words == 50
