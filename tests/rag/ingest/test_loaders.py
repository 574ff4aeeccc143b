"""Loaders: every supported format becomes SourceDocuments made of structural blocks, or a LoadError that says why."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rag.documents import SourceDocument
from rag.ingest.loaders import LoadError, LoadResult, iter_files, load_file, load_markdown


def _load_one(path: Path) -> SourceDocument:
    result = load_file(path, path)
    assert isinstance(result, LoadResult)
    assert result.problems == []
    assert len(result.documents) == 1
    return result.documents[0]


def _by_kind(doc: SourceDocument, kind: str) -> list[str]:
    return [b.text for b in doc.blocks if b.kind == kind]


# --------------------------------------------------------------------------------------------- Markdown


def test_markdown_front_matter_fills_document_fields(tmp_path: Path) -> None:
    path = tmp_path / "snap-students.md"
    path.write_text(
        "---\n"
        "title: SNAP for College Students\n"
        "url: https://www.fns.usda.gov/snap/students\n"
        "tags: snap, students\n"
        "groups: navigators, staff\n"
        "updated: 2025-01-17\n"
        "audience: caseworkers\n"
        "---\n"
        "\n"
        "Students enrolled half-time or more usually cannot get SNAP.\n"
        "\n"
        "## Exemptions\n"
        "\n"
        "A student who works 20 hours a week may qualify.\n",
        encoding="utf-8",
    )
    doc = load_markdown(path, "snap-students")
    assert doc.doc_id == "snap-students"
    assert doc.title == "SNAP for College Students"
    assert doc.url == "https://www.fns.usda.gov/snap/students"
    assert doc.tags == ["snap", "students"]
    assert doc.groups == ["navigators", "staff"]
    assert doc.updated == "2025-01-17"
    assert doc.metadata == {"audience": "caseworkers"}
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "Students enrolled half-time or more usually cannot get SNAP."),
        ("heading", "Exemptions"),
        ("paragraph", "A student who works 20 hours a week may qualify."),
    ]


def test_markdown_without_front_matter_takes_title_from_first_heading(tmp_path: Path) -> None:
    path = tmp_path / "some-file-name.md"
    path.write_text("# Applying for LIHEAP\n\nContact your local agency to apply.\n\n## Documents\n\nBring ID.\n")
    doc = load_markdown(path, "x")
    assert doc.title == "Applying for LIHEAP"
    assert doc.url is None
    assert doc.tags == []
    assert doc.groups == ["all"]
    assert doc.updated  # the file's mtime stands in
    # The title heading is not repeated as a block; the rest is kept in order.
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "Contact your local agency to apply."),
        ("heading", "Documents"),
        ("paragraph", "Bring ID."),
    ]


def test_markdown_html_comments_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "c.md"
    path.write_text(
        "<!-- generated from eCFR; SECRET_COMMENT -->\n"
        "# Title\n\n"
        "Visible text <!-- INLINE_COMMENT --> continues here.\n\n"
        "<!--\nMULTI_LINE_COMMENT\n## Not A Heading\n-->\n"
        "Last paragraph.\n"
    )
    doc = load_markdown(path, "c")
    joined = "\n".join(b.text for b in doc.blocks)
    assert "COMMENT" not in joined
    assert "Not A Heading" not in joined
    assert doc.title == "Title"
    assert _by_kind(doc, "paragraph") == ["Visible text continues here.", "Last paragraph."]
    assert _by_kind(doc, "heading") == []


def test_load_file_sets_absolute_source_path_and_doc_id(tmp_path: Path) -> None:
    folder = tmp_path / "kb" / "snap"
    folder.mkdir(parents=True)
    path = folder / "apply.md"
    path.write_text("# Apply\n\nApply online.\n")
    result = load_file(path, tmp_path / "kb")
    (doc,) = result.documents
    assert doc.source_path == str(path.resolve())
    assert doc.doc_id == "kb/snap/apply"


# --------------------------------------------------------------------------------------------- HTML

_PAGE = """<!doctype html>
<html><head>
<title>Students | Food and Nutrition Service</title>
<link rel="canonical" href="https://www.fns.usda.gov/snap/students">
<style>.banner {{ color: red }} /* STYLE_TEXT */</style>
<script>var tracking = "SCRIPT_TEXT";</script>
</head>
<body>
<header><a href="/">HEADER_TEXT Home</a></header>
<nav><ul><li>NAV_TEXT Programs</li><li>NAV_TEXT Contact</li></ul></nav>
<div class="cookie-banner">COOKIE_TEXT We use cookies. <button>Accept</button></div>
<{root}>
<h1>SNAP Eligibility for Students</h1>
<div class="cookie-banner">COOKIE_TEXT inside the content</div>
<p>Students enrolled at least <strong>half-time</strong> in college are usually
   not eligible (see <a href="/snap/rules">the rules</a>).</p>
<script>var inside = "SCRIPT_TEXT";</script>
<h2>Exemptions</h2>
<p>A student may qualify if they meet one of these:</p>
<ul><li>Work <b>20</b> hours a week</li><li>Care for a child under <em>6</em>, or a disabled adult</li></ul>
<table>
<tr><th>a</th><th>b</th></tr>
<tr><td>1</td><td>2</td></tr>
</table>
</{root_close}>
<footer>FOOTER_TEXT Privacy policy</footer>
</body></html>
"""


@pytest.mark.parametrize(
    ("root", "root_close"),
    [("main", "main"), ('div id="content"', "div")],
    ids=["with-main", "without-main"],
)
def test_html_keeps_main_content_only(tmp_path: Path, root: str, root_close: str) -> None:
    path = tmp_path / "students.html"
    path.write_text(_PAGE.format(root=root, root_close=root_close), encoding="utf-8")
    doc = _load_one(path)
    assert doc.title == "SNAP Eligibility for Students"  # the <h1>, cleaner than <title>
    assert doc.url == "https://www.fns.usda.gov/snap/students"
    # Whitespace normalised only: the wrapped line is joined, inline markup adds no space before ")." or ",".
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "Students enrolled at least half-time in college are usually not eligible (see the rules)."),
        ("heading", "Exemptions"),
        ("paragraph", "A student may qualify if they meet one of these:"),
        ("list", "- Work 20 hours a week\n- Care for a child under 6, or a disabled adult"),
        ("table", "| a | b |\n| 1 | 2 |"),
    ]
    assert [b.level for b in doc.blocks if b.kind == "heading"] == [2]
    everything = "\n".join(b.text for b in doc.blocks)
    for chrome in ("HEADER_TEXT", "NAV_TEXT", "COOKIE_TEXT", "SCRIPT_TEXT", "STYLE_TEXT", "FOOTER_TEXT", "Accept"):
        assert chrome not in everything


def test_html_without_canonical_has_no_url_and_title_from_h1(tmp_path: Path) -> None:
    path = tmp_path / "p.html"
    path.write_text("<html><body><main><h1>Heating Help</h1><p>Call 211.</p></main></body></html>")
    doc = _load_one(path)
    assert doc.url is None
    assert doc.title == "Heating Help"
    assert [(b.kind, b.text) for b in doc.blocks] == [("paragraph", "Call 211.")]


# --------------------------------------------------------------------------------------------- plain text


def test_plain_text_headings_paragraphs_and_lists(tmp_path: Path) -> None:
    path = tmp_path / "survivors.txt"
    path.write_text(
        "Survivors Benefits Guide\n"
        "\n"
        "ELIGIBILITY RULES\n"
        "\n"
        "Most people can apply online or in person. Ask for help if you need it.\n"
        "\n"
        "1. Forgetting to Update Address\n"
        "If you move, tell the office within 10 days.\n"
        "\n"
        "For Your Widow Or Widower\n"
        "Your spouse may get benefits after you die.\n"
        "\n"
        "The office is open on weekdays\n"
        "and closed on federal holidays.\n"
        "\n"
        "- Photo ID\n"
        "- Proof of income\n"
        "- Lease or mortgage statement\n"
    )
    doc = _load_one(path)
    assert doc.title == "Survivors Benefits Guide"
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("heading", "ELIGIBILITY RULES"),
        ("paragraph", "Most people can apply online or in person. Ask for help if you need it."),
        ("heading", "1. Forgetting to Update Address"),
        ("paragraph", "If you move, tell the office within 10 days."),
        ("heading", "For Your Widow Or Widower"),
        ("paragraph", "Your spouse may get benefits after you die."),
        ("paragraph", "The office is open on weekdays and closed on federal holidays."),
        ("list", "- Photo ID\n- Proof of income\n- Lease or mortgage statement"),
    ]


def test_plain_text_is_heading_line_heuristic() -> None:
    from rag.ingest.text_blocks import is_heading_line

    for heading in ("1. Forgetting to Update Address", "For Your Widow Or Widower", "ELIGIBILITY RULES",
                    "SSI AND YOU", "What Is A Survivor?"):
        assert is_heading_line(heading), heading
    for sentence in ("You must report changes within 10 days.", "What is a survivor?",
                     "Most people can apply online, by phone or in person at a local office near them today",
                     "- Photo ID", ""):
        assert not is_heading_line(sentence), sentence


# --------------------------------------------------------------------------------------------- PDF


def _pdf_bytes(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF: one Helvetica font, one content stream per page, one text line per entry."""
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "16 TL", "72 720 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


_TWO_PAGES = [
    ["Student Rules", "Students must work 20 hours a week to qualify."],
    ["Income Limits", "Gross income must be at or below 130 percent of poverty."],
]


def test_pdf_text_per_page_with_page_numbers(tmp_path: Path) -> None:
    path = tmp_path / "rules.pdf"
    path.write_bytes(_pdf_bytes(_TWO_PAGES))
    doc = _load_one(path)
    assert doc.title == "Student Rules"  # first heading of page 1
    assert [(b.kind, b.text, b.page) for b in doc.blocks] == [
        ("paragraph", "Students must work 20 hours a week to qualify.", 1),
        ("heading", "Income Limits", 2),
        ("paragraph", "Gross income must be at or below 130 percent of poverty.", 2),
    ]


def test_pdf_random_bytes_raise_load_error(tmp_path: Path) -> None:
    rnd = random.Random(1234)
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\n" + bytes(rnd.randrange(256) for _ in range(2000)))
    with pytest.raises(LoadError, match="PDF"):
        load_file(path, path)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"xref\n0 8\n", b"xref\n0 80000000000\n"),  # absurd xref size: pypdf raises LimitReachedError
        (b"trailer\n<< /Size 8 /Root 1 0 R >>", b"trailer\n/Size 8 /Root 1 0 R >>"),  # AttributeError in pypdf
    ],
    ids=["huge-xref", "trailer-not-a-dict"],
)
def test_pdf_damaged_structure_raises_load_error(tmp_path: Path, old: bytes, new: bytes) -> None:
    good = _pdf_bytes(_TWO_PAGES)
    assert old in good
    path = tmp_path / "damaged.pdf"
    path.write_bytes(good.replace(old, new))
    with pytest.raises(LoadError, match="PDF"):
        load_file(path, path)


def test_pdf_without_text_raises_load_error(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(_pdf_bytes([[], []]))
    with pytest.raises(LoadError, match="PDF has no extractable text"):
        load_file(path, path)


@pytest.mark.parametrize("suffix", [".md", ".html", ".txt", ".pdf", ".jsonl"])
def test_empty_file_raises_load_error(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"empty{suffix}"
    path.write_bytes(b"")
    with pytest.raises(LoadError) as info:
        load_file(path, path)
    assert str(info.value) == "empty file"


# --------------------------------------------------------------------------------------------- JSONL


def _jsonl(path: Path, lines: list[object]) -> None:
    path.write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines) + "\n",
        encoding="utf-8",
    )


def test_jsonl_documents_keep_fields_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    _jsonl(path, [
        {"doc_id": "ssa-1", "title": "Survivors", "text": "Widows can get benefits at 60.",
         "url": "https://ssa.gov/survivors", "tags": ["ssa", "survivors"], "groups": "navigators, staff",
         "updated": "2024-05-01", "source": "ssa.gov", "rank": 3},
        {"doc_id": "ssa-2", "title": "Retirement",
         "text": "# Retirement\n\nYou can retire at 62.\n\n## Delaying\n\nWait."},
    ])
    result = load_file(path, path)
    assert result.problems == []
    first, second = result.documents
    assert (first.doc_id, first.title, first.url) == ("ssa-1", "Survivors", "https://ssa.gov/survivors")
    assert first.tags == ["ssa", "survivors"]
    assert first.groups == ["navigators", "staff"]
    assert first.updated == "2024-05-01"
    assert first.metadata == {"source": "ssa.gov", "rank": 3}
    assert [(b.kind, b.text) for b in first.blocks] == [("paragraph", "Widows can get benefits at 60.")]
    assert first.source_path == str(path.resolve())
    assert second.groups == ["all"] and second.tags == [] and second.url is None
    # Markdown text is parsed as Markdown; a first heading repeating the title is dropped.
    assert [(b.kind, b.text) for b in second.blocks] == [
        ("paragraph", "You can retire at 62."), ("heading", "Delaying"), ("paragraph", "Wait.")]


def test_jsonl_bad_lines_reported_with_line_numbers_good_lines_load(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    _jsonl(path, [
        {"doc_id": "a", "title": "A", "text": "Alpha text."},
        '{"doc_id": "b", "title": "B", "text": "unterminated',
        "",
        {"doc_id": "c", "title": "C"},
        {"doc_id": "d", "title": "D", "text": "Delta text."},
        "[1, 2]",
    ])
    result = load_file(path, path)
    assert [d.doc_id for d in result.documents] == ["a", "d"]
    assert len(result.problems) == 3
    assert result.problems[0].startswith("line 2: invalid JSON")
    assert result.problems[1] == "line 4: missing or empty field(s) text"
    assert result.problems[2] == "line 6: not a JSON object"


def test_jsonl_only_bad_lines_raises_load_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    _jsonl(path, ["not json", {"doc_id": "x", "title": "X", "text": "   "}])
    with pytest.raises(LoadError, match="no valid document lines") as info:
        load_file(path, path)
    assert "line 1: invalid JSON" in str(info.value)
    assert "line 2: missing or empty field(s) text" in str(info.value)


def test_jsonl_duplicate_doc_id_keeps_first(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    _jsonl(path, [
        {"doc_id": "same", "title": "First", "text": "First text."},
        {"doc_id": "same", "title": "Second", "text": "Second text."},
    ])
    result = load_file(path, path)
    assert [(d.doc_id, d.title) for d in result.documents] == [("same", "First")]
    assert result.problems == ["line 2: duplicate doc_id 'same' (kept the first)"]


def test_jsonl_unicode_line_separators_inside_strings_do_not_split_records(tmp_path: Path) -> None:
    # JSON allows raw U+2028 / U+0085 inside strings and json.dumps(ensure_ascii=False) writes them raw;
    # only "\n" ends a JSONL record.
    path = tmp_path / "u.jsonl"
    _jsonl(path, [
        {"doc_id": "a", "title": "A", "text": "First part\u2028second part."},
        {"doc_id": "b", "title": "B", "text": "Caf\u00e9\u0085menu."},
    ])
    result = load_file(path, path)
    assert result.problems == []
    assert [d.doc_id for d in result.documents] == ["a", "b"]
    assert "second part." in result.documents[0].blocks[0].text


def test_jsonl_crlf_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b'{"doc_id": "a", "title": "A", "text": "Alpha."}\r\n'
                     b'{"doc_id": "b", "title": "B", "text": "Beta."}\r\n')
    result = load_file(path, path)
    assert result.problems == []
    assert [d.blocks[0].text for d in result.documents] == ["Alpha.", "Beta."]


# --------------------------------------------------------------------------------------------- files


def test_unsupported_suffix_names_supported_types(tmp_path: Path) -> None:
    path = tmp_path / "notes.docx"
    path.write_bytes(b"PK\x03\x04 not really a docx")
    with pytest.raises(LoadError) as info:
        load_file(path, path)
    message = str(info.value)
    assert message.startswith("unsupported file type .docx")
    for suffix in (".md", ".html", ".txt", ".pdf", ".jsonl"):
        assert suffix in message


def test_cp1252_text_file_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "legacy.txt"
    legacy = "Caf\u00e9 Benefits\n\nThe na\u00efve \u201cquote\u201d costs \u20ac5 \u2013 or less.\n"
    path.write_bytes(legacy.encode("cp1252"))
    doc = _load_one(path)
    assert doc.title == "Caf\u00e9 Benefits"
    assert [b.text for b in doc.blocks] == ["The na\u00efve \u201cquote\u201d costs \u20ac5 \u2013 or less."]


def test_iter_files_recurses_sorts_and_skips(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / "a" / ".cache").mkdir()
    for rel in ("z.md", "b/page.HTML", "a/deep/doc.pdf", "a/notes.txt", "a/corpus.jsonl", "b/image.png",
                "b/data.csv", ".git/HEAD.md", "a/.cache/x.md", ".hidden.md"):
        (tmp_path / rel).write_text("x")
    found = [p.relative_to(tmp_path).as_posix() for p in iter_files(tmp_path)]
    assert found == ["a/corpus.jsonl", "a/deep/doc.pdf", "a/notes.txt", "b/page.HTML", "z.md"]
    single = tmp_path / "b" / "data.csv"
    assert list(iter_files(single)) == [single]  # a file given explicitly is passed through as is


def test_html_content_classes_that_contain_chrome_words_are_kept() -> None:
    from rag.ingest.html_extract import extract_html

    page = extract_html('<body><div class="social-security-benefits"><p>SSI pays monthly.</p></div>'
                        '<div class="share-links"><p>Share this</p></div><div id="main-menu">Menu</div></body>')
    texts = [b.text for b in page.blocks]
    assert texts == ["SSI pays monthly."]


def test_front_matter_list_syntax_and_numbered_list_after_lead_in(tmp_path: Path) -> None:
    from rag.ingest.loaders import load_markdown

    path = tmp_path / "steps.md"
    path.write_text("---\ntags: [snap, students]\n---\n# Steps\n\nFollow these steps:\n1. Call us\n2. Send the form\n",
                    encoding="utf-8")
    doc = load_markdown(path, "steps")
    assert doc.tags == ["snap", "students"]
    assert [(b.kind, b.text) for b in doc.blocks] == [("paragraph", "Follow these steps:"),
                                                     ("list", "1. Call us\n2. Send the form")]


def test_plain_text_title_case_numbered_items_and_tab_tables() -> None:
    from rag.ingest.text_blocks import plain_text_blocks

    blocks = plain_text_blocks("Steps\n1. Bring Your Passport\n2. Bring Your Card\n\nName\tAge\nAnn\t4\n\n"
                               "What to bring:\n- ID\n- Proof of income")
    assert [(b.kind, b.text) for b in blocks] == [
        ("heading", "Steps"),
        ("list", "1. Bring Your Passport\n2. Bring Your Card"),
        ("table", "Name Age\nAnn 4"),
        ("paragraph", "What to bring:"),
        ("list", "- ID\n- Proof of income"),
    ]


def test_front_matter_title_keeps_a_different_first_heading(tmp_path: Path) -> None:
    from rag.ingest.loaders import load_markdown

    path = tmp_path / "p.md"
    path.write_text("---\ntitle: SNAP basics\n---\n# Overview of the program\n\nText.\n", encoding="utf-8")
    doc = load_markdown(path, "p")
    assert doc.title == "SNAP basics"
    assert doc.blocks[0].kind == "heading" and doc.blocks[0].text == "Overview of the program"
    path.write_text("---\ntitle: SNAP basics\n---\n# SNAP Basics\n\nText.\n", encoding="utf-8")
    assert [b.kind for b in load_markdown(path, "p").blocks] == ["paragraph"]
