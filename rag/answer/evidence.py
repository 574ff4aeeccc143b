"""How well the retrieved sections cover the question: below a calibrated threshold the bot says it does not
know rather than quote something loosely related (calibration in benchmarks/RESULTS.md)."""

from __future__ import annotations

import logging
from functools import cache

from rag.answer.answerability import PROGRAMS, programs_in, sections_program, unanswerable_reason
from rag.documents import SearchHit
from rag.search.bm25 import query_stems, stemmed
from rag.search.glossary import Glossary
from rag.search.sentences import reading_sentences

log = logging.getLogger(__name__)

SECTIONS_CHECKED = 3
MIN_WORDS_FOUND = 2
# A question told at length ("Patient got laid off from the auto plant in January after 19 years. He has around
# $22,000 in his 401k ... Does that retirement money count?") is judged on its asking sentence as well: the
# client's story around it is not what the sections must hold. Only a last sentence that asks ("?") with at least
# ASK_MIN_TERMS topic words of its own; the whole question still decides what cannot be answered (a phone number,
# this year's figure). Session 17, answerable refused: 22 -> 19 of 642 on the twelve unread sets, 32 -> 23 of 964 on
# the read ones (probe39, a health worker's long questions, 15 -> 10 of 55); unanswerable refused unchanged on both
# (161 of 182, 494 of 520). Taking the sentence with "?" wherever it stands also answered 4 unanswerable ones
# ("can she use her ebt for the hot rotisserie chicken at kroger? she's not homeless").
ASK_MIN_TERMS = 2


def asking_sentence(question: str) -> str:
    """The last sentence of a question of several, when it asks ("?"); else ""."""
    sentences = reading_sentences(question)
    if len(sentences) < 2 or not sentences[-1].rstrip().endswith("?"):
        return ""
    return sentences[-1]


def evidence(question: str, standalone: str, hits: list[SearchHit], glossary: Glossary | None = None) -> float:
    """Coverage of the standalone question, or of the question as asked when that is better: a follow-up
    rewritten with earlier questions has more words than any one section covers, yet its own words may all be
    there. A question of fewer than two topic words cannot vouch for itself. A question that asks for a fact the
    sections cannot hold (a phone number, this year's figure, how to get into another program) has none. With a
    glossary, a navigator's phrase counts as found in a section that holds one of its policy terms ("underpaid"
    in a section on lost benefits): retrieval found the section through those terms, so the gate must see them."""
    # The question as asked, and the standalone one only when it is not the thread's questions with this one
    # appended (then an earlier turn's request would count again).
    program = cache(lambda: sections_program(hits))  # read once, and only when a question names a program
    for text in [question] + ([standalone] if question.strip() not in standalone else []):
        reason = unanswerable_reason(text, hits, program)
        if reason:
            log.info("no evidence: the question %s", reason)
            return 0.0
    main = program() if programs_in(f"{question}\n{standalone}") else None
    whole = coverage(question, hits, glossary, main)
    ask = asking_sentence(question)
    asked = coverage(ask, hits, glossary, main) if ask and len(set(query_stems(ask))) >= ASK_MIN_TERMS else 0.0
    if standalone == question:
        return max(whole, asked)
    own = whole if len(set(query_stems(question))) >= 2 else 0.0
    return max(own, asked, coverage(standalone, hits, glossary, main))


def _phrases(question: str, glossary: Glossary | None) -> list[tuple[set[str], list[set[str]]]]:
    """Each glossary phrase in the question as stems, with each of its policy terms as stems."""
    if glossary is None:
        return []
    return [(set(stemmed(phrase)), [set(stemmed(term)) for term in terms])
            for phrase, terms in glossary.expand(question).entries]


def coverage(question: str, hits: list[SearchHit], glossary: Glossary | None = None,
             program: str | None = None) -> float:
    """Best share, over the top sections, of the question's topic words (stemmed) found in the section's title,
    headings or text, a glossary phrase's words counting as found where one of its policy terms is, and the words
    naming `program` (what the best sections are about, answerability.sections_program) as found everywhere: a
    section of the SNAP rules is about SNAP without saying so. Rank-fusion scores cannot say this: they only order
    candidates."""
    terms = set(query_stems(question))
    if not terms:
        return 0.0
    phrases = _phrases(question, glossary)
    named = {stem for m in PROGRAMS[program].finditer(question) for stem in stemmed(m.group(0))} if program else set()
    best = 0.0
    for hit in hits[:SECTIONS_CHECKED]:
        words = set(stemmed(hit.chunk.index_text))
        # A term of no words after stemming (all function words) proves nothing: it must have a word to be found.
        credited = {stem for phrase, policy in phrases if any(t and t <= words for t in policy) for stem in phrase}
        credited |= named
        found_terms = terms & (words | credited)
        found = len(found_terms)
        # a number found counts; one not found (her age, her $12k) is the client's own figure, not a topic word
        asked = len(terms - {t for t in terms - found_terms if any(c.isdigit() for c in t)})
        # One shared word is chance ("capital" of France in a page on capital gains): at least two, when the
        # question has two.
        if asked and found >= min(MIN_WORDS_FOUND, asked):
            best = max(best, found / asked)
    return best
