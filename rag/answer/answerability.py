"""Questions the retrieved sections cannot answer, whatever words they share with them.

A navigator also asks for things a policy text never holds: a local office's phone number or hours, the nearest
food pantry, where a case stands, this year's dollar figures, or how to sign up for another program. Such a
question shares enough words with some section ("SNAP office", "EBT card", "amount") to pass a coverage test, and
the offline answerer would quote that loosely related paragraph. Each check below asks for the kind of fact the
question needs and looks for it in the best sections: a phone number needs digits shaped like one, office hours a
clock time, this year's figure the year itself; a knowledge base that holds them (a county's contact page) still
answers. The checks name kinds of fact, not questions: an office's contact details or schedule, a state's own
figures, what the card can buy or why it was refused at the till, one client's case, another program's door.
Used by rag.answer.evidence; no language model.
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
    Need("contact details",
         re.compile(r"\b(?:phone|telephone|call center|hotline|fax|contact)\s*(?:number|#|no\b|info\b|information|"
                    r"details)|\bnumber (?:to|for) call\b|"
                    # asked for ("is there a hotline she can call"), not told of ("she called the hotline and …")
                    r"\b(?:customer service|toll[- ]free)\s+(?:number|line|#|phone)|"
                    r"\bwho (?:is|'s) the (?:supervisor|manager|director|head|administrator) (?:at|of|for|in)\b|"
                    r"\b(?:is there|are there|what(?:'s| is)?|whats|give me|need)\s+(?:\w+\s+){0,3}"
                    r"(?:hotline|helpline|help line|call center)\b|"
                    r"\bwho (?:do|should|can|would) (?:i|we|she|he|they) (?:call|contact|email|e-mail|"
                    r"talk to|ask) (?:at|in) "
                    r"(?:the |our |her |his )?(?:county|office|dss|hhs|dhs|hra|agency|state)\b|"
                    r"\bdirect (?:line|number)\b|"
                    # "the number for the food stamp office", "the email for the caseworkers", "mailing address"
                    r"\b(?:number|e-?mail(?: address)?|address)\s+(?:for|of|to)\s+(?:the\s+|her\s+|his\s+|their\s+|"
                    r"our\s+|my\s+)?(?:[\w-]+\s+){0,3}?(?:office|caseworkers?|workers?|agency|department|dss|hhs|"
                    r"dhs|hra|unit)\b|\b(?:what(?:'s| is)|whats|need|give me)\s+(?:\w+\s+){0,3}?mailing address\b|"
                    r"\b(?:address|where)\s+(?:\w+\s+){0,3}?(?:mail|send|fax|"
                    r"drop off|turn in)\b(?:\s+\w+){0,6}?\s+(?:in|to|at)\s+(?:the\s+)?(?:[\w-]+\s+){1,2}?"
                    r"(?:county|parish|borough|district)\b", re.I),
         re.compile(r"\(?\b\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}\b|\b1-8\d\d\b|\b[\w.+-]+@[\w-]+\.[\w.]+\b|"
                    r"\b\d{1,5} [A-Z][a-z]+ (?:St|Street|Ave|Avenue|Road|Rd|Blvd|Drive|Dr)\b")),
    Need("opening hours",
         re.compile(r"\b(?:office hours|opening hours|hours of operation|walk[- ]?ins|"
                    r"walk[- ]in (?:hours|days|times)|what time\b.*\b(?:open|close)|"
                    r"(?:open|close)s? (?:on )?(?:saturdays?|sundays?|weekends?|today|tomorrow))\b|"
                    # an office, lobby or agency open or closing ("is the county office open on memorial day",
                    # "when does the hhs lobby open", "is the snap office closing in december"): its own
                    # schedule, never in the rules. A case or a certification period that closes is not one.
                    r"\b(?:offices?|lobby|lobbies|building|dss|hhs|dhs|hra|agency)\s+(?:\w+\s+){0,4}?"
                    r"(?:open|opens|opened|close|closed|closes|closing|shut|shutting|moved|"
                    r"relocated)\b(?!\s+(?:a|an|the|her|his|their)\s+"
                    r"(?:case|application|file)\b)|"
                    r"\bwhen (?:does|do|is|will) (?:the )?(?:[\w-]+ ){0,3}?(?:office|lobby|dss|hhs|dhs|hra|agency) "
                    r"(?:open|close|reopen)", re.I),
         re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)", re.I)),
    Need("a place nearby",
         re.compile(r"\b(?:closest|nearest)\s+(?:\w+\s+){0,2}(?:office|pantry|pantries|food bank|location|center|"
                    r"store|clinic|place)|\b(?:list|map) of (?:[\w-]+\s+){0,2}?(?:offices|locations|pantries|"
                    r"food banks|"
                    r"centers)\b|\b(?:offices|locations)\s+(?:in|near|around)\s+(?:[\w-]+\s+){1,2}?"
                    r"(?:county|parish|city|town)\b|\bis there (?:a|an|any) (?:[\w-]+\s+){0,2}?(?:office|"
                    r"pantry|food bank|"
                    r"location|center|clinic)s? (?:in|near|close to|by|around)\b|\bnear me\b|\bnear \d{5}\b|"
                    r"\bdirections to\b|\baddress of\b", re.I),
         re.compile(r"\b\d{1,5} [A-Z][a-z]+ (?:St|Street|Ave|Avenue|Road|Rd|Blvd|Drive|Dr)\b|\b\d{5}(?:-\d{4})?\b")),
    # An EBT card's logistics (a lost or stolen card, its PIN, its balance, the day benefits are loaded on it) are
    # run under the issuance rules and the state's card vendor, not the eligibility rules, which mention the card
    # without saying any of this; only a question in an EBT/SNAP context, so that a lost Social Security card is not
    # read as one. A knowledge base with the state's card page (replacing a card, the issuance schedule) answers.
    Need("EBT card logistics",
         re.compile(r"^(?=.*\b(?:ebt|snap|food stamps?|benefits? card)\b|"
                    r".*\bbenefits\b(?:\s+\S+){0,6}?\s+(?:on|onto|to)\s+(?:the|her|his|their)\s+card\b)(?=.*(?:"
                    r"\b(?:lost|stolen|stole|damaged|broken|skimmed|hacked|replace\w*|new|another)\s+"
                    r"(?:(?:her|his|my|their|the|a|an)\s+)?(?:ebt\s+|snap\s+|benefits?\s+|food stamps?\s+)?card\b"
                    r"|\bcards?\s+(?:was\s+|got\s+|is\s+|has been\s+)?(?:lost|stolen|damaged|skimmed|hacked|drained|"
                    r"declined|blocked|locked|frozen|cut|bent|broken|cracked|eaten|demagnetized)\b"
                    r"|\bpin(?:\s+number)?\b|\bswip\w*\b|\bchip\s+(?:that\s+)?(?:won'?t|wont|doesn'?t|isn'?t|"
                    r"is not|not)\s+(?:read|work)\w*|\bmagnetic stripe?\b|\b(?:re)?loaded\b"
                    r"|\b(?:get|send|mail)\w*\s+(?:her\s+|him\s+|them\s+)?(?:a\s+)?new one\b"
                    r"|\buse\s+(?:her|his|their|my|the)?\s*(?:ebt|snap)(?:\s+card)?\s+(?:in|"
                    r"out of)\s+(?:another|a different|"
                    r"other)\s+states?\b"
                    r"|\b(?:system|machines?|network|website|site|portal)s?\s+(?:is\s+|are\s+)?(?:down|offline|out)\b"
                    r"|\b(?:snap|benefits|ebt|food stamps)\s+(?:didn'?t|did not|hasn'?t|has not|never|won'?t)\s+"
                    r"(?:load|come|post|show up|hit|go through|get deposited)\b"
                    r"|\b(?:case|card) number ends? (?:in|with)\b"
                    # a card refused at the till, the balance on it, ordering online with it
                    r"|\bcards?\s+(?:\w+\s+){0,2}?(?:isn'?t|is not|not|won'?t|doesn'?t|didn'?t|wasn'?t|keeps?|got|"
                    r"getting|was|is)\s+(?:getting\s+)?(?:working|work|accepted|taken|swiping|declined|rejected)\b"
                    r"|\b(?:current|remaining)\s+(?:\w+\s+)?balance\b"
                    r"|\b(?:what(?:'s| is)|whats|how much is)\s+(?:\w+\s+){0,3}?balance\b"
                    r"|\b(?:order|shop|buy)\w*\s+(?:[\w'-]+\s+){0,3}?online\b|\bonline\s+(?:grocer\w*|"
                    r"shopping|orders?)\b"
                    r"|\b(?:check|see|find out)\s+(?:\w+\s+){0,2}balance\b|\bbalance on\b|\bcash ?back\b"
                    r"|\b(?:be|show up|appear)\s+on\s+(?:her|his|their|the|my)\s+(?:ebt\s+|snap\s+)?card\b"
                    r"|\bhow much\b(?:\s+\w+){0,3}?\s+(?:left|remaining)\s+on\b"
                    r"|\bdeposits?\b(?:\s+\w+){0,3}?\s+(?:hit|hits|post|posts|land|lands|show up)\b"
                    r"|\buse\s+(?:her|his|their|my|the)?\s*(?:ebt|snap|food stamps?)(?:\s+card|\s+benefits)?\s+at\b"
                    r"|\b(?:what|which)\s+(?:day|date)\b(?:\s+\w+){0,8}?\s+(?:loaded|deposited|deposit|load|added|"
                    r"hits?|come in|comes in|come|comes|arrive|arrives|go on|goes on|put on)\b"
                    r"|\bwhen\s+(?:do|does|will|is)\b(?:\s+\w+){0,6}?\s+(?:get\s+|be\s+)?(?:loaded|deposited|"
                    r"put on|added to|go on|goes on|come on|land on)\b))"
                    # skimming, cloning and draining happen to benefit cards, whatever the question calls them
                    r"|\bcards?\s+(?:was\s+|got\s+|is\s+|has been\s+)?(?:skimmed|cloned|drained)\b"
                    r"|\bused\s+(?:her|his|their|my|the)\s+(?:ebt\s+|snap\s+)?card\s+without\b", re.I | re.S),
         re.compile(r"\breplace(?:ment)?\s+(?:\w+\s+){0,4}(?:ebt\s+)?cards?\b|\bcards?\s+(?:\w+\s+){0,4}replaced\b|"
                    r"\bissuance (?:schedule|calendar)\b|\b(?:benefits|snap)\s+(?:are|is)\s+(?:deposited|loaded)\b|"
                    r"\bbalance inquir|\bcheck (?:your|the|a|their) (?:\w+ )?balance\b|"
                    r"\b(?:change|reset|choose|select) (?:your|a|the|their) PIN\b", re.I)),
    # What the benefits can buy is defined apart from the eligibility rules (7 CFR 271.2 "eligible foods"); only
    # for an item other than food itself ("use her ebt card to buy food for her" asks who may shop).
    Need("what the benefits can buy",
         re.compile(r"\b(?:buy|purchase|pay for)\s+(?!(?:food|groceries|"
                    r"meals?)\b)(?:[\w'-]+\s+){0,4}?(?:with|using|on)\s+"
                    r"(?:her\s+|his\s+|their\s+|my\s+|the\s+)?(?:snap|ebt|food stamps?)\b|"
                    r"\b(?:snap|ebt|food stamps?)(?:\s+cards?|\s+benefits)?\s+(?:be\s+)?(?:used|use|spent|spend)\s+"
                    r"(?:to buy|to purchase|to pay for|for|on)\s+(?!(?:food|groceries|meals?)\b)\w|"
                    r"\b(?:use|spend)\s+(?:her\s+|his\s+|their\s+|my\s+|the\s+)?(?:snap|ebt|food stamps?)"
                    r"(?:\s+cards?|\s+benefits)?\s+(?:to buy|to purchase|to pay for|on)\s+"
                    r"(?!(?:food|groceries|meals?)\b)\w|"
                    r"\b(?:covered|allowed|eligible|approved)\s+(?:by|with|under|on|for)\s+(?:snap|ebt|food stamps?)\b|"
                    r"\b(?:snap|ebt|food stamps?)\s+(?:cover|covers|pay for|pays for)\s+(?!(?:food|"
                    r"groceries|meals?)\b)\w",
                    re.I),
         re.compile(r"\beligible foods?\b|\b(?:eligible|ineligible|allowable)\s+items?\b|"
                    r"\bcan(?:not|'t)?\s+(?:be\s+)?(?:buy|bought|purchase|purchased)\b", re.I)),
    # How many people a county serves is a report's figure, not a rule.
    Need("statistics",
         re.compile(r"\bhow many (?:people|households|families|clients|folks|residents|kids|children)\b"
                    r"(?:\s+\w+){0,6}?\s+(?:are on|get|gets|receive|use|participate|are enrolled|are getting)\b", re.I),
         re.compile(r"\b\d{1,3}(?:,\d{3})+\s+(?:people|households|participants|persons|residents)\b", re.I)),
    # A password, a login or a locked account belongs to a state's website, not to the rules.
    Need("an online account's logistics",
         # trouble with one ("reset her password", "locked out", "cant log in"), not a page's steps that name one
         re.compile(r"\b(?:reset|forgot|forgotten|recover|lost|can'?t remember)\w*\s+(?:\w+\s+){0,3}?(?:password|"
                    r"username|user name|login)\b|\blocked out\b|\baccount (?:is |got |was )?locked\b|"
                    r"\b(?:can'?t|cannot|unable to|won'?t let (?:her|him|them|me))\s+(?:log|sign) ?in(?:to)?\b|"
                    r"\b(?:can'?t|cannot|unable to|how (?:do|does|can) (?:i|she|he|they))\s+upload\b|"
                    r"\bupload\w*\b(?:\s+\w+){0,4}?\s+(?:to|on|into|through|in)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:app|portal|"
                    r"website|site)\b", re.I),
         # a page on the website itself ("reset your password", "log in to"), not the rules' electronic signatures
         re.compile(r"\b(?:reset|forgot|forgotten|change|recover)\w*\s+(?:\w+\s+){0,3}?(?:password|username)\b|"
                    r"\b(?:password|username)\s+(?:\w+\s+){0,3}?(?:reset|recovery)\b|\blocked out\b|"
                    r"\blog(?:ging)? ?in(?:to| to)\b", re.I)),
    Need("a case lookup",
         # asked of the bot ("can you look up …"), not "how do I check on my case?", which a page may answer
         re.compile(r"\b(?:can|could|would|will|pls|please)\s+(?:you|u)\s+(?:please\s+)?(?:look ?up|check|find|"
                    r"see|pull up|find out)\b(?:\s+\w+){0,3}?\s+(?:my|her|his|their|this|the)\s+(?:clients?'?s?|case|"
                    r"application|app|status|benefits)\b|\blook ?up (?:her|his|my|their|the|this)?\s*(?:client'?s?\s+)?"
                    r"case\b|\bpull up (?:her|his|their|the|my clients?'?s?)\s+(?:case|file|application|account)\b|"
                    r"\b(?:see|find out|check)\s+why\s+(?:her|his|their|she|he|they)\b|"
                    r"\bcase\s*(?:#|no\.?|number|num)?\s*:?\s*#?\d{5,}\b|\bcase\s*(?:#|no\.?|number)\s*\d|"
                    # where one client's case stands: "did her application go through?", "can u see if my clients
                    # recert was processed", "tell me when her interview is scheduled"
                    r"^\W*(?:\w+\W+){0,3}?(?:did|has|have|is|was)\s+(?:her|his|their|(?:my|the|this) clients?'?s?)\s+"
                    r"(?:[\w-]+\s+){0,2}?(?:application|app|recert\w*|renewal|case|paperwork|documents?|"
                    r"verifications?|interview)\s+(?:been\s+|get\s+|gotten\s+)?(?:go through|gone through|went through|"
                    r"processed|approved|done|finished|submitted|scheduled|received|still (?:on|open|active|"
                    r"scheduled|pending))\b|"
                    r"\b(?:see|check|find out|tell me|let me know)\s+(?:if|whether|when|where)\s+(?:her|his|their|"
                    r"(?:my|the|this) clients?'?s?)\s+(?:[\w-]+\s+){0,2}?(?:application|app|recert\w*|renewal|case|"
                    r"paperwork|documents?|interview|appointment|hearing|card|ebt|deposit)\b|"
                    # "did the state get her docs yet?"
                    r"^\W*(?:\w+\W+){0,3}?(?:did|has|have)\s+(?:the\s+)?(?:state|county|office|agency|dss|hhs|dhs|they|"
                    r"worker|caseworker)\s+(?:get|got|gotten|receive|received|process|processed|approve|approved|see|"
                    r"seen)\s+(?:her|his|their|my clients?'?s?)\s+(?:[\w-]+\s+){0,2}?(?:application|app|"
                    r"recert\w*|renewal|"
                    r"paperwork|documents?|docs|verifications?|forms?|paystubs?)\b|"
                    r"\b(?:see|check|find out)\s+(?:if|whether)\s+(?:she|he|they)(?:'s|'ve| has| have| was| were)?\s+"
                    r"(?:been\s+)?(?:sent|mailed|approved|denied|scheduled|assigned|certified)\b|"
                    r"\b(?:which|what) (?:case ?)?worker (?:is|was) (?:assigned|handling)\b|"
                    r"\bwho (?:is|'s) (?:her|his|their|my clients?'?s?) (?:case ?)?worker\b|"
                    # a request to act for the client, which a bot that only reads policy cannot do
                    r"\b(?:can|could|would|will|pls|please)\s+(?:you|u)\s+(?:please\s+|pls\s+)?(?:send|mail|e-?mail|"
                    r"fax|text|call|submit|schedule|reschedule|approve|process|update|enroll|sign up|cancel|reopen|"
                    r"transfer)\s+(?:her|him|them|(?:my|the|this) clients?)\b|"
                    r"\b(?:please|pls|can you|could you|can u|could u)\s+(?:submit|send in|file|fax|mail in|turn in)\s+"
                    r"(?:a|an|the|her|his|their)\s+(?:[\w-]+\s+){0,2}?(?:report|form|application|app|packet|"
                    r"documents?|paperwork)\b", re.I),
         None),
)
# This year's dollar figures (allotments, utility allowances, income limits) are published each year apart from
# the rules; a section holds one only if it names the year asked about.
_CURRENT = re.compile(r"\b(?:this year|this fiscal year|right now|(?:fy|fiscal year)\s?(20)?\d\d)\b"
                      # "the current max allotment", not "her current job"
                      r"|\b(?:current|latest)\s+(?:\w+\s+){0,2}?(?:max\w*|standards?|allotments?|limits?|amounts?|sua|"
                      r"allowances?|deductions?|figures?|caps?|cutoffs?|thresholds?|cola)\b"
                      # "the income limit for a household of 3 in 2025"
                      r"|\b(?:limits?|amounts?|allotments?|allowances?|figures?|max\w*|standards?|deductions?|"
                      r"cutoffs?|cut-offs?|thresholds?|caps?)\b[^.?!]{0,40}?\b(?:(?:in|"
                      r"for)\s+(?:fy\s?)?20\d\d|currently|"
                      r"right now|these days)\b"
                      # "the 2026 gross income limit"
                      r"|\b20\d\d\s+(?:\w+\s+){0,3}?(?:limits?|amounts?|allotments?|allowances?|standards?|"
                      r"numbers|tables?|guidelines|"
                      r"deductions?|cutoffs?|thresholds?|caps?)\b", re.I)
_AMOUNT = re.compile(r"\b(?:how much|amount|limit|max(?:imum)?|allotment|allowance|deduction|standard|in dollars|"
                     r"dollar|rate|figure|cutoff|cut-off|threshold|cap|guidelines)\b|\$",
                     re.I)
# A state's own figures (its utility allowances, its income limits under broad-based categorical eligibility) are
# set by that state, not by the federal rules, which name a few states only where they set something apart.
_STATE = re.compile(r"\b(?:in|for|from|of)\s+(?:the state of\s+)?(alabama|alaska|arizona|arkansas|california|colorado|"
                    r"connecticut|delaware|florida|georgia|hawaii|idaho|illinois|indiana|iowa|kansas|kentucky|"
                    r"louisiana|maine|maryland|massachusetts|michigan|minnesota|mississippi|missouri|montana|nebraska|"
                    r"nevada|new hampshire|new jersey|new mexico|new york|north carolina|north dakota|ohio|oklahoma|"
                    r"oregon|pennsylvania|rhode island|south carolina|south dakota|tennessee|texas|utah|vermont|"
                    r"virginia|washington|west virginia|wisconsin|wyoming|puerto rico|guam|district of columbia)\b",
                    re.I)
# asked for ("what's the SUA in Ohio", "how much ..."), not named ("does a 401k count toward the limit in Ohio")
_STATE_FIGURE = re.compile(r"\bhow much\b|\$|\b(?:what(?:'s| is| are)?|whats|need)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?"
                           r"(?:amounts?|limits?|max\w*|allotments?|allowances?|sua|standards?|deductions?|figures?|"
                           r"rates?|caps?|guidelines)\b", re.I)
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
    "LIHEAP": re.compile(r"\bliheap\b|\benergy assistance\b|\b(?:help|helps|assistance|program)\b(?:\s+\w+){0,3}?\s+"
                         r"(?:pay|paying|with)\s+(?:her\s+|his\s+|their\s+|the\s+|a\s+|my\s+)?(?:electric|electricity|"
                         r"heating|heat|gas|utility|light|power)\s+bills?\b", re.I),
    "housing": re.compile(r"\bsection 8\b|\bhousing (?:choice )?vouchers?\b|\bpublic housing\b|\brent(?:al)? "
                          r"assistance\b|\bemergency rental\b|\bhelp (?:with|paying) (?:the |her |his |their )?rent\b|"
                          r"\bfind (?:her |him |them )?(?:a |an )?(?:new )?(?:apartment|place to live|"
                          r"housing)\b", re.I),
    "health insurance": re.compile(r"\b(?:health ?care\.gov|obamacare|aca marketplace|"
                                   r"free health (?:insurance|coverage)|"
                                   r"(?:insurance|coverage|plan) (?:through|on|from) the marketplace)\b", re.I),
    "unemployment": re.compile(r"\bunemployment\b", re.I),
    "tax credits": re.compile(r"\b(?:eitc|ctc|earned income (?:tax )?credit|child tax credit)\b", re.I),
    "food banks": re.compile(r"\bfood (?:banks?|pantry|pantries|box|boxes)\b", re.I),
    "school meals": re.compile(r"\bschool (?:lunch(?:es)?|breakfasts?|meals?)\b|\bfree (?:or reduced(?:[- ]price)? )?"
                               r"(?:lunch|breakfast)\b", re.I),
    "Summer EBT": re.compile(r"\bsummer ebt\b|\bsun ?bucks\b", re.I),
    "Lifeline": re.compile(r"\blifeline\b|\bfree (?:cell )?phones?\b|\baffordable connectivity\b", re.I),
    "child care": re.compile(r"\bchild ?care (?:subsid(?:y|ies)|assistance|vouchers?|programs?)\b|\bccap\b|"
                             r"\bhelp (?:paying )?(?:for|with) child ?care\b", re.I),
    "Head Start": re.compile(r"\bhead start\b", re.I),
    "VA": re.compile(r"\bva (?:disability|benefits|pension|health ?care)\b|"
                     r"\bveterans? (?:affairs|disability|pension)\b", re.I),
}
_ACCESS = re.compile(r"\b(?:apply|applying|application|sign(?:ing)? up|enroll|qualif\w*|eligib\w*|waitlist|"
                     r"wait list|how much\b(?:\W+\w+){0,10}?\W+will|get (?:on|into)|need(?:s|ed)? (?:for|to get)|"
                     r"deliver\w*|file (?:for|a claim)|sign(?:ing)?\s+(?:\w+\s+){0,3}?up|"
                     r"how (?:do|does|can|would|could) (?:\w+ ){1,2}?get|(?:can|could) (?:she|he|they|i|we|my client|"
                     r"the client) get|help (?:her|him|them|me|my client) get)\b", re.I)
# (a bounded gap above: "how much\b.*\bwill" backtracked over the whole text)
_AT_THE_OFFICE = re.compile(r"\b(?:the|her|his|their|a)\s+(?:snap|food stamps?|ebt)\s+"
                            r"(?:office|offices|worker|caseworker)\b", re.I)
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
    state = _STATE.search(question)
    if state and _STATE_FIGURE.search(question):
        name = re.compile(rf"\b{re.escape(state.group(1))}\b", re.I)
        if not any(name.search(t) for t in texts):
            return f"asks for {state.group(1).title()}'s own figure, which the best sections do not give"
    # "the snap office" names where, not which program: "sign up for medicare at the snap office"
    asked = programs_in(_AT_THE_OFFICE.sub(" ", question))
    if not asked or not _ACCESS.search(question):  # the sections' program matters only then (and costs ~1 ms)
        return None
    main = _dominant_program(h.chunk.index_text for h in hits[:PROGRAM_SECTIONS])
    # A program that a best section is about by its title or headings is this knowledge base's subject too.
    headed = programs_in(" ".join(h.chunk.heading_text for h in hits[:SECTIONS_CHECKED]))
    if main is not None and not asked & ({main} | headed):
        return f"asks about {', '.join(sorted(asked))}; the best sections are about {main}"
    # Sections about no program in particular may still answer when they name the one asked about (a page on
    # Medicare's Part D help); when none of them does, they cannot say how to get into it.
    if main is None and not asked & (headed | programs_in(" ".join(texts))):
        return f"asks about {', '.join(sorted(asked))}, which the best sections do not name"
    return None
