"""The answerer protocol: what the offline extractive answerer and a language-model answerer both implement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rag.citations import Draft
from rag.models import SearchHit
from rag.moods import Mood
from rag.rewrite import Exchange


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """Everything an answerer may use: the question as asked and standalone, the conversation so far, the
    retrieved sections (best first) and the mood."""

    question: str
    standalone: str
    history: Sequence[Exchange]
    hits: list[SearchHit]
    mood: Mood


class Answerer(Protocol):
    """Writes the answer from the retrieved sections; names the sub-chunks (paragraphs) it relies on."""

    def answer(self, request: AnswerRequest) -> Draft: ...
