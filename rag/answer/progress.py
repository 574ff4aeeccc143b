"""What a navigator sees while an answer is worked out: the stage in words ("Searching the SNAP rules…",
"Checking the quotes…"), then, when a language model writes the answer, each sentence once the rail passed it.

The engine reports through an `AnswerProgress` the adapter gives it (Slack's assistant status and chat stream,
Teams' informative updates and streamed text). A report that fails is logged and the answer goes on."""

from __future__ import annotations

import re
from typing import Protocol

# The programs a question may name, and the name the status uses for each (the first one named wins).
_PROGRAMS = [
    (re.compile(r"(?i)\b(?:snap|food stamps?|ebt)\b"), "SNAP"),
    (re.compile(r"(?i)\b(?:medicaid|medi-cal)\b"), "Medicaid"),
    (re.compile(r"(?i)\bchip\b"), "CHIP"),
    (re.compile(r"(?i)\bwic\b"), "WIC"),
    (re.compile(r"(?i)\bliheap\b|\bheating\b|\benergy assistance\b"), "LIHEAP"),
    (re.compile(r"(?i)\btanf\b|\bcash assistance\b"), "TANF"),
    (re.compile(r"(?i)\bssi\b|\bssdi\b|\bsocial security\b"), "Social Security"),
    (re.compile(r"(?i)\bunemployment\b|\bui benefits?\b"), "unemployment insurance"),
    (re.compile(r"(?i)\b(?:eitc|earned income|child tax credit|ctc)\b"), "tax credit"),
]
CHECKING = "Checking the quotes…"


class AnswerProgress(Protocol):
    def status(self, words: str) -> None:
        """The stage the answer is at, in words (replaces the previous one)."""
        ...

    def sentence(self, text: str) -> None:
        """The next verified sentence(s) of a streamed answer, to append to what is shown."""
        ...


def program_named(question: str) -> str | None:
    return next((name for pattern, name in _PROGRAMS if pattern.search(question)), None)


def searching(question: str) -> str:
    program = program_named(question)
    return f"Searching the {program} rules…" if program else "Searching the knowledge base…"


def writing(sections: int) -> str:
    return f"Reading {sections} section{'s' if sections != 1 else ''} and writing the answer…"


def loading_messages(question: str) -> list[str]:
    """Lines a surface may rotate through while it waits (Slack's assistant status shows one at a time)."""
    program = program_named(question) or "benefits"
    return [searching(question), f"Reading the {program} sources…", "Writing a short answer…", CHECKING]
