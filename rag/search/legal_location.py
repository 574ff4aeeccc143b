"""Where a paragraph sits in a regulation, read back from its heading path: the section ("273.5") and the
label path inside it (("b", "5")), so that answers and evaluations can name "7 CFR 273.5(b)(5)".

Works on heading paths whose labels each have their own element ("(b) Exemptions", "(5)") and on ones where a
heading carries several run-in labels ("(2)(i) …"); text after the leading labels is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SECTION = re.compile(r"§+\s*(\d+\.\d+[a-z]?)")
_LEADING_LABELS = re.compile(r"^\s*((?:\([0-9A-Za-z]{1,6}\))+)")
_LABEL = re.compile(r"\(([0-9A-Za-z]{1,6})\)")
_PATH = re.compile(r"^(?:\([0-9A-Za-z]{1,6}\))*$")

Labels = tuple[str, ...]


def location(heading_path: Sequence[str]) -> tuple[str, Labels]:
    """("273.5", ("b", "5")) for "… > § 273.5 Students > (b) Exemptions > (5) …"; ("", ()) outside a section.
    The last "§" element wins (a part heading may quote another section); labels are those after it."""
    section = ""
    labels: list[str] = []
    for element in heading_path:
        found = _SECTION.search(element)
        if found and element.lstrip().startswith("§"):
            section, labels = found.group(1), []
            continue
        if section:
            lead = _LEADING_LABELS.match(element)
            if lead:
                labels.extend(_LABEL.findall(lead.group(1)))
    return section, tuple(labels)


def parse_path(path: str) -> Labels:
    """"(b)(5)(i)" -> ("b", "5", "i"); raises ValueError on anything else."""
    compact = path.replace(" ", "")
    if not _PATH.match(compact):
        raise ValueError(f"not a paragraph path: {path!r}")
    return tuple(_LABEL.findall(compact))


def format_path(labels: Labels) -> str:
    return "".join(f"({label})" for label in labels)


def inside(labels: Labels, gold: Labels) -> bool:
    """The paragraph is the gold one or nested under it (compared label by label)."""
    return labels[: len(gold)] == gold


def near(labels: Labels, gold: Labels) -> bool:
    """The gold paragraph, its parent (one level up) or a paragraph nested under it."""
    return inside(labels, gold) or (len(gold) > 0 and labels == gold[:-1])
