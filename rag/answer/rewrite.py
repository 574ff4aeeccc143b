"""Follow-up questions made standalone, so that retrieval understands "what about part-time?" mid-thread.

The offline rewriter is a measured heuristic (see benchmarks/RESULTS.md, doc2dial later turns): a follow-up is
searched together with the thread's earlier questions and the previous answer, unless it names a new topic.
A language-model rewriter (Gemini) plugs in behind the same `Rewriter` protocol.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rag.search.bm25 import query_stems
from rag.search.sentences import reading_sentences

# Words that point back to something said before, and openers of elliptical follow-ups.
_ANAPHORA = re.compile(
    r"\b(it|its|they|them|their|theirs|this|that|these|those|he|she|him|his|her|there|such|same|either|else|"
    r"another)\b", re.IGNORECASE)
_ELLIPTICAL = re.compile(r"^\s*(and|but|so|also|or|then|what about|how about|what if|and if|same for)\b",
                         re.IGNORECASE)
# What may surround a name in a purely elliptical follow-up ("and for WIC too?").
_ELLIPSIS_WORDS = frozenset("and or but so also too then what about how for the same with as well please".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’]*")

# "switching gears", "on a different note": said anywhere, the thread's topic is over.
_GEARS = (r"(?:switch|switching|change|changing|shift|shifting)\s+gears"
          r"|on\s+(?:a\s+|an\s+)?(?:different|other|another|separate|unrelated)\s+(?:note|topic|subject)")
# "new question", "different client", "unrelated": the navigator says the thread's topic is over ("another client:
# …" only opening a question: _TOPIC_MARKER).
_NEW_TOPIC = re.compile(
    r"\b(?:new|diff|different|separate|unrelated)\s+(?:question|topic|client|case|subject|household|family)\b"
    rf"|\bunrelated\b|\bchang(?:e|ing)\s+(?:the\s+)?(?:topic|subject)\b|\b(?:{_GEARS})\b",
    re.IGNORECASE)
# "another question" is not one of them: on doc2dial it mostly asks more about the same page.
# The same words opening a question ("totally diff question - client sold her car …", "new q: …") say nothing about
# the topic, yet they would be searched and counted by the no-answer gate as words the sections must hold: they
# are dropped from what is searched. Only at the start, before the question proper: "can they be a separate
# household?" asks about a rule.
_SEP = r"[\s\-–—:;,.!]"
_TOPIC_MARKER = re.compile(
    rf"^\W*(?:(?:ok(?:ay)?|so|and|also|now|totally|completely|quick|a|one|hi|hey)\W+){{0,3}}"
    rf"(?:(?:(?:new|diff|different|unrelated|other)\s+(?:question|q|topic|subject)|unrelated"
    rf"|chang(?:e|ing)\s+(?:the\s+)?(?:topic|subject)|{_GEARS})\b{_SEP}*"
    # "different client - hes on strike": only before a dash, colon or comma ("new case for a 19 year old" asks)
    rf"|(?:new|diff|different|other|another)\s+(?:client|case)\s*[\-–—:;,.]{_SEP}*)"
    rf"(?:(?:but|though)\b{_SEP}*)?",
    re.IGNORECASE)
# An elliptical turn that opens with a word or two first ("Now, what if my son …").
_ELLIPTICAL_SOON = re.compile(r"^\W*(?:\w+\W+){0,2}(?:what if|what about|how about|and if|same for)\b",
                              re.IGNORECASE)
# Words that point back to a thing said before. "she", "he", "they" do not count here: a navigator calls every
# client "she" or "they", in a complete question as much as in a follow-up.
_POINTS_BACK = re.compile(r"\b(it|its|this|that|these|those|there|such|same|either|else)\b", re.IGNORECASE)

MAX_EARLIER_QUESTIONS = 6
MAX_TOPIC_WORDS = 80  # of earlier questions carried into a follow-up
# A question stands alone when it has at least this many topic words of its own and at most this share of them
# were said before in the thread (questions and answers), fewer than this share: "Does the ABAWD time limit apply
# to a 52-year-old who works 15 hours a week?" after "How do I apply for Medicaid?" shares one word of nine.
STANDALONE_MIN_TERMS = 5
STANDALONE_MAX_SHARED = 0.2


@dataclass(frozen=True, slots=True)
class Exchange:
    """One earlier turn of a conversation, as the rewriter sees it. `standalone` is how the question was
    understood then (empty when unknown): follow-ups chain on it, so a thread's topic follows a change of
    program ("and WIC?") and starts afresh with a new topic. `cited`: the paragraphs (sub ids) its answer quoted,
    which the navigator has already read."""

    question: str
    answer: str = ""
    standalone: str = ""
    cited: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rewrite:
    """`standalone` is the question as it can be read without the conversation (shown and stored);
    `context` is extra text searched with it (words of the previous answer), empty when not needed; `follows`: the
    thread's topic was joined to the question (a follow-up), so the previous answer's quotes were already read."""

    standalone: str
    context: str = ""
    follows: bool = False

    @property
    def search_text(self) -> str:
        return f"{self.standalone}\n{self.context}".strip()


class Rewriter(Protocol):
    def rewrite(self, question: str, history: Sequence[Exchange]) -> Rewrite: ...


@dataclass(frozen=True, slots=True)
class TitleIndex:
    """What the document titles of a store say about topics: how many titles contain each stem, and which stems
    are written as acronyms there (SNAP, WIC, LIHEAP: names, even when a navigator types them in lower case)."""

    counts: Counter[str] = field(default_factory=Counter)
    n_docs: int = 0
    acronyms: frozenset[str] = frozenset()

    @classmethod
    def of(cls, titles: Sequence[str]) -> TitleIndex:
        counts = Counter(s for t in titles for s in set(query_stems(t)))
        acronyms = frozenset(s for t in titles for w in _WORD.findall(t) if len(w) > 1 and w.isupper()
                             for s in query_stems(w))
        return cls(counts, len(titles), acronyms)


class HeuristicRewriter:
    """Offline rewriting without a language model.

    On doc2dial, searching a follow-up with the earlier user questions and the previous answer lifts later-turn
    Recall@3 from 0.51 to 0.94; asking "does it refer back?" alone is not enough (most follow-ups without a
    pronoun still continue the topic). So a question is combined with the thread's topic unless it names a topic
    not yet mentioned in the thread — a name (capitalised word or acronym) that is in document titles:
    - a follow-up (a pronoun, an elliptical opener such as "what about", or nothing but the name) asks the previous
      question again about it: "and WIC?" after "Can college students get SNAP?" → "Can college students get WIC?";
    - any other question starts a new topic ("How do I apply for LIHEAP?" after SNAP questions).
    Requiring a *name* matters: on doc2dial, treating any unseen rare title word as a new topic cost 0.03 of
    Recall@3 (0.908 against 0.924).
    """

    def __init__(self, titles: Callable[[], TitleIndex] | None = None) -> None:
        self._titles = titles or TitleIndex

    def rewrite(self, question: str, history: Sequence[Exchange]) -> Rewrite:
        question = question.strip()
        earlier = [e for e in history if e.question.strip()][-MAX_EARLIER_QUESTIONS:]
        if not earlier:
            return Rewrite(without_topic_marker(question))
        index = self._titles()
        said = set(query_stems(" ".join(f"{e.question} {e.standalone} {e.answer}" for e in earlier)))
        if stands_alone(question, said):
            return Rewrite(without_topic_marker(question))
        new_names = [w for w in _names(question, index) if _stem(w) not in said and index.counts[_stem(w)]]
        if new_names:
            if not _leans_on_context(question, index):
                return Rewrite(question)
            spelled = [w.upper() if _stem(w) in index.acronyms else w for w in new_names]
            swapped = _ask_about(earlier[-1].standalone or earlier[-1].question, spelled, index)
            if swapped:
                return Rewrite(swapped)  # the previous answer is about the other program: not context
        # The previous answer is searched with it only when it is someone else's reply (doc2dial's agent turns,
        # which paraphrase the right page: later-turn Recall@3 +0.03). The bot's own answer quotes the paragraphs
        # it cites (or restates them): searched again, it pulls the search back to what the navigator has already
        # read. Replayed threads of the regulation sets (benchmarks/RESULTS.md), follow-ups' paragraph hit@3 with it
        # and without: 7 and 17 of 34 on the unread sets, 24 and 38 of 71 on the read ones.
        context = "" if earlier[-1].cited else earlier[-1].answer.strip()
        return Rewrite(f"{_topic(earlier)} {question}", context=context, follows=True)


def stands_alone(question: str, said: set[str]) -> bool:
    """A question that can be read without the thread: one that says the topic changes ("new question - …"),
    or a complete question that names another subject (a name the thread has not said, enough topic words of
    its own, few said before, no word pointing back and no elliptical opener such as "what if", "and for …").
    `said`: the stems of the thread's questions and answers."""
    if _NEW_TOPIC.search(question) or without_topic_marker(question) != question:
        return True
    if _ELLIPTICAL.search(question) or _ELLIPTICAL_SOON.search(question) or _POINTS_BACK.search(question):
        return False
    own = set(query_stems(question))
    if len(own) < STANDALONE_MIN_TERMS:
        return False
    names = {_stem(w) for w in _names(question, TitleIndex())}
    # It names a subject (an acronym or a capitalised word) the thread has not: without one, a complete-looking
    # question usually continues the topic (doc2dial: taking those alone cost 0.008 of later-turn Recall@3).
    if not names or names & said:
        return False
    return len(own & said) < STANDALONE_MAX_SHARED * len(own)


def without_topic_marker(question: str) -> str:
    """The question without an opening "new question -", "ok different client:", "unrelated, but": what is
    searched and shown as understood. Unchanged when nothing of a question would be left."""
    rest = _TOPIC_MARKER.sub("", question, count=1).strip()
    return rest if len(rest.split()) >= 2 else question


def _stem(word: str) -> str:
    stems = query_stems(word)
    return stems[0] if stems else word.lower()


def _names(text: str, index: TitleIndex) -> list[str]:
    """Acronyms, capitalised words that do not start a sentence, and words the titles spell as acronyms."""
    names = []
    for sentence in reading_sentences(text):
        for i, word in enumerate(_WORD.findall(sentence)):
            acronym = len(word) > 1 and word.isupper()
            if acronym or (i > 0 and word[0].isupper() and word != "I") or _stem(word) in index.acronyms:
                names.append(word)
    return names


def _leans_on_context(question: str, index: TitleIndex) -> bool:
    if _ANAPHORA.search(question) or _ELLIPTICAL.search(question):
        return True
    names = {n.lower() for n in _names(question, index)}
    return not ({w.lower() for w in _WORD.findall(question)} - names - _ELLIPSIS_WORDS)


def _ask_about(previous: str, new_names: list[str], index: TitleIndex) -> str | None:
    """The previous question with the program it named replaced by the new one(s); None if it named none."""
    old = [w for w in _names(previous, index) if index.counts[_stem(w)]]
    if not old:
        return None
    swapped = re.sub(rf"\b{re.escape(old[0])}\b", " and ".join(new_names), previous, count=1)
    for extra in dict.fromkeys(old[1:]):  # "SNAP and WIC" → the new program only
        if extra not in new_names:
            swapped = re.sub(rf"\s*(?:\band\b|\bor\b|,)?\s*\b{re.escape(extra)}\b", "", swapped)
    return swapped


def _topic(earlier: Sequence[Exchange]) -> str:
    """The earlier questions a follow-up continues: the last one as it was understood (which already carries
    the ones before it), or the raw questions when that is unknown; at most MAX_TOPIC_WORDS, whole questions."""
    last = earlier[-1]
    parts = reading_sentences(last.standalone) if last.standalone else [e.question.strip() for e in earlier]
    kept: list[str] = []
    for part in reversed(parts):
        if kept and sum(len(k.split()) for k in kept) + len(part.split()) > MAX_TOPIC_WORDS:
            break
        kept.insert(0, part)
    return " ".join(kept)


class CachedTitles:
    """A store's TitleIndex, rebuilt at most once a minute (titles change only when documents are ingested)."""

    def __init__(self, titles: Callable[[], list[str]], ttl_seconds: float = 60.0) -> None:
        self._titles = titles
        self._ttl = ttl_seconds
        self._cached: TitleIndex | None = None
        self._at = 0.0

    def __call__(self) -> TitleIndex:
        now = time.monotonic()
        if self._cached is None or now - self._at > self._ttl:
            self._cached = TitleIndex.of(self._titles())
            self._at = now
        return self._cached


def exchanges_from_messages(messages: Sequence[dict[str, str] | str]) -> list[Exchange]:
    """doc2dial-style history ([{role, text}, ...]) as exchanges: each user turn with the reply that followed.
    A plain string is a user turn whose reply is not known (a question set that keeps only the user's turns)."""
    out: list[Exchange] = []
    for message in messages:
        if isinstance(message, str):
            out.append(Exchange(message))
            continue
        text = str(message.get("text") or "")
        if message.get("role") == "user":
            out.append(Exchange(text))
        elif out:
            out[-1] = Exchange(out[-1].question, f"{out[-1].answer} {text}".strip())
    return out


def with_standalones(rewriter: Rewriter, history: Sequence[Exchange]) -> list[Exchange]:
    """Fill in how each earlier question was understood, turn by turn, as the bot did when it was asked (for
    histories that come without it, such as an evaluation set's)."""
    out: list[Exchange] = []
    for exchange in history:
        standalone = exchange.standalone or rewriter.rewrite(exchange.question, out).standalone
        out.append(Exchange(exchange.question, exchange.answer, standalone, exchange.cited))
    return out
