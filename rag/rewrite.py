"""Follow-up questions made standalone, so that retrieval understands "what about part-time?" mid-thread.

The offline rewriter is a measured heuristic (see benchmarks/RESULTS.md, doc2dial later turns): a follow-up is
searched together with the earlier questions of the conversation and the previous answer, unless it clearly
opens a new topic. A language model rewriter (Gemini) plugs in behind the same `Rewriter` protocol.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rag.bm25 import query_stems
from rag.terms import question_terms

# Words that point back to something said before, and openers of elliptical follow-ups.
_ANAPHORA = re.compile(
    r"\b(it|its|they|them|their|theirs|this|that|these|those|he|she|him|his|her|there|such|same|either|else|"
    r"another)\b", re.IGNORECASE)
_ELLIPTICAL = re.compile(r"^\s*(and|but|so|also|or|then|what about|how about|what if|and if|same for)\b",
                         re.IGNORECASE)

MAX_EARLIER_QUESTIONS = 6


@dataclass(frozen=True, slots=True)
class Exchange:
    """One earlier turn of a conversation, as the rewriter sees it."""

    question: str
    answer: str = ""


@dataclass(frozen=True, slots=True)
class Rewrite:
    """`standalone` is the question as it can be read without the conversation (shown and stored);
    `context` is extra text searched with it (words of the previous answer), empty when not needed."""

    standalone: str
    context: str = ""

    @property
    def search_text(self) -> str:
        return f"{self.standalone}\n{self.context}".strip()


class Rewriter(Protocol):
    def rewrite(self, question: str, history: Sequence[Exchange]) -> Rewrite: ...


def refers_back(question: str) -> bool:
    """A pronoun, an elliptical opener or too few topic words: the question leans on what came before."""
    return bool(_ANAPHORA.search(question) or _ELLIPTICAL.search(question)) or len(question_terms(question)) < 3


class HeuristicRewriter:
    """Offline rewriting without a language model.

    On doc2dial, searching a follow-up with all earlier user questions and the previous answer lifts later-turn
    Recall@3 from 0.51 to 0.94; asking "does it refer back?" alone is not enough (most follow-ups without a
    pronoun still continue the topic). So context is added unless the question opens a new topic: it stands on
    its own (no pronoun, no elliptical opener, three topic words or more) and names, in a word not yet used in the
    conversation, something that only a few document titles contain ("How do I apply for LIHEAP?" after SNAP
    questions).
    """

    def __init__(self, title_stems: Callable[[], tuple[Counter[str], int]] | None = None) -> None:
        """`title_stems` returns (stem → number of document titles containing it, number of documents)."""
        self._title_stems = title_stems

    def rewrite(self, question: str, history: Sequence[Exchange]) -> Rewrite:
        question = question.strip()
        earlier = [e for e in history if e.question.strip()][-MAX_EARLIER_QUESTIONS:]
        if not earlier or self._opens_new_topic(question, earlier):
            return Rewrite(question)
        previous = " ".join(e.question.strip() for e in earlier)
        return Rewrite(f"{previous} {question}", context=earlier[-1].answer.strip())

    def _opens_new_topic(self, question: str, earlier: Sequence[Exchange]) -> bool:
        if _ANAPHORA.search(question) or _ELLIPTICAL.search(question) or self._title_stems is None:
            return False
        said = set(query_stems(" ".join(f"{e.question} {e.answer}" for e in earlier)))
        titles, n_docs = self._title_stems()
        limit = max(2, 0.05 * n_docs)  # names a specific topic: in at most 5% of titles (or two)
        novel = {s for s in query_stems(question) if s not in said and 0 < titles[s] <= limit}
        if not novel:
            return False
        # A short question opens a new topic only by naming it: a program name or acronym ("and LIHEAP?" is
        # caught above as elliptical; "How do I apply for LIHEAP?" is not a follow-up).
        return len(question_terms(question)) >= 3 or bool(novel & _proper_name_stems(question))


def _proper_name_stems(question: str) -> set[str]:
    """Stems of capitalised words or acronyms that do not start the question (names, not sentence starts)."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9'’]*", question)
    return {s for w in words[1:] if w[0].isupper() and w.lower() != "i" for s in query_stems(w)}


class TitleStems:
    """Stems of the document titles of a store, refreshed at most once a minute (titles change only on ingest)."""

    def __init__(self, titles: Callable[[], list[str]], ttl_seconds: float = 60.0) -> None:
        self._titles = titles
        self._ttl = ttl_seconds
        self._cached: tuple[Counter[str], int] | None = None
        self._at = 0.0

    def __call__(self) -> tuple[Counter[str], int]:
        now = time.monotonic()
        if self._cached is None or now - self._at > self._ttl:
            titles = self._titles()
            self._cached = (Counter(s for t in titles for s in set(query_stems(t))), len(titles))
            self._at = now
        return self._cached


def exchanges_from_messages(messages: Sequence[dict[str, str]]) -> list[Exchange]:
    """doc2dial-style history ([{role, text}, ...]) as exchanges: each user turn with the reply that followed."""
    out: list[Exchange] = []
    for message in messages:
        text = str(message.get("text") or "")
        if message.get("role") == "user":
            out.append(Exchange(text))
        elif out:
            out[-1] = Exchange(out[-1].question, f"{out[-1].answer} {text}".strip())
    return out
