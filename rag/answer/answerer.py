"""The answerer protocol: what the offline extractive answerer and a language-model answerer both implement."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from rag.answer.budget import note_fallback
from rag.answer.moods import Mood
from rag.answer.rewrite import Exchange
from rag.cite.rail import Draft
from rag.documents import SearchHit


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """Everything an answerer may use: the question as asked and standalone, the conversation so far, the
    retrieved sections (best first) and the mood."""

    question: str
    standalone: str
    history: Sequence[Exchange]
    hits: list[SearchHit]
    mood: Mood
    # Share of the question's topic words the best sections contain (rag.answer.evidence). The extractive answerer
    # cannot judge relevance and refuses below a calibrated threshold; a language model judges it under its refusal
    # rule, so a paraphrase ("university pupils", "food stamps") still reaches it.
    coverage: float = 1.0
    # Sub ids of the paragraphs the previous answer quoted, when this question follows it up (rag/engine.py): a
    # follow-up asks for what they did not say.
    already_read: frozenset[str] = frozenset()


class Answerer(Protocol):
    """Writes the answer from the retrieved sections; names the sub-chunks (paragraphs) it relies on."""

    def answer(self, request: AnswerRequest) -> Draft: ...


def _same(text: str) -> str:
    return text


@dataclass(slots=True)
class DraftStream:
    """A streamed answer: the model's text in pieces as it writes them, with each sentence's paragraph ids in
    brackets (checked sentence by sentence by rag/cite/sentence_rail.py). `ids` maps an id as the model writes it
    to the stored id; `clean` undoes the prompt's escaping. An answerer that fell back to one that does not stream
    gives its answer `whole` instead (shown at once, as without streaming)."""

    pieces: Iterable[str] = ()
    ids: Mapping[str, str] | None = None
    clean: Callable[[str], str] = _same
    whole: Draft | None = None
    errors: list[str] = field(default_factory=list)  # why the stream broke off, if it did (the rail stops there)


@runtime_checkable
class StreamingAnswerer(Protocol):
    """An answerer that can also stream (a language model); the offline extractive one cannot."""

    def answer(self, request: AnswerRequest) -> Draft: ...

    def stream(self, request: AnswerRequest) -> DraftStream:
        """Raises AnswerUnavailable when the model cannot be reached before anything was written."""
        ...


class AnswerUnavailable(RuntimeError):
    """The answerer could not write an answer (its model failed everywhere, or the turn's time ran out)."""


class StreamingUnsupported(AnswerUnavailable):
    """The model's endpoint refuses streaming (a proxy or an API version without it): write the answer whole."""


UNAVAILABLE_NOTICE = "The AI model is unavailable right now; these are the most relevant source sentences."


class FallbackAnswerer:
    """A language-model answerer backed by the offline extractive one: a navigator on a call always gets the
    best source sentences, with a one-line notice saying why the answer is not a written one."""

    def __init__(self, primary: Answerer, fallback: Answerer, notice: str = UNAVAILABLE_NOTICE) -> None:
        self.primary = primary
        self.fallback = fallback
        self.notice = notice

    def answer(self, request: AnswerRequest) -> Draft:
        try:
            return self.primary.answer(request)
        except AnswerUnavailable as exc:
            note_fallback("generate", f"{exc}; extractive answer")
        return self._fallback(request)

    def _fallback(self, request: AnswerRequest) -> Draft:
        draft = self.fallback.answer(request)
        draft.note = "\n".join(n for n in (self.notice, draft.note) if n)
        return draft

    def stream(self, request: AnswerRequest) -> DraftStream:
        """The primary's stream when it streams and can be reached; else its answer whole (an endpoint or proxy
        may not offer streaming); else the fallback's answer, whole."""
        if isinstance(self.primary, StreamingAnswerer):
            try:
                return self.primary.stream(request)
            except StreamingUnsupported:
                pass  # said once, by the answerer that found out
            except AnswerUnavailable as exc:
                note_fallback("generate", f"streaming: {exc}; the answer written whole")
        try:
            return DraftStream(whole=self.primary.answer(request))
        except AnswerUnavailable as exc:
            note_fallback("generate", f"{exc}; extractive answer")
        return DraftStream(whole=self._fallback(request))
