"""One question, start to end: rewrite with the history, retrieve, rerank, generate, check the citations.

Platform-neutral: the bot's turn handler, `navibot ask/chat` and `navibot eval` all call `Engine.answer`.
A turn's model calls share one deadline (`rag.answer.budget`); each stage that falls back to a simpler path
(offline rewrite, lexical search, fused order, extractive answer) is logged and listed in `Outcome.fallbacks`.
Timings are in milliseconds per stage: rewrite, retrieve, rerank (when a reranker is configured), generate, total.
With `redact` set (NAVIBOT_REDACT_OUTBOUND), the question and the history are redacted before the first stage, so
no personal data reaches a hosted rewriter, embedder, reranker or answerer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from rag.answer.answerability import PROGRAM_SECTIONS
from rag.answer.answerer import Answerer, AnswerRequest, StreamingAnswerer
from rag.answer.budget import current_budget, note_fallback, turn_budget
from rag.answer.compute_gate import ComputeGate, waiting_on_model
from rag.answer.evidence import evidence
from rag.answer.moods import Mood
from rag.answer.progress import CHECKING, AnswerProgress, searching, writing
from rag.answer.rewrite import Exchange, Rewrite, Rewriter
from rag.answer.smalltalk import smalltalk_reply
from rag.cite.rail import Citation, Draft, check
from rag.cite.sentence_rail import RailState, SentenceRail
from rag.documents import SearchHit
from rag.search.paragraphs import read_later
from rag.search.retrieve import Retriever

log = logging.getLogger(__name__)

OutcomeKind = Literal["answer", "no_answer", "smalltalk"]


@dataclass(slots=True)
class Outcome:
    kind: OutcomeKind
    text: str  # as shown, with the mood's prefix or note
    standalone: str
    citations: list[Citation] = field(default_factory=list)
    closest: list[str] = field(default_factory=list)  # topics found, offered with a no-answer
    hits: list[SearchHit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    answer: str = ""  # the answer alone, without prefix or note: what the history keeps
    fallbacks: list[str] = field(default_factory=list)  # "stage: cause" for each stage that fell back


class Reranker(Protocol):
    def rerank(self, query: str, hits: list[SearchHit], top_n: int) -> list[SearchHit]:
        """The best `top_n` hits by the model's relevance, with `rerank_score` set; raises on failure."""
        ...


def already_read(rewrite: Rewrite, history: Sequence[Exchange]) -> frozenset[str]:
    """The paragraphs the previous answer quoted, when the question follows it up: the navigator has read them."""
    return frozenset(history[-1].cited) if rewrite.follows and history else frozenset()


def no_answer_text(closest: list[str]) -> str:
    text = "I couldn't find this in the knowledge base."
    if closest:
        text += " The closest topics I found: " + "; ".join(closest) + "."
    return text + " Try rephrasing with the program's name (SNAP, Medicaid, WIC…) and the situation."


# The sections retrieved for a turn, at least: the gate judges which program they are about from this many. Session
# 19: with the answer's five only, a SNAP question over sections that do not repeat the program's name was refused
# as asking about a program they do not name. Answerable refused: 17 -> 15 of 642 on the twelve unread sets, 22 ->
# 21 of 1,045 on the read ones; unanswerable refused 161 -> 162 of 182 and 664 -> 666 of 705.
GATE_SECTIONS = PROGRAM_SECTIONS


class Engine:
    def __init__(self, retriever: Retriever, rewriter: Rewriter, answerer: Answerer, top_k: int = 5,
                 reranker: Reranker | None = None, rerank_candidates: int = 30,
                 turn_deadline_seconds: float | None = None, redact: Callable[[str], str] | None = None,
                 compute_slots: int | None = None) -> None:
        self.retriever = retriever
        self.rewriter = rewriter
        self.answerer = answerer
        self.top_k = top_k
        self.reranker = reranker
        self.rerank_candidates = rerank_candidates
        self.turn_deadline_seconds = turn_deadline_seconds
        self.redact = redact
        # At most `compute_slots` turns in their CPU stages at once (rag/answer/compute_gate.py): the rest wait
        # without holding the GIL, so the server's event loop keeps acknowledging requests; model waits overlap.
        self.gate = ComputeGate(compute_slots)

    def _outbound(self, question: str, history: Sequence[Exchange]) -> tuple[str, list[Exchange]]:
        """The question and history as they may leave the process (redacted when `redact` is set)."""
        if self.redact is None:
            return question, list(history)
        clean = self.redact
        return clean(question), [Exchange(clean(e.question), clean(e.answer), clean(e.standalone), e.cited)
                                 for e in history]

    def rewrite_and_retrieve(self, question: str, history: Sequence[Exchange], k: int | None = None,
                             tags: list[str] | None = None, groups: list[str] | None = None,
                             timings: dict[str, float] | None = None) -> tuple[Rewrite, list[SearchHit]]:
        question, history = self._outbound(question, history)
        with self.gate.held():
            return self._rewrite_and_retrieve(question, history, k, tags, groups, timings)

    def _rewrite_and_retrieve(self, question: str, history: list[Exchange], k: int | None,
                              tags: list[str] | None, groups: list[str] | None,
                              timings: dict[str, float] | None) -> tuple[Rewrite, list[SearchHit]]:
        """`rewrite_and_retrieve` for a question and history already as they may leave the process."""
        timings = {} if timings is None else timings
        started = time.perf_counter()
        rewrite = self.rewriter.rewrite(question, history)
        # Typos corrected as the search will read them, so "(understood as …)" shows what was searched (a stand-in
        # retriever of a test may not correct: then the question stays as rewritten).
        spelled = getattr(self.retriever, "spelled", None)
        if spelled is not None and (standalone := spelled(rewrite.standalone)) != rewrite.standalone:
            rewrite = replace(rewrite, standalone=standalone)
        timings["rewrite"] = (time.perf_counter() - started) * 1000
        # The answer is written from the best top_k; the no-answer gate also reads what the best GATE_SECTIONS are
        # about (rag/answer/answerability.py PROGRAM_SECTIONS), so at least that many are retrieved.
        k = max(k or self.top_k, GATE_SECTIONS)
        started = time.perf_counter()
        depth = max(k, self.rerank_candidates) if self.reranker is not None else k
        # A follow-up read with its thread: its own words also rank the paragraphs (rag/search/retrieve.py).
        own_words = question if rewrite.follows and question.strip() != rewrite.standalone.strip() else ""
        hits = self.retriever.search(rewrite.search_text, k=depth, tags=tags, groups=groups, follow_up=own_words)
        timings["retrieve"] = (time.perf_counter() - started) * 1000
        if self.reranker is not None:
            started = time.perf_counter()
            hits = self._rerank(rewrite.standalone, hits, k)
            timings["rerank"] = (time.perf_counter() - started) * 1000
        return rewrite, read_later(hits, already_read(rewrite, history))

    def _rerank(self, query: str, hits: list[SearchHit], k: int) -> list[SearchHit]:
        assert self.reranker is not None
        if not hits:
            return hits
        try:
            return self.reranker.rerank(query, hits, k)
        except Exception as exc:  # noqa: BLE001 - whatever broke, the fused order is a good answer too
            note_fallback("rerank", f"{exc}; fused order kept")
            return hits[:k]

    def answer(self, question: str, history: Sequence[Exchange], mood: Mood, tags: list[str] | None = None,
               groups: list[str] | None = None, progress: AnswerProgress | None = None) -> Outcome:
        """With `progress`, the stages are reported in words and, when the answerer streams (a language model),
        each sentence once the streamed-answer rail passed it; the outcome is then exactly what was streamed."""
        started = time.perf_counter()
        friendly = smalltalk_reply(question)
        if friendly:
            return Outcome("smalltalk", friendly, question, timings_ms={"total": 0.0})
        timings: dict[str, float] = {}
        question, history = self._outbound(question, history)  # once: the rewrite and answer get the same text
        with turn_budget(self.turn_deadline_seconds) as budget:
            if progress is not None:
                _report(progress.status, searching(question))
            with self.gate.held():  # the model calls inside give the slot up while they wait
                rewrite, hits = self._rewrite_and_retrieve(question, history, None, tags, groups, timings)
                outcome = self._compose(question, history, rewrite, hits, mood, timings, progress)
        outcome.fallbacks = list(budget.fallbacks)
        timings["total"] = (time.perf_counter() - started) * 1000
        return outcome

    def replay(self, questions: Sequence[str], mood: Mood, k: int | None = None,
               quotes_known: bool = True) -> list[Exchange]:
        """Earlier questions of a conversation answered in order, as the thread would hold them (bot/chat/handler.py):
        each answer, how its question was understood and what it quoted; a no-answer is not kept. For evaluations
        whose history holds only the user's turns. `quotes_known=False` leaves out what the answers quoted, so the
        rewriter searches each answer again, as it did before session 14 (benchmarks/bench_thread_replay.py)."""
        thread: list[Exchange] = []
        for question in questions:
            rewrite, hits = self.rewrite_and_retrieve(question, thread, k=k)
            outcome = self.compose(question, thread, rewrite, hits, mood)
            if outcome.kind == "answer":
                cited = tuple(c.sub_id for c in outcome.citations) if quotes_known else ()
                thread.append(Exchange(question, outcome.answer, rewrite.standalone, cited))
        return thread

    def compose(self, question: str, history: Sequence[Exchange], rewrite: Rewrite, hits: list[SearchHit], mood: Mood,
                timings: dict[str, float] | None = None) -> Outcome:
        """Answer from the retrieved sections, or a no-answer when the answerer declines (the extractive one does
        when the sections do not cover the question) or no citation survives the rail."""
        question, history = self._outbound(question, history)
        if self.redact is not None:
            rewrite = replace(rewrite, standalone=self.redact(rewrite.standalone), context=self.redact(rewrite.context))
        with self.gate.held():
            return self._compose(question, history, rewrite, hits, mood, timings)

    def _compose(self, question: str, history: Sequence[Exchange], rewrite: Rewrite, hits: list[SearchHit],
                 mood: Mood, timings: dict[str, float] | None, progress: AnswerProgress | None = None) -> Outcome:
        """`compose` for a question, history and rewrite already as they may leave the process (the rewrite was
        made from the redacted question and history, so it holds nothing the redaction would change)."""
        timings = {} if timings is None else timings
        gate_hits, hits = hits, hits[: self.top_k]
        closest = list(dict.fromkeys(h.chunk.heading_text for h in hits[:3]))
        outcome = Outcome("no_answer", no_answer_text(closest), rewrite.standalone, closest=closest, hits=hits,
                          timings_ms=timings)
        if hits:
            started = time.perf_counter()
            coverage = evidence(question, rewrite.standalone, gate_hits, self.retriever.glossary)
            request = AnswerRequest(question, rewrite.standalone, history, hits, mood, coverage,
                                    already_read(rewrite, history))
            if progress is None:
                draft = self.answerer.answer(request)
            else:
                _report(progress.status, writing(len(hits)))
                draft = self._streamed(request, progress) if isinstance(self.answerer, StreamingAnswerer) \
                    else self.answerer.answer(request)
                _report(progress.status, CHECKING)
            checked = check(draft, hits)
            timings["generate"] = (time.perf_counter() - started) * 1000
            for reason in checked.dropped:
                log.warning("citation dropped: %s", reason)
            for reason in checked.unsupported:
                log.warning("answer sentence dropped: %s", reason)
            if checked.ok:
                shown = f"{draft.prefix} {checked.text}".strip() + (f"\n{draft.note}" if draft.note else "")
                outcome.kind, outcome.text, outcome.answer = "answer", shown, checked.text
                outcome.citations = checked.citations
        return outcome

    def _streamed(self, request: AnswerRequest, progress: AnswerProgress) -> Draft:
        """The answer as the model streams it, each sentence reported once the rail passed it; what was shown, as a
        Draft (no citations when the first sentence failed: the no-answer, with nothing unverified shown)."""
        assert isinstance(self.answerer, StreamingAnswerer)
        stream = self.answerer.stream(request)
        if stream.whole is not None:  # the answerer fell back to one that writes its answer whole
            return stream.whole
        rail = SentenceRail(request.hits, stream.ids, stream.clean)
        pieces = iter(stream.pieces)
        deadline = current_budget().deadline  # the HTTP timeout bounds each read of a stream, not the whole of it
        try:
            while True:
                with waiting_on_model():  # the next piece of the stream: a wait on the model, not CPU work
                    piece = next(pieces, None)
                if piece is None:
                    break
                if shown := rail.feed(piece):
                    _report(progress.sentence, shown)
                if rail.state is not RailState.STREAMING:
                    break  # the rest of the model's text will not be shown: stop reading it
                if deadline.expired:
                    stream.errors.append("the turn's time ran out while the model was writing")
                    break
        finally:
            close = getattr(pieces, "close", None)
            if close is not None:
                close()
        for why in stream.errors:
            note_fallback("generate", why)
            rail.cut_off(why)
        if shown := rail.finish():
            _report(progress.sentence, shown)
        if rail.state is not RailState.DONE:
            log.warning("streamed answer %s: %s", rail.state.value, rail.failure)
        return rail.draft()


def _report(call: Callable[[str], None], text: str) -> None:
    """A progress report that fails (a surface that went away) is a log line: the answer goes on."""
    try:
        call(text)
    except Exception as exc:  # noqa: BLE001 - whatever the surface raised, the turn must finish
        log.warning("progress report failed: %s", exc)
