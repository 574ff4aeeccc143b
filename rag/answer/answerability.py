"""Questions the retrieved sections cannot answer, whatever words they share with them.

A navigator also asks for things a policy text never holds: a local office's phone number or hours, the nearest
food pantry, where a case stands, this year's dollar figures, or how to sign up for another program. Such a
question shares enough words with some section ("SNAP office", "EBT card", "amount") to pass a coverage test, and
the offline answerer would quote that loosely related paragraph. Each check below asks for the kind of fact the
question needs and looks for it in the best sections: a phone number needs digits shaped like one, office hours a
clock time, this year's figure the year itself; a knowledge base that holds them (a county's contact page) still
answers. Used by rag.answer.evidence; no language model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from rag.documents import SearchHit

SECTIONS_CHECKED = 3


@dataclass(frozen=True, slots=True)
class Need:
    """A kind of fact the question asks for, and what a section that holds it contains."""

    name: str
    asks: re.Pattern[str]
    holds: re.Pattern[str] | None  # None: no document can hold it (a live case lookup)


_NEEDS = (
    Need("phone number",
         re.compile(r"\b(?:phone|telephone|call center|hotline|fax)\s*(?:number|#|no\b)|\bnumber (?:to|for) call\b|"
                    # asked for ("is there a hotline she can call"), not told of ("she called the hotline and …")
                    r"\b(?:is there|are there|what(?:'s| is)?|whats|give me|need)\s+(?:\w+\s+){0,3}"
                    r"(?:hotline|helpline|help line|call center)\b", re.I),
         re.compile(r"\(?\b\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}\b|\b1-8\d\d\b")),
    Need("opening hours",
         re.compile(r"\b(?:office hours|opening hours|hours of operation|what time\b.*\b(?:open|close)|"
                    r"(?:open|close)s? (?:on )?(?:saturdays?|sundays?|weekends?|today|tomorrow))\b", re.I),
         re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)", re.I)),
    Need("a place nearby",
         re.compile(r"\b(?:closest|nearest)\s+(?:\w+\s+){0,2}(?:office|pantry|pantries|food bank|location|center|"
                    r"store|clinic|place)|\bnear me\b|\bnear \d{5}\b|\bdirections to\b|\baddress of\b", re.I),
         re.compile(r"\b\d{1,5} [A-Z][a-z]+ (?:St|Street|Ave|Avenue|Road|Rd|Blvd|Drive|Dr)\b|\b\d{5}(?:-\d{4})?\b")),
    # An EBT card's logistics (a lost or stolen card, its PIN, its balance, the day benefits are loaded on it) are
    # run under the issuance rules and the state's card vendor, not the eligibility rules, which mention the card
    # without saying any of this; only a question in an EBT/SNAP context, so that a lost Social Security card is not
    # read as one. A knowledge base with the state's card page (replacing a card, the issuance schedule) answers.
    Need("EBT card logistics",
         re.compile(r"^(?=.*\b(?:ebt|snap|food stamps?|benefits? card)\b)(?=.*(?:"
                    r"\b(?:lost|stolen|stole|damaged|broken|skimmed|hacked|replace\w*|new|another)\s+"
                    r"(?:(?:her|his|my|their|the|a|an)\s+)?(?:ebt\s+|snap\s+|benefits?\s+|food stamps?\s+)?card\b"
                    r"|\bcards?\s+(?:was\s+|got\s+|is\s+|has been\s+)?(?:lost|stolen|damaged|skimmed|hacked|drained|"
                    r"declined|blocked|locked)\b"
                    r"|\bpin(?:\s+number)?\b"
                    r"|\b(?:check|see|find out)\s+(?:\w+\s+){0,2}balance\b|\bbalance on\b"
                    r"|\bhow much\b(?:\s+\w+){0,3}?\s+(?:left|remaining)\s+on\b"
                    r"|\bdeposits?\b(?:\s+\w+){0,3}?\s+(?:hit|hits|post|posts|land|lands|show up)\b"
                    r"|\buse\s+(?:her|his|their|my|the)?\s*(?:ebt|snap|food stamps?)(?:\s+card|\s+benefits)?\s+at\b"
                    r"|\b(?:what|which)\s+(?:day|date)\b(?:\s+\w+){0,8}?\s+(?:loaded|deposited|deposit|load|added|"
                    r"hits?|come in|comes in|go on|goes on|put on)\b"
                    r"|\bwhen\s+(?:do|does|will|is)\b(?:\s+\w+){0,6}?\s+(?:get\s+|be\s+)?(?:loaded|deposited|"
                    r"put on|added to)\b))"
                    # skimming, cloning and draining happen to benefit cards, whatever the question calls them
                    r"|\bcards?\s+(?:was\s+|got\s+|is\s+|has been\s+)?(?:skimmed|cloned|drained)\b", re.I | re.S),
         re.compile(r"\breplace(?:ment)?\s+(?:\w+\s+){0,4}(?:ebt\s+)?cards?\b|\bcards?\s+(?:\w+\s+){0,4}replaced\b|"
                    r"\bissuance (?:schedule|calendar)\b|\b(?:benefits|snap)\s+(?:are|is)\s+(?:deposited|loaded)\b|"
                    r"\bbalance inquir|\bcheck (?:your|the|a|their) (?:\w+ )?balance\b|"
                    r"\b(?:change|reset|choose|select) (?:your|a|the|their) PIN\b", re.I)),
    Need("a case lookup",
         # asked of the bot ("can you look up …"), not "how do I check on my case?", which a page may answer
         re.compile(r"\b(?:can|could|would|will|pls|please)\s+(?:you|u)\s+(?:please\s+)?(?:look ?up|check|find|"
                    r"see)\b(?:\s+\w+){0,3}?\s+(?:my|her|his|their|this|the)\s+(?:client|case|application|app|"
                    r"status|benefits)\b|\blook ?up (?:her|his|my|their|the|this)?\s*(?:client'?s?\s+)?case\b|"
                    r"\bcase\s*(?:#|no\.?|number)\s*\d", re.I),
         None),
)
# This year's dollar figures (allotments, utility allowances, income limits) are published each year apart from
# the rules; a section holds one only if it names the year asked about.
_CURRENT = re.compile(r"\b(?:this year|this fiscal year|right now|(?:fy|fiscal year)\s?(20)?\d\d)\b"
                      # "the income limit for a household of 3 in 2025"
                      r"|\b(?:limits?|amounts?|allotments?|allowances?|figures?|max\w*|standards?|deductions?)\b"
                      r"[^.?!]{0,40}?\b(?:in|for)\s+(?:fy\s?)?20\d\d\b", re.I)
_AMOUNT = re.compile(r"\b(?:how much|amount|limit|max(?:imum)?|allotment|in dollars|dollar|rate|figure)\b|\$",
                     re.I)
_NEAR = r".{0,300}?"  # how close a year must stand to a dollar figure to be that figure's year
_YEAR = re.compile(r"\b(?:fy|fiscal year)\s?(20)?(\d\d)\b|\b(20\d\d)\b", re.I)

# Benefit programs by the names navigators use. A question that asks how to get into another program than the
# one the best sections are about is not answered from them ("how do I sign up for WIC" against the SNAP rules),
# while a question about how that program counts for this one is ("LIHEAP help ... count as income for snap").
PROGRAMS: dict[str, re.Pattern[str]] = {
    "SNAP": re.compile(r"\b(?:snap|food stamps?|food assistance|ebt)\b", re.I),
    "WIC": re.compile(r"\bwic\b", re.I),
    "Medicaid": re.compile(r"\b(?:medicaid|chip)\b", re.I),
    "Medicare": re.compile(r"\bmedicare\b", re.I),
    "TANF": re.compile(r"\b(?:tanf|cash assistance)\b", re.I),
    "SSI": re.compile(r"\bssi\b|\bsupplemental security income\b", re.I),
    "SSDI": re.compile(r"\bssdi\b|\bsocial security disability\b", re.I),
    "LIHEAP": re.compile(r"\bliheap\b|\benergy assistance\b", re.I),
    "housing": re.compile(r"\bsection 8\b|\bhousing (?:choice )?vouchers?\b|\bpublic housing\b", re.I),
    "unemployment": re.compile(r"\bunemployment\b", re.I),
    "tax credits": re.compile(r"\b(?:eitc|ctc|earned income (?:tax )?credit|child tax credit)\b", re.I),
    "food banks": re.compile(r"\bfood (?:banks?|pantry|pantries)\b", re.I),
}
_ACCESS = re.compile(r"\b(?:apply|applying|application|sign(?:ing)? up|enroll|qualif\w*|eligib\w*|waitlist|"
                     r"wait list|how much\b(?:\W+\w+){0,10}?\W+will|get (?:on|into)|need(?:s|ed)? (?:for|to get)|"
                     r"deliver\w*)\b", re.I)  # a bounded gap: "how much\b.*\bwill" backtracked over the whole text
DOMINANT_MIN = 3  # mentions in the best sections for a program to be what they are about
PROGRAM_SECTIONS = 10  # what the knowledge around the question is about: more than the best three


def programs_in(text: str) -> set[str]:
    return {name for name, pattern in PROGRAMS.items() if pattern.search(text)}


def _dominant_program(texts: Iterable[str]) -> str | None:
    counts = {name: sum(len(pattern.findall(t)) for t in texts) for name, pattern in PROGRAMS.items()}
    name, count = max(counts.items(), key=lambda kv: kv[1])
    return name if count >= DOMINANT_MIN else None


def unanswerable_reason(question: str, hits: list[SearchHit]) -> str | None:
    """Why the best sections cannot answer the question (the fact it needs is not in them, or it asks about
    another program), or None."""
    texts = [h.chunk.index_text for h in hits[:SECTIONS_CHECKED]]
    for need in _NEEDS:
        if need.asks.search(question) and (need.holds is None or not any(need.holds.search(t) for t in texts)):
            return f"asks for {need.name}, which the best sections do not hold"
    if _CURRENT.search(question) and _AMOUNT.search(question):
        found = _YEAR.search(question)
        year = (f"20{found.group(2)}" if found.group(2) else found.group(3)) if found else str(date.today().year)
        # the year next to a dollar figure: "Starting in FY 2026, FNS will …" gives no amount
        if not any(re.search(rf"\${_NEAR}\b{year}\b|\b{year}\b{_NEAR}\$", t, re.S) for t in texts):
            return f"asks for a {year} figure, which the best sections do not give"
    asked = programs_in(question)
    if not asked or not _ACCESS.search(question):  # the sections' program matters only then (and costs ~1 ms)
        return None
    main = _dominant_program(h.chunk.index_text for h in hits[:PROGRAM_SECTIONS])
    # A program that a best section is about by its title or headings is this knowledge base's subject too.
    headed = programs_in(" ".join(h.chunk.heading_text for h in hits[:SECTIONS_CHECKED]))
    if main is not None and not asked & ({main} | headed):
        return f"asks about {', '.join(sorted(asked))}; the best sections are about {main}"
    return None
