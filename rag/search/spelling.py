"""Typo tolerance: a question word the knowledge base has never seen, read as the closest word it does hold.

Navigators type mid-call ("seperately", "recieves", "vehcile", "foodstamps"). BM25 and the glossary match exact
stems, so a misspelt key word misses the paragraph that holds it. Before searching, a word whose stem is not in the
store's vocabulary (the sentences' Snowball stems with their frequencies, `vocabulary` in rag/search/sqlite_store.py)
nor among the glossary's words is read as the closest stem the store or the glossary holds: restricted
Damerau-Levenshtein distance (OSA, rapidfuzz: a swapped pair is one edit, as typists make them) at most 1, or 2 for
words of LONG_WORD letters or more; the nearest first, then the most frequent. The stem is written back as a word
(the typed ending on it, a common ending, a glossary word or an English word, whichever is nearest to what was
typed and stems back to it). A word typed together with the next ("foodstamps") is split where both halves are
known.

A misspelling the glossary itself respells ("recieves" = "receives") is written as the glossary spells it, so that
its phrases spelt right match too ("child support she receives").

Left alone: every other word the vocabulary, the glossary or an English dictionary knows (SymSpell's, shipped in
symspellpy: "motel" is a word the regulation lacks, not a typo), function words, words of fewer than MIN_LENGTH
letters ("tho": too many real words lie one edit apart), words with digits, words with a capital (acronyms and
names: SNAP, Maria), and anything glued to an address or a hyphen.

Cost: the lookup is built once per store generation (the stems grouped by first letter, shortest first, with each
one's set of letters); a question costs a few dict look-ups per word, and an unknown word one numpy pass over the
stems of its first letter and a close length, then the edit distance to the few whose letters are close. The first
letter is rarely the mistyped one. A store without a vocabulary (MongoDB) is searched as typed.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import OSA

from rag.search.bm25 import stem
from rag.search.terms import QUESTION_FILLER, STOPWORDS

log = logging.getLogger(__name__)

# SymSpell's English frequency dictionary (symspellpy ships it: 82,765 words of SCOWL found in Google Books n-grams):
# an English word the knowledge base does not hold ("motel", "feeds", "closest") is a word, not a typo.
ENGLISH_WORDS = "frequency_dictionary_en_82_765.txt"

MIN_LENGTH = 5  # words of 4 letters or fewer are left as typed
# and so are words longer than this (English words stop near 22 letters): a pasted run of letters is no typo, and
# trying every split of it would cost time quadratic in its length (a 100,000-letter "word" took minutes)
MAX_LENGTH = 40
LONG_WORD = 9  # from this length two edits are allowed, one below it
MIN_STEM = 3  # shorter stems are never a correction
MAX_LOOKUPS = 8  # unknown words looked up per text (~0.1-0.3 ms each on a large vocabulary)
MIN_PART = 4  # each half of a split word ("food stamps"), unless the pair is a glossary phrase
# Endings Snowball strips: a corrected stem is written back with the one closest to what was typed.
ENDINGS = ("", "s", "e", "es", "ed", "ing", "ly", "y", "ies", "ied", "er", "ers", "ion", "ions", "ation", "ations",
           "ication", "ment", "ments", "ity", "ities", "al", "ally", "ate", "ated", "ates", "ately", "ible", "able",
           "ibility", "ability", "ence", "ance", "ive", "ous", "ful", "ness", "ize", "ized")

# A plain word (an apostrophe's "s" allowed after it), not part of a URL, an address, a number or a hyphenated word.
_WORD = re.compile(r"(?<![\w@/.’'-])([A-Za-z]+)(?:['’][A-Za-z]+)?(?![\w@/’'-]|\.\w)")
_FUNCTION_WORDS = STOPWORDS | QUESTION_FILLER


@dataclass(frozen=True, slots=True)
class Correction:
    """The text as searched, and each (typed, corrected) word, in order."""

    text: str
    changes: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changes)


@cache
def english_words() -> frozenset[str]:
    """The dictionary's words, and its contractions also without the apostrophe ("doesnt"): read once (~60 ms)."""
    text = (resources.files("symspellpy") / ENGLISH_WORDS).read_text(encoding="utf-8")
    words = {line.split(" ", 1)[0] for line in text.splitlines() if line}
    return frozenset(words | {w.replace("'", "") for w in words if "'" in w})


def max_edits(word: str) -> int:
    return 2 if len(word) >= LONG_WORD else 1


_BITWISE_COUNT = getattr(np, "bitwise_count", None)
_BITS = np.array([bin(i).count("1") for i in range(1 << 13)], dtype=np.uint8)  # set bits of 13-bit numbers


def _set_bits(values: np.ndarray) -> np.ndarray:
    """Set bits of each non-negative int32 (numpy >= 2 counts them in one pass; older ones look them up)."""
    if _BITWISE_COUNT is not None:
        return np.asarray(_BITWISE_COUNT(values))
    return np.asarray(_BITS[values & 0x1FFF] + _BITS[values >> 13])


def _letter_set(word: str) -> int:
    return sum(1 << (ord(c) - ord("a")) for c in set(word))


@dataclass(frozen=True, slots=True)
class _Bucket:
    """The known stems of one first letter, shortest first, with the set of letters each holds as 26 bits: an edit
    adds or removes at most two letters of the set (a swap none), so a stem whose set differs from the typed word's
    in more than twice the edits allowed is skipped before any edit distance is computed (a numpy pass)."""

    terms: list[str]
    lengths: np.ndarray  # int64, ascending
    letters: np.ndarray  # int32 letter sets

    @classmethod
    def of(cls, terms: list[str]) -> _Bucket:
        return cls(terms, np.fromiter(map(len, terms), dtype=np.int64, count=len(terms)),
                   np.fromiter(map(_letter_set, terms), dtype=np.int32, count=len(terms)))

    def near(self, typed: str, edits: int) -> list[str]:
        """The stems that may lie within `edits` of `typed` (same first letter; length and letters close)."""
        lo, hi = np.searchsorted(self.lengths, [len(typed) - edits, len(typed) + edits + 1])
        if lo == hi:
            return []
        differ = self.letters[lo:hi] ^ np.int32(_letter_set(typed))
        close = _set_bits(differ) <= 2 * edits
        return [self.terms[lo + i] for i in np.flatnonzero(close).tolist()]


class Lexicon:
    """The words a knowledge base knows, as a lookup for the closest known stem: built once per store generation
    from the vocabulary's stem frequencies and the glossary's words."""

    def __init__(self, frequencies: dict[str, int], glossary: Mapping[str, Sequence[str]] | Iterable[str] = ()) -> None:
        self.df = {term: n for term, n in frequencies.items() if n > 0}
        entries = glossary if isinstance(glossary, Mapping) else dict.fromkeys(glossary, ())
        phrases = [p.split() for p in entries]
        # The glossary's own spelling fixes ("seperately" = "separately"): a correction landing on one is written
        # as the word it stands for.
        self.respelled = {key: terms[0].lower() for key, terms in entries.items()
                          if len(terms) == 1 and key.isalpha() and terms[0].isalpha()
                          and OSA.distance(key, terms[0].lower()) <= 2}
        self.glossary_words = frozenset(w for words in phrases for w in words)
        self.glossary_pairs = frozenset(tuple(words) for words in phrases if len(words) == 2)
        self.glossary_stems: dict[str, str] = {}
        for word in sorted(self.glossary_words):
            if word.isalpha():
                self.glossary_stems.setdefault(stem(word), word)
        # a stem only the glossary holds counts as seen once
        weights = dict.fromkeys(self.glossary_stems, 1) | self.df
        self.weight = {s: n for s, n in weights.items() if len(s) >= MIN_STEM and s.isalpha() and s.isascii()}
        by_initial: dict[str, list[str]] = {}
        for term in sorted(self.weight, key=lambda t: (len(t), t)):
            by_initial.setdefault(term[0], []).append(term)
        self._buckets = {initial: _Bucket.of(terms) for initial, terms in by_initial.items()}

    def knows(self, word: str) -> bool:
        """In the vocabulary, the glossary or the English dictionary, or a function word: never corrected."""
        if word in _FUNCTION_WORDS or word in self.glossary_words or word in english_words():
            return True
        plural = word[:-2] if word.endswith("es") else word[:-1] if word.endswith("s") else ""
        if plural in self.glossary_words and not plural.endswith("s"):
            return True  # the glossary matches a plural s/es
        return stem(word) in self.df or stem(word) in self.glossary_stems

    def closest_stems(self, typed: str, edits: int, limit: int = 3) -> list[str]:
        """The known stems at most `edits` from `typed`: the nearest first, the most frequent among equals."""
        bucket = self._buckets.get(typed[0])
        if bucket is None or not typed.isascii() or not typed.isalpha():
            return []
        found = [(int(d), -self.weight[term], term)
                 for term, d, _ in process.extract(typed, bucket.near(typed, edits), scorer=OSA.distance,
                                                   score_cutoff=edits, limit=None)]
        return [term for _, _, term in sorted(found)[:limit]]

    def written(self, word: str, typed_stem: str, target: str, edits: int,
                words_only: bool = False) -> tuple[int, str] | None:
        """`target` (a stem) as a word, with its distance from `word`: the typed ending on it, a common ending, or
        a glossary word with that stem, whichever stems back to it and is closest to `word` (within `edits`), an
        English word, then a glossary word, first among equally close ones. With `words_only`, an English or
        glossary word only: the stem was found for a shortened form of the typed one, whose ending says little."""
        tail = word[len(typed_stem):] if word.startswith(typed_stem) else ""
        options = [target + tail, *(target + ending for ending in ENDINGS)]
        if target.endswith("i"):  # Snowball's y -> i: "appli" is "apply"
            options += [target[:-1] + "y", target[:-1] + "ying"]
        if target in self.glossary_stems:
            options.append(self.glossary_stems[target])
        english = english_words()
        near = process.extract(word, list(dict.fromkeys(options)), scorer=OSA.distance, score_cutoff=edits,
                               limit=None)  # nearest first, in the order listed among equals
        found = [(int(distance), option not in english, option not in self.glossary_words, i, option)
                 for i, (option, distance, _) in enumerate(near) if stem(option) == target
                 and not (words_only and option not in english and option not in self.glossary_words)]
        return (min(found)[0], min(found)[4]) if found else None

    def split(self, word: str) -> str | None:
        """Two known words run together: a glossary phrase first, else the split whose rarer half is commonest."""
        best: tuple[int, str] | None = None
        for i in range(MIN_STEM, len(word) - MIN_STEM + 1):
            left, right = word[:i], word[i:]
            if (left, right) in self.glossary_pairs or (left, right.removesuffix("s")) in self.glossary_pairs:
                return f"{left} {right}"
            if len(left) >= MIN_PART and len(right) >= MIN_PART and left not in _FUNCTION_WORDS \
                    and right not in _FUNCTION_WORDS:
                weight = min(self.df.get(stem(left), 0), self.df.get(stem(right), 0))
                if weight > 0 and (best is None or weight > best[0]):
                    best = (weight, f"{left} {right}")
        return best[1] if best else None

    def glossary_respelling(self, typed: str) -> str | None:
        """The glossary's own spelling of a word it respells ("recieves" = "receives"), or None: written before
        the glossary's phrases are matched, so the phrases spelt right match it too ("child support she
        receives"). Only a word the speller would correct (lowercase, MIN_LENGTH letters or more: "yr" = "year" is
        an abbreviation, whose long form matches far more than the navigator meant) that is no English word and
        that the store never holds, and only onto a word with the same first letter (a synonym such as
        "cellphone" = "telephone" is no respelling)."""
        fixed = self.respelled.get(typed)
        if fixed is None or not _may_correct(typed) or fixed[0] != typed[0] or typed in english_words() \
                or stem(typed) in self.df:
            return None
        return fixed

    def correct_word(self, word: str) -> str | None:
        """The correction of one lowercase word the lexicon does not know, or None.

        Searched as its stem, and as the stem less its last one or two letters: a slip where the stem meets the
        ending ("seperatly") leaves letters the stemmer keeps. Each stem found is written back as a word; the word
        nearest to what was typed wins, then an English word ("houxe": "house", not "houre"), then the one that
        starts like the typed word for longer (slips cluster toward a word's end: "famil" is "family", not "fail"),
        then the most frequent stem."""
        edits = max_edits(word)
        typed_stem = stem(word)
        keys = [typed_stem, *(typed_stem[:n] for n in (len(typed_stem) - 1, len(typed_stem) - 2) if n > MIN_STEM)]
        english = english_words()
        best: tuple[int, bool, int, int, str] | None = None
        for shortened, key in enumerate(keys):
            if best is not None:
                break  # the stem as typed found a word: its shortened forms are not searched
            for target in self.closest_stems(key, edits):
                written = self.written(word, key, target, edits, words_only=shortened > 0)
                if written is not None:
                    candidate = (written[0], written[1] not in english, -_shared_start(word, written[1]),
                                 -self.weight[target], written[1])
                    best = candidate if best is None else min(best, candidate)
        if best is None:
            return self.split(word)
        return self.respelled.get(best[4], best[4])

    def correct(self, text: str) -> Correction:
        """`text` with its unknown words corrected (the rest of the text as it was): the first MAX_LOOKUPS of
        them, so that a pasted letter full of names costs no more than a question."""
        pieces: list[str] = []
        changes: list[tuple[str, str]] = []
        position = 0
        lookups = 0
        for match in _WORD.finditer(text):
            typed = match.group(1)
            if (respelled := self.glossary_respelling(typed)) is not None:
                pieces += [text[position:match.start(1)], respelled]
                position = match.end(1)
                changes.append((typed, respelled))
                continue
            if not _may_correct(typed) or match.group().lower().replace("’", "'") in english_words():  # wouldn't
                continue
            word = typed.lower()
            if self.knows(word):
                continue
            lookups += 1
            if lookups > MAX_LOOKUPS:
                break
            fixed = self.correct_word(word)
            if fixed is None or fixed == word:
                continue
            pieces += [text[position:match.start(1)], fixed]
            position = match.end(1)
            changes.append((typed, fixed))
        if not changes:
            return Correction(text)
        return Correction("".join([*pieces, text[position:]]), tuple(changes))


def _shared_start(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _may_correct(typed: str) -> bool:
    """Long enough, and in lower case: a capital marks an acronym or a name (SNAP, Maria), and a navigator typing
    mid-call rarely capitalises the first word of a question either."""
    return MIN_LENGTH <= len(typed) <= MAX_LENGTH and typed.islower()


class Speller:
    """Corrects questions against a store's vocabulary, rebuilding the lexicon when the store changed."""

    def __init__(self, frequencies: Callable[[], dict[str, int]], generation: Callable[[], Any],
                 glossary: Mapping[str, Sequence[str]] | None = None) -> None:
        self._frequencies = frequencies
        self._generation = generation
        self._glossary = dict(glossary or {})
        self._lock = threading.Lock()
        self._built: tuple[Any, Lexicon] | None = None

    @classmethod
    def of(cls, store: object, glossary: Mapping[str, Sequence[str]] | None = None) -> Speller | None:
        """A speller for a store that keeps a vocabulary of stems (the embedded SQLite store), else None."""
        frequencies = getattr(store, "sentence_df", None)
        generation = getattr(store, "generation", None)
        if frequencies is None or generation is None:
            log.info("spelling: %s keeps no vocabulary of stems: questions are searched as typed",
                     type(store).__name__)
            return None
        return cls(frequencies, generation, glossary)

    def lexicon(self) -> Lexicon:
        generation = self._generation()
        built = self._built
        if built is not None and built[0] == generation:
            return built[1]
        with self._lock:
            if self._built is None or self._built[0] != generation:
                self._built = (generation, Lexicon(self._frequencies(), self._glossary))
            return self._built[1]

    def warm_up(self) -> None:
        """Build the lookup and read the English word list now (at start-up), not at the first question."""
        self.lexicon()
        english_words()

    def correct(self, text: str) -> Correction:
        return self.lexicon().correct(text)
