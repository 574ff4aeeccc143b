"""Questions the retrieved sections cannot answer, whatever words they share with them.

A navigator also asks for things a policy text never holds: a local office's phone number or hours, the nearest
food pantry, where a case stands, this year's dollar figures, or how to sign up for another program. Such a
question shares enough words with some section ("SNAP office", "EBT card", "amount") to pass a coverage test, and
the offline answerer would quote that loosely related paragraph. Each check below asks for the kind of fact the
question needs and looks for it in the best sections: a phone number needs digits shaped like one, office hours a
clock time, this year's figure the year itself; a knowledge base that holds them (a county's contact page) still
answers. The checks name kinds of fact, not questions: an office's contact details or schedule, a state's own
figures and its own choices among the federal options, a named county's own waiver, what the card can buy or why it
was refused at the till, one client's case, another program's door, limits, payments and coverage, how another
program counts SNAP, what benefits mean for a green card.
Used by rag.answer.evidence; no language model.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from datetime import date

from rag.answer.fact_kinds import NEEDS
from rag.documents import SearchHit

SECTIONS_CHECKED = 3
# A question is read from its first and last READ_CHARS characters: a question typed mid-call is a few hundred
# (the handler takes 4,000 by default), and the fact it asks for is said at its start or its end. Every check is
# one pass, but some fifty passes over a hostile 260,000 characters took about 2 s.
READ_CHARS = 2000
# What the agency must do ("aren't they supposed to put a number to call on the notice?") is a rule, not a request.
# The agency is the subject: "client has to send paystubs today, need the fax #" is the client's errand and still
# asks for the number.
_DUTY = re.compile(r"\b(?:they|the state|state agency|the agency|the office|the county|the worker|her worker|"
                   r"his worker|the caseworker|caseworkers?|workers|the notice|the letter|dss|hhs|dhs|hra|snap)\s+"
                   r"(?:\w+\s+){0,2}?"
                   r"(?:supposed to|required to|have to|has to|must|obligated to|need to|needs to)\s+(?:\w+\s+){0,3}?"
                   r"(?:put|give|include|list|provide|have|send|tell|offer|print)\b", re.I)


# This year's dollar figures (allotments, utility allowances, income limits) are published each year apart from
# the rules; a section holds one only if it names the year asked about.
_CURRENT = re.compile(r"\b(?:this (?:year|yr)|this fiscal (?:year|yr)|right now|(?:fy|fiscal year)\s?(20)?\d\d)\b"
                      # a figure no longer printed ("its not $100 anymore"), one that changed ("did it go up")
                      r"|\b(?:isn'?t|is not|not|no longer)\s+\$\s?\d[\d,.]*k?\s+any ?more\b"
                      r"|\b(?:did|has|have)\s+(?:it|that|they)\s+(?:gone|go|went)\s+up\b"
                      # "is the min benefit still $23?", "what is that in $", "rn" (right now)
                      r"|\bstill\s+\$\s?\d|\b(?:what(?:'s| is)|whats)\s+(?:that|it|this)\s+in\s+(?:\$|dollars)"
                      # "rn" after the figure asked, in its sentence ("max snap for 4 rn??"), not a client's
                      # "not working rn. is he under the abawd 3 month limit?"
                      r"|\b(?:limits?|amounts?|allotments?|allowances?|figures?|max\w*|standards?|deductions?|sua|"
                      r"cutoffs?|thresholds?|caps?)\b[^.?!]{0,40}?\brn\b"
                      # a limit "in dollars" (the rules give a share of poverty), "how much ... in 2025"
                      r"|\b(?:limits?|cutoffs?|guidelines|max\w*|amounts?)\b[^.?!]{0,40}?\bin (?:dollars|\$)"
                      r"|\bhow much\b[^.?!]{0,60}?\bin 20\d\d\b"
                      # one household's own SNAP ("how much snap will she get", "how much snap is mr. alvarez
                      # getting"): the allotment table of the year. Not "how much will I receive" (a page may say how
                      # to estimate it, as doc2dial's do)
                      r"|\bhow much\s+(?:snap|food stamps?|ebt)\s+(?:will|would|should|is|are|can|could)\s+"
                      r"(?:she|he|they|the family|the hh|the household|my client|the client|"
                      r"this (?:hh|household|family)|(?:mr|mrs|ms|miss)\.?\s+[a-z]+)\s+"
                      r"(?:get|gets|getting|receive|receiving|be getting)\b"
                      r"|\bhow much\s+(?:will|would)\s+(?:her|his|their)\s+(?:snap|allotment|food stamps)\s+be\b"
                      # a fiscal year's range ("2024-25"), a cost-of-living adjustment (set each year)
                      r"|\b20\d\d\s?[-/]\s?(?:20)?\d\d\b|\bcola\b|"
                      r"\bcost[- ]of[- ]living (?:adjustment|increase|raise)s?\b"
                      # "the current max allotment", not "her current job"
                      r"|\b(?:current|latest)\s+(?:\w+\s+){0,2}?(?:max\w*|standards?|allotments?|limits?|amounts?|sua|"
                      r"allowances?|deductions?|figures?|numbers?|caps?|cutoffs?|thresholds?|cola)\b"
                      # "the income limit for a household of 3 in 2025"
                      r"|\b(?:limits?|amounts?|allotments?|allowances?|figures?|max\w*|standards?|deductions?|"
                      r"cutoffs?|cut-offs?|thresholds?|caps?)\b[^.?!]{0,40}?\b(?:(?:in|for|during|from)\s+(?:fy\s?|"
                      r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+)?20\d\d|currently|"
                      r"right now|these days|at this point|as of (?:now|today))\b"
                      # "the 2026 gross income limit"
                      r"|\b20\d\d\s+(?:\w+\s+){0,3}?(?:limits?|amounts?|allotments?|allowances?|standards?|"
                      r"numbers|tables?|guidelines|"
                      r"deductions?|cutoffs?|thresholds?|caps?)\b", re.I)
# "the actual number" of a table's figure ("net income limit for 5, need the actual number"), not of an estimate
# ("can you give me a real number?" of retirement benefits, which a page explains how to work out)
_ACTUAL = re.compile(r"\b(?:actual|exact|real)\s+(?:dollar\s+)?(?:numbers?|figures?|amounts?)\b", re.I)
_TABLE = re.compile(r"\b(?:limits?|allotments?|allowances?|deductions?|standards?|sua|max\w*|cutoffs?|"
                    r"thresholds?)\b", re.I)
# ("the time limit" names the ABAWD rule, not an amount: "living in her car right now, is she on the time limit?")
_AMOUNT = re.compile(r"\b(?:how much|the most\s+(?:\w+\s+){0,6}?(?:get|receive)|amount|(?<!time )limit|max(?:imum)?|"
                     r"allotment|allowance|deduction|standard|"
                     r"in dollars|sua|poverty (?:line|level|guidelines?)|fpl|"
                     r"dollar|rate|figure|cutoff|cut-off|threshold|cap|guidelines)\b|\$",
                     re.I)
# A state's own figures (its utility allowances, its income limits under broad-based categorical eligibility) are
# set by that state, not by the federal rules, which name a few states only where they set something apart.
_STATE_NAMES = (r"(alabama|alaska|arizona|arkansas|california|colorado|"
                r"connecticut|delaware|florida|georgia|hawaii|idaho|illinois|indiana|iowa|kansas|kentucky|"
                r"louisiana|maine|maryland|massachusetts|michigan|minnesota|mississippi|missouri|montana|nebraska|"
                r"nevada|new hampshire|new jersey|new mexico|new york|north carolina|north dakota|ohio|oklahoma|"
                r"oregon|pennsylvania|rhode island|south carolina|south dakota|tennessee|texas|utah|vermont|"
                r"virginia|washington|west virginia|wisconsin|wyoming|puerto rico|guam|district of columbia)")
_STATE = re.compile(rf"\b(?:in|for|from|of)\s+(?:the state of\s+)?{_STATE_NAMES}\b|\b{_STATE_NAMES}'s\b|"
                    # the state as the one that decides: "does pennsylvania do ...", "is north carolina on ..."
                    rf"\b(?:does|do|is|are|has|did|will)\s+(?:the state of\s+)?{_STATE_NAMES}\b", re.I)
# asked for ("what's the SUA in Ohio", "how much ..."), not named ("does a 401k count toward the limit in Ohio")
_FIGURE_WORDS = (r"amounts?|limits?|max\w*|allotments?|allowances?|sua|standards?|deductions?|figures?|rates?|caps?|"
                 r"cutoffs?|thresholds?")
_STATE_FIGURE = re.compile(r"\bhow (?:much|many)\b|\$|%|\bpercent\b|\b(?:what(?:'s| is| are)?|whats|need|tell me|"
                           r"give me|pls|please)\s+(?:the\s+)?"
                           rf"(?:[\w-]+\s+){{0,3}}?(?:{_FIGURE_WORDS}|guidelines|cut-offs?|numbers?)\b", re.I)
# A state's own choice among the options the federal rules give it ("does michigan give seniors 24 month certs",
# "is NC on simplified reporting", "which texas counties are abawd waived"): the rules list the options, not which
# one a state took. The state is the one that decides (the subject of the question), not where the client lives
# ("a client in ohio"), so no figure needs to be asked. Postal codes count only in capitals, and not those that
# are also words or names ("IN", "OR", "ME", "OK", "HI", "OH", "ID", "AL", "MA", "LA" as in LA county).
_STATE_CODES = {"AL": "alabama", "AK": "alaska", "AZ": "arizona", "AR": "arkansas", "CA": "california",
                "CO": "colorado", "CT": "connecticut", "DE": "delaware", "FL": "florida", "GA": "georgia",
                "HI": "hawaii", "ID": "idaho", "IL": "illinois", "IN": "indiana", "IA": "iowa", "KS": "kansas",
                "KY": "kentucky", "LA": "louisiana", "ME": "maine", "MD": "maryland", "MA": "massachusetts",
                "MI": "michigan", "MN": "minnesota", "MS": "mississippi", "MO": "missouri", "MT": "montana",
                "NE": "nebraska", "NV": "nevada", "NH": "new hampshire", "NJ": "new jersey", "NM": "new mexico",
                "NY": "new york", "NC": "north carolina", "ND": "north dakota", "OH": "ohio", "OK": "oklahoma",
                "OR": "oregon", "PA": "pennsylvania", "RI": "rhode island", "SC": "south carolina",
                "SD": "south dakota", "TN": "tennessee", "TX": "texas", "UT": "utah", "VT": "vermont",
                "VA": "virginia", "WA": "washington", "WV": "west virginia", "WI": "wisconsin", "WY": "wyoming",
                "PR": "puerto rico", "DC": "district of columbia"}
_CODES = "|".join(c for c in _STATE_CODES if c not in {"IN", "OR", "ME", "OK", "HI", "OH", "ID", "AL", "MA", "LA"})
_CODE_OF = {name: code for code, name in _STATE_CODES.items()}
_ANY_STATE = re.compile(rf"\b{_STATE_NAMES}\b", re.I)
# Only with a verb of choosing: "does texas count a 401k as a resource" asks the federal rule, which the state
# applies.
_CHOOSES = (r"(?i:do|does|doing|give|gives|use|uses|using|offer|offers|offering|put|puts|have|has|waive|waives|"
            r"let|lets|allow|allows|opt|opted|choose|chose|run|runs|pay|pays|provide|provides|certify|certifies|"
            r"follow|follows|participate|participates|make|makes|still|currently|already|even)")
_STATE_DECIDES = re.compile(
    rf"\b(?i:does|do|did|will|would|has|have)\s+(?:(?i:the state of)\s+)?(?:(?i:{_STATE_NAMES})|({_CODES}))\s+"
    rf"{_CHOOSES}\b(?!\s+to\b)"  # "does ohio have to …" asks what the rules require of it
    rf"|\b(?i:is|are)\s+(?:(?i:the state of)\s+)?(?:(?i:{_STATE_NAMES})|({_CODES}))\s+"
    rf"(?i:on|doing|using|offering|still|currently|waived|participating|one of|part of)\b"
    rf"|\b(?i:which)\s+(?i:{_STATE_NAMES})\s+(?i:count(?:y|ies)|areas?|parish(?:es)?|cities|city|regions?)\b"
    rf"|\b(?i:{_STATE_NAMES})(?:'s|s')?\s+(?i:own\s+)?(?i:polic(?:y|ies)|rules?|options?|waivers?)\b")
# A county by its name ("is franklin county covered by an abawd waiver", "fulton co"): whether it is waived is set
# area by area apart from the rules, which name no county; a county's or state's own page that names it answers.
_NOT_A_NAME = ("the|our|my|her|his|their|this|that|each|a|an|any|every|same|other|another|which|what|whose|new|home|"
               "old|one|your|its|different|entire|whole|rural|urban|neighboring|neighbouring|next|local|certain|some|"
               "many|most|all|per|by|in|of|for|from|to|with|at|on|large|small|big|no|single")
_NAMED_COUNTY = re.compile(rf"\b(?!(?:{_NOT_A_NAME})\b)([a-z][a-z'.-]{{1,20}})\s+(?:county|parish|co\b(?!-))", re.I)
_WAIVED = re.compile(r"\bwaiv(?:er|ers|ed)\b|\bexempt(?:ed)?\s+(?:area|county|counties)\b", re.I)
# Whether the navigator's own area is waived, asked ("does our county have an abawd waiver", "is her area waived"),
# not told ("her county has a waiver, does the time limit still apply?" asks the rule).
_OWN_AREA_ASKED = re.compile(r"\b(?:does|do|is|are|has|have)\s+(?:our|my|this|her|his|their)\s+(?:state|county|area|"
                             r"city|parish|region)\s+(?:\w+\s+){0,3}?(?:have|has|got|covered|waived|under|on|in|"
                             r"still)\b", re.I)
MAX_STATES_READ = 20  # state names read per section: a state's own manual names one, the federal rules a few


def _names_one_state(text: str) -> bool:
    """The text names one state or territory (a state's own): not none, not several together."""
    named = {m.group(0).lower() for m in itertools.islice(_ANY_STATE.finditer(text), MAX_STATES_READ)}
    return len(named) == 1


_OWN_STATE = re.compile(r"\b(?:our|my|this)\s+(?:state|county)\b", re.I)
# an amount asked for ("how much does our state pay", "whats the SUA in our state"), not a concept named ("can our
# state use a standard utility allowance") nor any number ("she needs a number to meet my state's requirements")
_OWN_FIGURE = re.compile(r"\bhow (?:much|many)\b|\$|\bin dollars\b|\b(?:what(?:'s| is| are)?|whats|tell me|give me)\s+"
                         rf"(?:the\s+)?(?:[\w-]+\s+){{0,3}}?(?:{_FIGURE_WORDS})\b", re.I)
_NEAR = r".{0,300}?"  # how close a year must stand to a dollar figure to be that figure's year
_YEAR = re.compile(r"\b(?:fy|fiscal year)\s?(20)?(\d\d)\b|\b(20\d\d)\b", re.I)

# Benefit programs by the names navigators use. A question that asks how to get into another program than the
# one the best sections are about is not answered from them ("how do I sign up for WIC" against the SNAP rules),
# while a question about how that program counts for this one is ("LIHEAP help ... count as income for snap").
PROGRAMS: dict[str, re.Pattern[str]] = {
    "SNAP": re.compile(r"\b(?:snap|food stamps?|food assistance|(?<!summer )ebt)\b", re.I),
    "WIC": re.compile(r"\bwic\b", re.I),
    "Medicaid": re.compile(r"\b(?:medicaid|chip)\b", re.I),
    "Medicare": re.compile(r"\bmedicare\b", re.I),
    "TANF": re.compile(r"\b(?:tanf|cash assistance)\b", re.I),
    "SSI": re.compile(r"\bssi\b|\bsupplemental security income\b", re.I),
    "SSDI": re.compile(r"\bssdi\b|\bsocial security disability\b", re.I),
    "LIHEAP": re.compile(r"\bliheap\b|\bheap\b|\b(?:energy|heating|heat|utility|fuel) (?:assistance|help|aid)\b|"
                         r"\b(?:help|helps|assistance|program)\b(?:\s+\w+){0,3}?\s+"
                         r"(?:pay|paying|with)\s+(?:her\s+|his\s+|their\s+|the\s+|a\s+|my\s+)?(?:electric|electricity|"
                         r"heating|heat|gas|utility|light|power)\s+bills?\b", re.I),
    "housing": re.compile(r"\bsection 8\b|\bhousing (?:choice )?vouchers?\b|\bpublic housing\b|\brent(?:al)? "
                          r"assistance\b|\bemergency rental\b|\bhelp (?:with|paying) (?:the |her |his |their )?rent\b|"
                          r"\bfind (?:her |him |them )?(?:a |an )?(?:new )?(?:apartment|place to live|"
                          r"housing)\b", re.I),
    "health insurance": re.compile(r"\b(?:health ?care\.gov|obamacare|aca marketplace|"
                                   r"free health (?:insurance|coverage)|"
                                   r"(?:insurance|coverage|plan) (?:through|on|from) the marketplace)\b", re.I),
    "unemployment": re.compile(r"\bunemployment\b|(?-i:\bUI\b)", re.I),
    "tax credits": re.compile(r"\b(?:eitc|ctc|earned income (?:tax )?credit|child tax credit)\b", re.I),
    "food banks": re.compile(r"\bfood (?:banks?|pantry|pantries|box|boxes)\b", re.I),
    "school meals": re.compile(r"\bschool (?:lunch(?:es)?|breakfasts?|meals?)\b|\bfree (?:or reduced(?:[- ]price)? )?"
                               r"(?:lunch|breakfast)\b", re.I),
    "Summer EBT": re.compile(r"\bsummer ebt\b|\bsun ?bucks\b", re.I),
    # a farmers market's matching dollars for SNAP purchases (GusNIP), run apart from the eligibility rules
    "nutrition incentives": re.compile(r"\bdouble up(?: food bucks)?\b|\bfood bucks\b|\bmatching dollars\b|"
                                       r"\bhealthy incentives?\b", re.I),
    # documents from other agencies: getting a birth certificate or a state ID is their process
    "ID documents": re.compile(r"\bbirth certificates?\b|\bstate id\b|\bdriver'?s licen[sc]e\b|\bdmv\b|\bdps\b",
                               re.I),
    "Lifeline": re.compile(r"\blifeline\b|\bfree (?:cell )?phones?\b|\baffordable connectivity\b", re.I),
    "child care": re.compile(r"\bchild ?care (?:subsid(?:y|ies)|assistance|vouchers?|programs?)\b|\bccap\b|"
                             r"\bhelp (?:paying )?(?:for|with) child ?care\b", re.I),
    "Head Start": re.compile(r"\bhead start\b", re.I),
    "VA": re.compile(r"\bva (?:disability|benefits|pension|health ?care)\b|"
                     r"\bveterans? (?:affairs|disability|pension)\b", re.I),
}
# The words that ask for a way into a program (read before its name by _BEFORE below).
_ACCESS = (r"\b(?:apply|applying|application|(?:take|takes|taking|long) to approve|sign(?:ed|ing|s)? up|enroll|"
           r"qualif\w*|eligib\w*|waitlist|waiting list|"
           r"wait list|how much\b(?:\W+\w+){0,10}?\W+will|get (?:on|into)|need(?:s|ed)? (?:for|to get)|"
           r"deliver\w*|file (?:for|a claim)|file\s+(?:\w+\s+){0,3}?claims?|"
           r"sign(?:ing)?\s+(?:\w+\s+){0,3}?up|"
           # the program's own limits ("the income cutoff for free school lunch", "a lifetime limit on tanf")
           r"(?:limits?|cutoffs?|cut-offs?|thresholds?|guidelines|caps?)\s+(?:on|for|of|to (?:get|qualify))|"
           r"(?:automatic\w*|auto[- ]?)\s*(?:get|gets|qualif\w*|eligib\w*|enroll\w*|on|in|into|onto)|claim(?:s|ing)?|"
           r"how (?:do|does|can|would|could) (?:\w+ ){1,2}?get|(?:can|could) (?:she|he|they|i|we|my client|"
           r"the client) get|help (?:her|him|them|me|my client) get)\b")
# (a bounded gap above: "how much\b.*\bwill" backtracked over the whole text)
_AT_THE_OFFICE = re.compile(r"\b(?:the|her|his|their|a)\s+(?:snap|food stamps?|ebt)\s+"
                            r"(?:office|offices|worker|caseworker)\b", re.I)
DOMINANT_MIN = 3  # mentions in the best sections for a program to be what they are about
PROGRAM_SECTIONS = 10  # what the knowledge around the question is about: more than the best three


def programs_in(text: str) -> set[str]:
    return {name for name, pattern in PROGRAMS.items() if pattern.search(text)}


# The way into a program is asked only of the program the access words point at: "does she qualify for medicaid",
# "her wic application", "the income cutoff for free school lunch"; not of one the question names as the client's
# situation ("mom gets TANF, is the household categorically eligible?" asks about SNAP). Read in a window on each
# side of each mention, so a long question costs one pass per program.
_BEFORE = re.compile(rf"(?:{_ACCESS}|\b(?:wants?|needs?|looking (?:for|into)|interested in|"
                     # the program's own decision contested ("how does she appeal the TANF decision")
                     rf"appeal|appealing|fight|contest|dispute|"
                     rf"how much(?: (?:is|are|does|will|would))?))(?:\W+[\w'$]+){{0,4}}?\W+$", re.I)
_AFTER = re.compile(r"(?:\W+[\w']+){0,2}?\W+(?:application|app|eligibility|waitlist|wait list|waiting list|claims?|"
                    r"deliver\w*)\b|"
                    r"\s+income (?:limits?|cutoffs?|guidelines)\b|"
                    # the way in, asked in the same sentence ("lifeline bc she's on snap? how does she sign up" asks
                    # into Lifeline, not SNAP)
                    r"(?:[^\w?.!]+[\w']+){0,5}?[^\w?.!]+(?:(?:how|where|when) (?:do|does|can|should) (?:\w+ ){1,2}?|"
                    r"how to )(?:apply|enroll|sign up)\b|"
                    # the program's own demands and amounts ("does tanf make her do", "how much eitc can she get")
                    r"\s+(?:make|makes|require|requires)\s+(?:her|him|them|you|people|parents)\b|"
                    r"\s+(?:can|could|will|would)\s+(?:she|he|they|i|we)\s+get\b|"
                    # how it works ("how do the double up food bucks work")
                    r"\s+works?\s*(?:\?|$|at\b|for\b)|"
                    # its own payments, decisions and sanctions: when they come, how long they last ("the summer ebt
                    # money will come", "his ssdi back pay going to hit", "how long does the tanf sanction last")
                    r"\s+(?:money|payments?|checks?|back ?pay|decisions?|sanctions?|deposits?)\b(?:\s+[\w']+){0,6}?\s+"
                    r"(?:come|comes|arrive|arrives|hit|hits|land|lands|be deposited|last|lasts|end|ends|go out|"
                    r"goes out|get sent|gets sent|be sent|sent out|show up|shows up|post|posts|be paid|be issued)\b|"
                    # getting it without applying ("can her kids get free school lunch automatically"), said at the end
                    # of its clause: in "does being on snap automatically get her kids onto medicaid" it is Medicaid
                    r"\s+automatic(?:ally)?\b(?=\s*(?:[?.!,;]|$|too\b|as well\b|if\b|when\b|because\b|bc\b|"
                    r"since\b))", re.I)
# What it covers, asked of it ("does medicaid in her state cover dentures"); not a rule about what it leaves
# unpaid ("medical costs that medicaid doesn't pay for" count for SNAP's medical deduction).
_ASKED_OF = re.compile(r"\b(?:does|do|will|would|can|could)\s+(?:(?:the|her|his|their|our|my|state)\s+)?$", re.I)
_COVERS = re.compile(r"(?:\s+[\w']+){0,3}?\s+(?:cover|covers|pay for|pays for)\b", re.I)
# Its decision contested in another sentence ("her medicaid got cut off. how does she appeal that decision"); a
# decision alone is a change the SNAP rules may act on ("his wife's tanf just got closed, does that end their snap?").
_DECIDED = re.compile(r"\s+(?:got\s+|was\s+|has been\s+|just\s+)?(?:cut off|cut|denied|terminated|stopped|closed|"
                      r"reduced)\b", re.I)
_CONTESTED = re.compile(r"\b(?:appeal|fight|contest|dispute)\b", re.I)
# The client's own claim pending ("waiting on his unemployment claim, does he still have to do the snap work
# rules?") is the situation, not a way into the program asked about.
_WAITING_ON = re.compile(r"\bwaiting\s+(?:on|for)\s+(?:his|her|their|the)\s+$", re.I)
WINDOW = 80  # characters either side of a program's name
MENTIONS_READ = 5  # a question names a program a few times; a hostile one thousands


# How a program counts ("how much does her tanf count as income") is a question for the program counting it.
_COUNTS = re.compile(r"\bcount(?:s|ed|ing)?\b", re.I)


def programs_asked_into(question: str) -> set[str]:
    """The programs whose way in (applying, qualifying, their own limits) the question asks about."""
    if _COUNTS.search(question):
        return set()
    asked = set()
    for name, pattern in PROGRAMS.items():
        for mention in itertools.islice(pattern.finditer(question), MENTIONS_READ):
            before = question[max(0, mention.start() - WINDOW):mention.start()]
            if _WAITING_ON.search(before):
                continue
            end = mention.end() + WINDOW
            if (_BEFORE.search(before) or _AFTER.match(question, mention.end(), end)
                    or (_ASKED_OF.search(before) and _COVERS.match(question, mention.end(), end))
                    or (_DECIDED.match(question, mention.end(), end) and _CONTESTED.search(question))):
                asked.add(name)
                break
    return asked


def dominant_program(texts: Iterable[str]) -> str | None:
    """The program the texts are about: the one named at least DOMINANT_MIN times and most, or None."""
    counts = {name: sum(len(pattern.findall(t)) for t in texts) for name, pattern in PROGRAMS.items()}
    name, count = max(counts.items(), key=lambda kv: kv[1])
    return name if count >= DOMINANT_MIN else None


def sections_program(hits: list[SearchHit]) -> str | None:
    """The program the best PROGRAM_SECTIONS hits are about (~1 ms: every program's pattern over their texts)."""
    return dominant_program(h.chunk.index_text for h in hits[:PROGRAM_SECTIONS])


def unanswerable_reason(question: str, hits: list[SearchHit],
                        program: Callable[[], str | None] | None = None) -> str | None:
    """Why the best sections cannot answer the question (the fact it needs is not in them, or it asks about
    another program), or None. `program`: what sections_program(hits) gives, when the caller already has it."""
    if len(question) > 2 * READ_CHARS:
        question = f"{question[:READ_CHARS]} … {question[-READ_CHARS:]}"
    texts = [h.chunk.index_text for h in hits[:SECTIONS_CHECKED]]
    duty = _DUTY.search(question)
    for need in NEEDS:
        if (need.duty_is_a_rule and duty) or (need.rule_when is not None and need.rule_when.search(question)):
            continue
        if need.asks.search(question) and (need.holds is None or not any(need.holds.search(t) for t in texts)):
            return f"asks for {need.name}, which the best sections do not hold"
    if (_CURRENT.search(question) or (_ACTUAL.search(question) and _TABLE.search(question))) and _AMOUNT.search(
            question):
        found = _YEAR.search(question)
        year = (f"20{found.group(2)}" if found.group(2) else found.group(3)) if found else str(date.today().year)
        # the year next to a dollar figure: "Starting in FY 2026, FNS will …" gives no amount
        if not any(re.search(rf"\${_NEAR}\b{year}\b|\b{year}\b{_NEAR}\$", t, re.S) for t in texts):
            return f"asks for a {year} figure, which the best sections do not give"
    state = _STATE.search(question)
    if state and _STATE_FIGURE.search(question):
        named = next(group for group in state.groups() if group)
        name = re.compile(rf"\b{re.escape(named)}\b", re.I)
        if not any(name.search(t) for t in texts):
            return f"asks for {named.title()}'s own figure, which the best sections do not give"
    # "our state", "my county" with an amount asked: the navigator's own state's figure, which sections that name no
    # state (federal rules) or several together (the federal rules' own figures "for Alaska, Hawaii, Guam") cannot
    # give; a state's own manual names its state and still answers
    if _OWN_STATE.search(question) and _OWN_FIGURE.search(question) and not any(map(_names_one_state, texts)):
        return "asks for the navigator's own state's figure, which the best sections do not give"
    waived = _WAIVED.search(question)
    if waived and _OWN_AREA_ASKED.search(question) and not any(
            _NAMED_COUNTY.search(t) or _names_one_state(t) for t in texts):
        return "asks about the navigator's own area's waiver, which the best sections do not name"
    county = _NAMED_COUNTY.search(question) if waived else None
    if county:
        county_name = county.group(1)
        named_there = re.compile(rf"\b{re.escape(county_name)}\s+(?:county|parish)\b", re.I)
        if not any(named_there.search(t) for t in texts):
            return f"asks about {county_name.title()} County's own waiver, which the best sections do not name"
    decides = _STATE_DECIDES.search(question)
    if decides:
        said = next(group for group in decides.groups() if group)
        named = _STATE_CODES.get(said, said.lower())
        code = _CODE_OF.get(named, "")
        # the state named in a section, in full or by its postal code in capitals
        name = re.compile(rf"\b(?i:{re.escape(named)})\b" + (rf"|\b{code}\b" if code else ""))
        if not any(name.search(t) for t in texts):
            return f"asks what {named.title()} chose, which the best sections do not say"
    # "the snap office" names where, not which program: "sign up for medicare at the snap office"
    asked = programs_asked_into(_AT_THE_OFFICE.sub(" ", question))
    if not asked:  # the sections' program matters only then (and costs ~1 ms)
        return None
    main = program() if program is not None else sections_program(hits)
    # A program that a best section is about by its title or headings is this knowledge base's subject too.
    headed = programs_in(" ".join(h.chunk.heading_text for h in hits[:SECTIONS_CHECKED]))
    if main is not None and not asked & ({main} | headed):
        return f"asks about {', '.join(sorted(asked))}; the best sections are about {main}"
    # Sections about no program in particular may still answer when they name the one asked about (a page on
    # Medicare's Part D help); when none of them does, they cannot say how to get into it.
    if main is None and not asked & (headed | programs_in(" ".join(texts))):
        return f"asks about {', '.join(sorted(asked))}, which the best sections do not name"
    return None
