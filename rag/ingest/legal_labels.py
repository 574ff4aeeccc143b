"""Paragraph labels of regulations and policy manuals, resolved by their sequence.

US regulations (and state manuals written in the same style) nest paragraphs six deep:

    (a) → (1) → (i) → (A) → (1) → (i)
    lower letter, number, lower roman, upper letter, number (italic in print), lower roman (italic)

A label alone does not say its level: "(i)" is the letter after "(h)" or the first roman numeral, "(v)",
"(x)" and "(l)" likewise, and "(1)" is the second or the fifth level. The sequence does: a label is either
the next sibling at one of the open levels or the first child of the deepest one. `resolve_labels` reads a
section's labels in order and keeps every reading that is still possible (a small beam, merged on the open
levels), scoring each by the slips it needs; the reading with the fewest slips wins, and among equal ones the
deepest (a "(i)" right after a "(1)" paragraph opens the roman level; the "(ii)" after it, or the "(1)" or "(j)"
instead, settles it). Slips in real texts are tolerated at a cost rather than breaking the rest of the section:
a repeated label (two "(iv)"), a gap (no "(i)", straight to "(ii)"), a first child printed in the wrong style
("(1)" where "(i)" belongs, read as "(i)"), and a section that starts below the top level.

A paragraph may open with several labels: "(b) Heading—(1) Text", "(3) Boarders. (i) Text", "(2)(i) Text".
`leading_labels` finds them (the first label, then first-child labels run in after an empty or short heading).
`Placement.path` is the first label's location and `Placement.run_in` the deeper ones the paragraph opens; the
next paragraph ("(2)", "(ii)") is read as their sibling. The chunker files such a paragraph under the deepest
(its body is that paragraph's text; the parents contribute a heading), so "(b)(1)" names it, and "(b)" is its
parent, as a citation of either expects.

`label_path` reads a sub-chunk's location back from its heading path: "(b)(5)(i)".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# The kind of label at each level, outermost first.
LEVEL_KINDS: tuple[str, ...] = ("lower", "digit", "roman", "upper", "digit", "roman")
_FIRST = {"lower": "a", "digit": "1", "roman": "i", "upper": "A"}

_ONE = r"\((?:[a-z]{1,7}|\d{1,3}|[A-Z]{1,2})\)"
_START = re.compile(rf"^\s*(?:\|\s*)?(?P<label>{_ONE})")
# A parenthesis in a heading that is not a label: "(TOP)", "(IPV)", "(see below)".
_ASIDE = r"\((?![a-z]{1,7}\)|\d{1,3}\)|[A-Z]{1,2}\))[^()\n]{1,60}\)"
# A run-in label: directly after the previous one ("(2)(i)", "(i) (A)"), or after a heading ending in ".", ":"
# or "—" ("(b) Special household requirements—(1)", "(3) Boarders. (i)").
_RUN_IN = re.compile(
    rf"(?:\s*|\s+[A-Z](?:[^()\n]|{_ASIDE}){{0,150}}?(?:[.:]\s+|\s*—\s*))(?P<label>{_ONE})(?=\s|$|\()")
# Or after a title-case heading of up to four words with no punctuation, before a capital:
# "(i) Recertification (A) At recertification …" (but not "(D) The provisions of paragraph (i)(4) …").
_TITLE_WORD = r"(?:[A-Z][\w'’-]*|of|and|or|the|for|to|in|on)"
_RUN_IN_BARE = re.compile(rf"\s+[A-Z][\w'’-]*(?:\s+{_TITLE_WORD}){{0,3}}\s+(?P<label>{_ONE})(?=\s+[A-Z])")
_HEADING_WORDS = 15
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50}

# Slip costs: a reading that needs none always beats one that needs any.
GAP, REPEAT, WRONG_KIND, SKIPPED_TOP, SKIPPED_LEVEL, UNPLACED = 1.0, 1.0, 1.5, 1.0, 2.0, 3.0
GAP_PER_LABEL = 0.1  # a gap of one label is likelier than a gap of ten
BEAM = 48
MARGIN = UNPLACED  # readings this far behind the best are dropped: they would need the best to slip again


def _roman(text: str) -> int | None:
    if not text or any(c not in _ROMAN_VALUES for c in text):
        return None
    total = 0
    for i, c in enumerate(text):
        v = _ROMAN_VALUES[c]
        total += -v if i + 1 < len(text) and _ROMAN_VALUES[text[i + 1]] > v else v
    return total if _to_roman(total) == text else None


def _to_roman(n: int) -> str:
    out = ""
    for value, numeral in ((50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + numeral, n - value
    return out


@lru_cache(maxsize=4096)
def label_value(label: str, kind: str) -> int | None:
    """The position of `label` ("c", "12", "iv", "B") in a sequence of `kind`, or None if it is not one."""
    if kind == "digit":
        return int(label) if label.isdigit() and not label.startswith("0") else None
    if kind == "roman":
        return _roman(label)
    letters = label.islower() if kind == "lower" else label.isupper() if kind == "upper" else False
    if not letters or not label.isalpha() or len(set(label)) != 1 or len(label) > 2:
        return None
    return ord(label[0].lower()) - ord("a") + 1 + 26 * (len(label) - 1)  # "aa" follows "z", as in the CFR


def _is_label(label: str) -> bool:
    return any(label_value(label, kind) is not None for kind in _FIRST)


def leading_labels(text: str) -> list[str]:
    """The labels a paragraph (or a Markdown table row) opens with: "(b) Heading—(1) Text" → ["b", "1"].

    A run-in label counts only if it is a first child ("a", "1", "i", "A") and follows the previous label
    directly or after a heading of at most 15 words, so "(f) Expedited service. ... § 273.2(i)" and citations
    such as "paragraph (a)(2)" in the text are not labels.
    """
    return [label for label, _ in label_spans(text)]


def label_spans(text: str) -> list[tuple[str, int]]:
    """`leading_labels` with the offset where each label's "(" stands in `text`."""
    m = _START.match(text)
    if not m or not _is_label(m.group("label")[1:-1]):
        return []
    spans = [(m.group("label")[1:-1], m.start("label"))]
    offset = m.end()
    while len(spans) < len(LEVEL_KINDS):
        run = _RUN_IN.match(text, offset) or _RUN_IN_BARE.match(text, offset)
        if not run:
            break
        label = run.group("label")[1:-1]
        if label not in _FIRST.values() or len(text[offset:run.start("label")].split()) > _HEADING_WORDS:
            break
        spans.append((label, run.start("label")))
        offset = run.end()
    return spans


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one labelled paragraph sits: `path` holds one label per level from the top down to its own
    ("b", "1", "i"), "" for a level the text skips; its length is the paragraph's level (1 = top). A label
    printed in the wrong style is given as read ("(1)" where "(i)" belongs is "i"). A label that fits nowhere
    gets the path of the paragraph before it and `placed=False`."""

    path: tuple[str, ...]
    slip: str = ""  # "" when the label is the expected one; else "repeat", "gap", "skipped level",
    # "wrong style", "starts below the top" or "unplaced"
    run_in: tuple[tuple[str, ...], ...] = ()  # paths of the labels run in after the first ("(b) X—(1) …")

    @property
    def placed(self) -> bool:
        return self.slip != "unplaced"

    @property
    def depth(self) -> int:
        return len(self.path)

    @property
    def cite(self) -> str:
        """"(b)(1)(i)": the path as the CFR cites it."""
        return format_path(self.path)


# A linked list, newest first: (previous, (label's position in its paragraph, path, slip)).
_History = tuple["_History | None", tuple[int, tuple[str, ...], str]]


@dataclass(frozen=True, slots=True)
class _Reading:
    cost: float
    values: tuple[int, ...]  # per open level: the position of its current label (0 = level skipped)
    labels: tuple[str, ...]
    history: _History | None


_Move = tuple[float, int, int, str, str]


def _moves(values: tuple[int, ...], label: str) -> list[_Move]:
    """The possible readings of `label` after the open levels `values`: (cost, level index, value, label as
    read, slip), deepest level first so that among equal costs the deepest reading is kept."""
    depth = len(values)
    moves: list[_Move] = []
    for level in range(min(depth, len(LEVEL_KINDS) - 1), -1, -1):
        kind = LEVEL_KINDS[level]
        value = label_value(label, kind)
        if value is None:
            continue
        expected = values[level] + 1 if level < depth else 1
        if value == expected:
            moves.append((0.0, level, value, label, ""))
        elif level < depth and value == values[level] and value:
            moves.append((REPEAT, level, value, label, "repeat"))
        elif value > expected:
            moves.append((GAP + GAP_PER_LABEL * (value - expected - 1), level, value, label, "gap"))
    skip = label_value(label, LEVEL_KINDS[depth + 1]) if depth + 1 < len(LEVEL_KINDS) else None
    if skip is not None:  # a level the text skips (its first label run in unrecognised): "(n) …" then "(ii)"
        moves.append((SKIPPED_LEVEL + GAP_PER_LABEL * (skip - 1), depth + 1, skip, label, "skipped level"))
    if depth < len(LEVEL_KINDS) and label in _FIRST.values():
        kind = LEVEL_KINDS[depth]
        if label_value(label, kind) is None:  # a first child printed in another style: read as the right one
            moves.append((WRONG_KIND, depth, 1, _FIRST[kind], "wrong style"))
    if depth == 0:  # a section (or page) that starts below the top level: "(1)" with no "(a)"
        for level, kind in enumerate(LEVEL_KINDS[1:4], start=1):
            if label_value(label, kind) == 1:
                moves.append((SKIPPED_TOP * level, level, 1, label, "starts below the top"))
    return moves


def resolve_labels(paragraphs: list[list[str]]) -> list[Placement]:
    """Place each paragraph of one section, given the labels it opens with (see `leading_labels`).

    A paragraph's placement is that of its first label; its run-in labels are read after it (their paths are
    in `run_in`). Paragraphs with no labels get an empty path (the caller keeps them in the paragraph before).
    """
    readings = [_Reading(0.0, (), (), None)]
    for labels in paragraphs:
        if not labels:
            readings = [_Reading(r.cost, r.values, r.labels, (r.history, (0, (), ""))) for r in readings]
        for position, label in enumerate(labels):
            nxt: dict[tuple[int, ...], _Reading] = {}
            for r in readings:
                options = [(r.cost + cost, (*r.values[:level], *([0] * (level - len(r.values))), value),
                            (*r.labels[:level], *([""] * (level - len(r.labels))), read), slip)
                           for cost, level, value, read, slip in _moves(r.values, label)]
                options.append((r.cost + UNPLACED, r.values, r.labels, "unplaced"))
                for cost, values, names, slip in options:
                    if values not in nxt or cost < nxt[values].cost:  # first kept among equals: the deepest
                        nxt[values] = _Reading(cost, values, names, (r.history, (position, names, slip)))
            readings = sorted(nxt.values(), key=lambda r: r.cost)[:BEAM]  # a stable sort keeps that order
            readings = [r for r in readings if r.cost <= readings[0].cost + MARGIN]
    best = readings[0]  # the fewest slips; among equals, the deepest readings
    items: list[tuple[int, tuple[str, ...], str]] = []
    node = best.history
    while node is not None:
        node, item = node
        items.append(item)
    out: list[Placement] = []
    for position, path, slip in reversed(items):
        if position == 0:
            out.append(Placement(path, slip))
        elif slip != "unplaced":
            out[-1] = Placement(out[-1].path, out[-1].slip or slip, (*out[-1].run_in, path))
    return out


def format_path(labels: tuple[str, ...] | list[str]) -> str:
    """("b", "5", "i") → "(b)(5)(i)", the way the CFR cites a paragraph."""
    return "".join(f"({x})" for x in labels if x)


def label_path(heading_path: list[str]) -> str:
    """A sub-chunk's paragraph location read back from its heading path: the trailing run of headings that
    start with a label, e.g. [..., "§ 273.5 Students.", "(b) Exemptions", "(5)", "(i)"] → "(b)(5)(i)";
    "" for a sub-chunk outside any labelled paragraph."""
    labels: list[str] = []
    for heading in reversed(heading_path):
        m = _START.match(heading)
        if not m or not heading.startswith("("):
            break
        labels.append(m.group("label")[1:-1])
    return format_path(labels[::-1])


_SECTION = re.compile(r"^§+\s*(?P<number>\d+(?:\.\d+)*)")


def section_number(heading_path: list[str]) -> str:
    """The section a sub-chunk is in, read from its heading path: [..., "§ 273.5 Students.", ...] → "273.5";
    "" when no heading names one."""
    for heading in heading_path:
        m = _SECTION.match(heading)
        if m:
            return m.group("number")
    return ""
