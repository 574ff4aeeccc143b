"""The citation rail for a streamed answer: the model's text is cut into sentences as it arrives, and a sentence is
released (shown) only once its citations are checked, exactly as rag/cite/rail.py checks a whole answer: every
paragraph it names was retrieved for this question, and every number, amount, date, phone number, URL and e-mail
address it states is in a paragraph it cites (rag/cite/claims.py).

A streamed answer names its paragraphs by id in brackets ("... within 30 days [abc::1.0]."): there is no list of
citations to number against before the text is done. The rail numbers them 1..n in the order of first use, so a
released sentence never changes. A sentence without a marker waits for the next marked one and is checked against
its paragraphs (or, at the end, against the previous marked sentence's), as the whole-answer rail does.

If the first sentence fails, nothing has been shown and the answer is refused (the caller shows the no-answer).
If a later one fails, the stream stops there: what was shown stays, nothing after it is shown. Either way no
unverified text ever leaves the rail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from rag.cite.claims import unsupported_claims
from rag.cite.rail import Draft, cited_texts
from rag.documents import Chunk, SearchHit, SubChunk

_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\]")
_NUMBER_MARKER = re.compile(r"\[(\d{1,3})\]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
# A sentence end: . ! ? (with closing quotes/brackets), then the [n] markers that follow it. It is final only once
# the next non-space character is known: "U.S. citizens" and "273.5" end nothing (a lower-case word or digit follows).
_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)]*(?:\s?\[\d{1,3}\])*(?=\s)")
_INVALID = 0  # the number a marker naming no retrieved paragraph gets: never a valid citation


class RailState(StrEnum):
    STREAMING = "streaming"
    DONE = "done"  # the model finished and every released sentence passed
    STOPPED = "stopped"  # a sentence failed after others were shown: the answer ends before it
    REFUSED = "refused"  # the first sentence failed, or no sentence cited anything: show the no-answer


def _same(text: str) -> str:
    return text


@dataclass(slots=True)
class SentenceRail:
    """Feed it the model's text as it streams (`feed`), then `finish`; each returns the text to show now (verified
    sentences, with their [n] markers numbered in order of first use). `draft()` is what was shown, as a `Draft`
    for rag/cite/rail.check (which then builds the citations, quotes and links)."""

    hits: list[SearchHit]
    ids: Mapping[str, str] | None = None  # an id as the model writes it -> the stored id (default: the same)
    clean: Callable[[str], str] = _same  # applied to a sentence before it is checked and shown (e.g. unescaping)
    state: RailState = RailState.STREAMING
    failure: str = ""  # why the rail refused or stopped, for the log
    _retrieved: dict[str, tuple[SubChunk, Chunk]] = field(default_factory=dict)
    _number: dict[str, int] = field(default_factory=dict)  # stored id -> shown number
    _raw: str = ""  # received text not yet cut into sentences (may end inside a bracket or a sentence)
    _line_open: bool = False  # the current line already has released (or pending) text: its list mark is taken
    _pending: list[str] = field(default_factory=list)  # unmarked sentences waiting for a marked one
    _last_cites: list[str] = field(default_factory=list)
    _shown: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._retrieved = {sub.sub_id: (sub, hit.chunk) for hit in self.hits for sub in hit.chunk.subchunks}
        if self.ids is None:
            self.ids = {sub_id: sub_id for sub_id in self._retrieved}

    @property
    def shown(self) -> str:
        return "".join(self._shown).strip()

    def feed(self, delta: str) -> str:
        """The model's next piece of text; returns the sentences it completed that passed ("" when none)."""
        if self.state is not RailState.STREAMING or not delta:
            return ""
        self._raw += delta
        return self._release(final=False)

    def finish(self) -> str:
        """The model is done: the last sentence is complete; returns what may still be shown."""
        if self.state is not RailState.STREAMING:
            return ""
        out = self._release(final=True)
        if self.state is RailState.STREAMING and not self._number:
            self._refuse("no sentence cites a retrieved paragraph")  # a refusal or small talk: the no-answer
        if self.state is RailState.STREAMING and self._pending:
            out += self._check(self._pending, self._last_cites)  # unmarked last sentences: the previous citations
            self._pending = []
        if self.state is RailState.STREAMING:
            self.state = RailState.DONE
        return out

    def cut_off(self, why: str) -> None:
        """The model's text broke off: its unfinished sentence (and unmarked ones waiting) are never shown."""
        if self.state is RailState.STREAMING:
            self._raw, self._pending = "", []
            self._fail(why)

    def draft(self) -> Draft:
        """What was shown: its text with [n] markers and the cited ids in number order, for `check`."""
        order = sorted(self._number, key=self._number.__getitem__)
        return Draft(self.shown, order if self.state is not RailState.REFUSED else [])

    # --- inside -----------------------------------------------------------------------------------------------

    def _release(self, final: bool) -> str:
        out = []
        while self.state is RailState.STREAMING:
            cut = self._next_sentence(final)
            if cut is None:
                break
            out.append(self._sentence(*cut))
        return "".join(out)

    def _next_sentence(self, final: bool) -> tuple[str, dict[int, str]] | None:
        """Cut the next complete sentence (with its markers, the spaces after it and a line break) off the raw
        text, its bracketed ids turned into [n] markers, with what each n names; None when none is complete."""
        raw = self._raw
        opened = raw.rfind("[")
        if (not final and opened > raw.rfind("]") and "\n" not in raw[opened:]
                and len(raw) - opened <= 302):
            raw = raw[:opened]  # a marker still being written: nothing from its start on is decided
        head = ""
        if not self._line_open:
            mark = _LIST_MARK.match(raw)
            if mark is None and not final and "\n" not in raw and len(raw.lstrip()) < 5:
                return None  # the line may still turn out to start with a list mark ("1. ")
            head = mark.group(0) if mark else ""
        body = raw[len(head):]
        newline = body.find("\n")
        converted = self._numbered(body if newline < 0 else body[:newline])
        end = None
        for match in _SENTENCE_END.finditer(converted.text):
            following = converted.text[match.end():].lstrip()
            if not following and newline < 0 and not final:
                break  # the next character is not known yet
            if following and (following[0].islower() or following[0].isdigit()):
                continue
            end = match.end() + len(converted.text[match.end():]) - len(following)
            break
        start = len(head)
        if end is not None:
            sentence, rest = head + converted.text[:end], self._raw[start + converted.raw_end(end):]
            self._line_open = True
        elif newline >= 0:
            sentence, rest = head + converted.text + "\n", self._raw[start + newline + 1:]
            self._line_open = False
        elif final and (head or body.strip()):
            sentence, rest = head + converted.text, ""
        else:
            return None
        self._raw = rest
        return sentence, converted.names

    def _numbered(self, text: str) -> _Converted:
        """The text with each bracketed id as an [n] marker: n continues the numbering of the sentences shown, in
        order of first use (0 for an id not retrieved). Nothing is committed until a sentence is shown."""
        trial = dict(self._number)
        parts: list[str] = []
        offsets: list[tuple[int, int]] = []  # (end in the converted text, end in the raw text) after each marker
        last = 0
        for match in _BRACKET.finditer(text):
            parts.append(text[last:match.start()])
            numbers = []
            for name in match.group(1).split(","):
                assert self.ids is not None
                stored = self.ids.get(name.strip())
                known = stored is not None and stored in self._retrieved
                numbers.append(trial.setdefault(stored, len(trial) + 1) if known and stored else _INVALID)
            parts.append("".join(f"[{n}]" for n in numbers))
            last = match.end()
            offsets.append((len("".join(parts)), last))
        parts.append(text[last:])
        return _Converted("".join(parts), offsets, {n: sub_id for sub_id, n in trial.items()})

    def _sentence(self, sentence: str, names: dict[int, str]) -> str:
        numbers = [int(n) for n in _NUMBER_MARKER.findall(sentence)]
        if not numbers:
            if sentence.strip():
                self._pending.append(sentence)
                return ""
            return self._show([sentence], [])
        if _INVALID in numbers:
            return self._fail(f"{sentence.strip()!r} cites a paragraph that was not retrieved for this question")
        cites = list(dict.fromkeys(names[n] for n in numbers))
        waiting, self._pending = self._pending, []
        out = self._check(waiting, cites) if waiting else ""
        if self.state is RailState.STREAMING:
            out += self._check([sentence], cites)
            self._last_cites = cites
        return out

    def _check(self, sentences: list[str], cites: list[str]) -> str:
        for sentence in sentences:
            missing = unsupported_claims(self.clean(sentence), cited_texts(cites, self._retrieved))
            if missing:
                return self._fail(f"{', '.join(repr(m) for m in missing)} not in the cited paragraphs "
                                  f"({', '.join(cites) or 'none'})")
        return self._show(sentences, cites)

    def _show(self, sentences: list[str], cites: list[str]) -> str:
        for sub_id in cites:  # the numbers the sentences were given (ids new to the answer, in order of use)
            self._number.setdefault(sub_id, len(self._number) + 1)
        text = "".join(self.clean(s) for s in sentences)
        if not self._shown:
            text = text.lstrip()
        self._shown.append(text)
        return text

    def _fail(self, why: str) -> str:
        if self.shown:
            self.state, self.failure = RailState.STOPPED, why
        else:
            self._refuse(why)
        return ""

    def _refuse(self, why: str) -> None:
        self.state, self.failure = RailState.REFUSED, why


@dataclass(frozen=True, slots=True)
class _Converted:
    text: str
    offsets: list[tuple[int, int]]
    names: dict[int, str]  # marker number -> stored id

    def raw_end(self, end: int) -> int:
        """Where the converted text's first `end` characters end in the raw text."""
        shift = 0
        for converted_end, raw_end in self.offsets:
            if converted_end <= end:
                shift = raw_end - converted_end
        return end + shift
