"""The kinds of fact a navigator asks for that a policy text rarely holds, each with the shape it would take in a
section that does hold it (rag/answer/answerability.py asks them in turn).

Each kind is a pair of patterns: how a question asks for it ("whats the number for the food stamp office", "did
her recert go through") and what a section holding it contains (digits shaped like a phone number, a clock time,
"reset your password"); None when no document can hold it (one client's case). The patterns are written from
examples (benchmarks/probes/README.md tells which) and bounded against backtracking: every repetition has a limit,
so a hostile question costs one pass (tests/rag/answer/test_answerability.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Need:
    """A kind of fact the question asks for, and what a section that holds it contains."""

    name: str
    asks: re.Pattern[str]
    holds: re.Pattern[str] | None  # None: no document can hold it (a live case lookup)
    # What the agency must give or have ("aren't they supposed to put a number to call on the notice?") is a rule
    # the text may hold, not a request for the fact itself.
    duty_is_a_rule: bool = False
    # A question this matches asks a rule the text holds, though it reads like the kind ("by when should the
    # emergency snap be on her card" asks expedited service's deadline, not the card's issuance schedule).
    rule_when: re.Pattern[str] | None = None


# A homeless household's meals bought with its benefits (273.11(h)) are a rule, not where the card is taken or what
# it buys ("if shes homeless can she use her snap at places that serve meals"); "she's not homeless" is not that.
_HOMELESS_MEALS = r"^(?=.*(?<!not )(?<!isn't )(?<!isnt )\bhomeless\b)(?=.*\bmeals?\b)"

# One client, by pronoun or by name ("her", "my client's", "ms harris's", "jane doe's").
_OWNER = r"(?:her|his|their|(?:my|the|this) clients?'?s?|(?:(?:mr|mrs|ms|miss|dr)\.?\s+)?[a-z]+(?:\s+[a-z]+)?'s)"

NEEDS = (
    Need("contact details",
         re.compile(r"\b(?:phone|telephone|call center|hotline|fax|contact)\s*(?:number|#|no\b|info\b|information|"
                    r"details)|\bnumber (?:to|for) call\b|"
                    # a toll-free number asked by its prefix ("whats the 800 number she should call")
                    r"\b(?:1-?)?8(?:00|88|77|66|55|44|33)\s*(?:number|#|no\b|line)|"
                    # asked for ("is there a hotline she can call"), not told of ("she called the hotline and …")
                    r"\b(?:customer service|toll[- ]free)\s+(?:number|line|#|phone)|"
                    r"\bwho(?:\s+is|'s|s)\s+the (?:supervisor|manager|director|head|administrator)\b(?:\s+\w+){0,3}?\s+"
                    r"(?:at|of|for|in)\b|"
                    r"\bwho\s+(?:to|should i|do i|can i|should we|do we)\s+call\s+(?:at|in)\s+(?:the\s+)?"
                    r"(?:[\w-]+\s+){0,2}?(?:county|office|dss|hhs|dhs|agency|state)\b|"
                    r"\bwho (?:do|should|can) (?:i|we|she|he|they) ask for\b|"
                    r"\b(?:what(?:'s| is)|whats)\s+(?:their|the|her|his|its)\s+fax\b|"
                    r"\b(?:book|schedule|make)\s+(?:an?\s+|that\s+|the\s+|her\s+|his\s+)?(?:appointment|appt|"
                    r"interview|that|it)?\s*(?:with|w/?|at)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?(?:office|dss|hhs|"
                    r"center)\b|"
                    r"\b(?:is there|are there|what(?:'s| is)?|whats|give me|need)\s+(?:\w+\s+){0,3}"
                    r"(?:hotline|helpline|help line|call center|language line|interpreter line)\b|"
                    r"\bline\s*(?:#|number\b|no\b)|\b(?:what|which)\s+e-?mail\b(?:\s+address)?\s+(?:can|do|does|should|"
                    r"would|is)\b|"
                    r"\bwho (?:do|should|can|would) (?:i|we|she|he|they) (?:call|contact|email|e-mail|"
                    r"talk to|ask) (?:at|in) "
                    r"(?:the |our |her |his )?(?:county|office|dss|hhs|dhs|hra|agency|state)\b|"
                    r"\bdirect (?:line|number)\b|"
                    # "do u have that number", "do you have their fax" (not "the number of people")
                    r"\bdo\s+(?:u|you|ya|we)\s+have\s+(?:that|the|their|a|her|his|its)\s+"
                    r"(?:(?:phone|fax|direct|contact)\s+)?(?:number|#|fax|e-?mail|address)\b(?!\s+of\b)|"
                    # "the number for the food stamp office", "the email for the caseworkers", "mailing address"
                    r"\b(?:number|e-?mail(?: address)?|address)\s+(?:for|of|to)\s+(?:the\s+|her\s+|his\s+|their\s+|"
                    r"our\s+|my\s+)?(?:[\w-]+\s+){0,3}?(?:office|caseworkers?|workers?|agency|department|dss|hhs|"
                    r"dhs|hra|unit)\b|\b(?:what(?:'s| is)|whats|need|give me)\s+(?:\w+\s+){0,3}?mailing address\b|"
                    r"^\W*mailing address\b|"
                    # a local provider's identity ("who is the e&t provider in her county")
                    r"\bwho(?:\s+is|'s|s|\s+are)\s+(?:the|our|their|her|his)\s+(?:[\w&/-]+\s+){0,3}?(?:providers?|"
                    r"contractors?|vendors?|partners?|agency|agencies|organizations?)\s+(?:in|for|near|around|at)\s+"
                    r"(?:our|my|her|his|their|the|this)\s+(?:county|area|city|town|region|parish)\b|"
                    r"\b(?:which|what)\s+(?:[\w&/-]+\s+){0,2}?(?:providers?|contractors?|vendors?|agency|agencies|"
                    r"organizations?|orgs?|nonprofits?)\s+(?:in|near|around|for)\s+(?:our|my|her|his|their|the|this)\s+"
                    r"(?:county|area|city|town|region|parish)\b|"
                    r"\b(?:address|where)\s+(?:\w+\s+){0,3}?(?:mail|send|fax|"
                    r"drop off|turn in)\b(?:\s+\w+){0,6}?\s+(?:in|to|at)\s+(?:the\s+)?(?:[\w-]+\s+){1,2}?"
                    r"(?:county|parish|borough|district)\b", re.I),
         # spaced too ("1 - 800 - 325 - 0778", as some extracted pages have it)
         re.compile(r"\(?\b\d{3}\)?\s?[\s.-]\s?\d{3}\s?[\s.-]\s?\d{4}\b|\b1\s?-\s?8\d\d\b|\b[\w.+-]+@[\w-]+\.[\w.]+\b|"
                    r"\b\d{1,5} [A-Z][a-z]+ (?:St|Street|Ave|Avenue|Road|Rd|Blvd|Drive|Dr)\b"),
         duty_is_a_rule=True),
    Need("opening hours",
         re.compile(r"\b(?:office hours|opening hours|hours of operation|walk[- ]?ins|walk[- ]in interviews?|"
                    r"(?:open|closed)\s+(?:on|for)\s+(?:the\s+)?(?:[\w']+\s+){0,2}?(?:day|holidays?|eve)|"
                    r"walk[- ]in (?:hours|days|times)|what time\b.{0,120}?\b(?:open|close|stop)|"
                    r"\bwait(?:ing)?\s+times?\b|\bhow long\s+(?:is|are|r)\s+the\s+(?:wait|lines?)\b|"
                    r"(?:open|close)s? (?:on )?(?:saturdays?|sundays?|weekends?|today|tomorrow))\b|"
                    # an office, lobby or agency open or closing ("is the county office open on memorial day",
                    # "when does the hhs lobby open", "is the snap office closing in december"): its own
                    # schedule, never in the rules. A case or a certification period that closes is not one.
                    # Not told of: "put her app in the drop box after the office closed".
                    r"(?<!after the )(?<!before the )(?<!when the )(?<!once the )(?<!since the )(?<!after )"
                    r"\b(?:offices?|lobby|lobbies|building|dss|hhs|dhs|hra|agency)\s+(?:\w+\s+){0,4}?"
                    r"(?<!after )(?<!before )(?:open|opens|opened|close|closed|closes|closing|shut|shutting|moved|"
                    r"relocated)\b(?!\s+(?:a|an|the|her|his|their)\s+"
                    r"(?:case|application|file)\b)|"
                    r"\bwhen (?:does|do|is|will) (?:the )?(?:[\w-]+ ){0,3}?(?:office|lobby|dss|hhs|dhs|hra|agency) "
                    r"(?:open|close|reopen)", re.I),
         re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)", re.I),
         duty_is_a_rule=True),
    Need("a place nearby",
         re.compile(r"\b(?:closest|nearest)\s+(?:\w+\s+){0,2}(?:office|pantry|pantries|food bank|location|center|"
                    r"store|clinic|place)|\b(?:list|map) of (?:[\w-]+\s+){0,2}?(?:offices|locations|pantries|"
                    r"food banks|"
                    r"centers)\b|\b(?:offices|locations)\s+(?:in|near|around)\s+(?:[\w-]+\s+){1,2}?"
                    r"(?:county|parish|city|town)\b|\bis there (?:a|an|any) (?:[\w-]+\s+){0,2}?(?:office|"
                    r"pantry|food bank|"
                    r"location|center|clinic)s? (?:in|near|close to|by|around)\b|\bnear me\b|\bnear \d{5}\b|"
                    r"\b(?:lives?|living|located|moved)\s+(?:in|to)\s+\d{5}\b|\bzip(?:\s*code)?\s*:?\s*\d{5}\b|"
                    r"\b(?:which|what)\s+office\s+(?:does|do|should|can|would|will)\s+(?:she|he|they|i|we|"
                    r"(?:my|the) client)\s+(?:go|apply|report|visit|use)\b|"
                    r"\bdirections to\b|\baddress of\b|"
                    # getting to the office ("is there parking at the dss on main st")
                    r"\b(?:parking|bus (?:stop|line|route)s?)\b(?:\s+\w+){0,4}?\s+(?:at|near|by|for)\s+(?:the\s+)?"
                    r"(?:[\w-]+\s+){0,3}?(?:office|dss|hhs|dhs|building)\b", re.I),
         re.compile(r"\b\d{1,5} [A-Z][a-z]+ (?:St|Street|Ave|Avenue|Road|Rd|Blvd|Drive|Dr)\b|\b\d{5}(?:-\d{4})?\b"),
         duty_is_a_rule=True),
    # An EBT card's logistics (a lost or stolen card, its PIN, its balance, the day benefits are loaded on it) are
    # run under the issuance rules and the state's card vendor, not the eligibility rules, which mention the card
    # without saying any of this; only a question in an EBT/SNAP context, so that a lost Social Security card is not
    # read as one. A knowledge base with the state's card page (replacing a card, the issuance schedule) answers.
    Need("EBT card logistics",
         re.compile(r"^(?=.*\b(?:ebt|snap|food stamps?|benefits? card)\b|.*\bpin\b(?:\s+\S+){0,8}?\s+card\b|"
                    r".*\bbenefits?\s+(?:(?:get|got|are|were|is|be)\s+)?(?:load|loads|loaded|deposit|deposits|"
                    r"deposited|post|posts|posted|hit|hits)\b|"
                    r".*\bbenefits\b(?:\s+\S+){0,6}?\s+(?:on|onto|to)\s+(?:the|her|his|their)\s+card\b)(?=.*(?:"
                    r"\b(?:lost|stolen|stole|damaged|broken|skimmed|hacked|replace\w*|new|another)\s+"
                    r"(?:(?:her|his|my|their|the|a|an)\s+)?(?:ebt\s+|snap\s+|benefits?\s+|food stamps?\s+)?card\b"
                    r"|\bcards?\s+(?:was\s+|got\s+|is\s+|has been\s+)?(?:lost|stolen|damaged|skimmed|hacked|drained|"
                    r"declined|blocked|locked|frozen|cut|bent|broken|cracked|eaten|demagnetized)\b"
                    r"|\b(?:forgot|forgotten|reset|resetting|change|changing|new|lost|wrong|invalid|incorrect|locked|get|"
                    r"set|setting|"
                    r"choose|remember|need)\w*\s+(?:her\s+|his\s+|their\s+|the\s+|a\s+|my\s+)?(?:ebt\s+|snap\s+|card\s+)?pin\b"
                    r"|\bpin(?:\s+number)?\s+(?:\w+\s+){0,2}?(?:reset|locked|blocked|wrong|not working|doesn'?t work|"
                    r"won'?t work|forgot|forgotten)\b|\bwhat(?:'s| is)\s+(?:her|his|the|my|their)\s+pin\b"
                    r"|\bswip\w*\b|\bchip\s+(?:that\s+)?(?:won'?t|wont|doesn'?t|isn'?t|"
                    r"is not|not)\s+(?:read|work)\w*|\bmagnetic stripe?\b|\b(?:re)?loaded\b"
                    r"|\b(?:get|send|mail)\w*\s+(?:her\s+|him\s+|them\s+)?(?:a\s+)?new one\b"
                    r"|\buse\s+(?:her|his|their|my|the)?\s*(?:ebt|snap)(?:\s+card)?\s+(?:in|"
                    r"out of)\s+(?:another|a different|"
                    r"other)\s+states?\b"
                    r"|\b(?:system|machines?|network|website|site|portal)s?\s+(?:is\s+|are\s+)?(?:down|offline|out)\b"
                    r"|\b(?:snap|benefits|ebt|food stamps)\s+(?:didn'?t|did not|hasn'?t|has not|never|won'?t)\s+"
                    r"(?:load|come|post|show up|hit|go through|get deposited)\b"
                    r"|\b(?:case|card)\s*(?:number|#|no\.?)\s*ends? (?:in|with)\b"
                    # the card elsewhere ("will her ohio ebt card work down there"), benefits left unused on it
                    r"|\bcard\s+(?:still\s+)?(?:work|be accepted)\s+(?:in|down|up|out|over|there)\b"
                    r"|\bover the counter\b"
                    r"|\b(?:give|gives|hand|hands|issue|issues)\s+out\s+(?:the\s+)?(?:ebt\s+)?cards?\b"
                    r"|\bcard\s+(?:still\s+)?(?:work|be accepted)\s+(?:\w+\s+){0,3}?(?:down|up|over|out)\s+there\b"
                    r"|\b(?:take|taken|takes|took|come|came|go|goes|went)\s+(?:it\s+|them\s+)?off\s+(?:the|her|his|"
                    r"their)\s+card\b|\bunused\s+(?:snap|benefits|food stamps)\b"
                    r"|\b(?:hasn'?t|has not|haven'?t|have not|doesn'?t|does not|didn'?t|did not|not)\s+"
                    r"(?:used|use|spent|spend|touched)\s+(?:her\s+|his\s+|their\s+|the\s+)?"
                    r"(?:snap|benefits|ebt|food stamps)\b"
                    r"(?:\s+\w+){0,6}?\s+(?:go away|goes away|expire|expires|disappear|disappears|lose|taken)\b"
                    # where the card is taken ("does her Ohio EBT card work at Florida stores", "does the market
                    # accept ebt"); not an office accepting "snap applications"
                    # asked ("does the corner store take ebt", "which markets accept snap"), not told of ("the store
                    # owner (takes ebt) as her rep")
                    r"|\b(?:does|do|did|will|would|can|could|is|are|where|which|what|any)\b(?:\s+[\w'-]+){0,6}?\s+"
                    r"(?:accept|accepts|accepted|take|takes)\s+(?:ebt|snap|food stamps?)\b(?!\s+(?:applications?|"
                    r"apps?|cases?|clients?|households?|recipients?|away|off|back|benefits away))"
                    r"|\bcards?\s+(?:still\s+)?(?:works?|be accepted|accepted)\s+(?:at|in)\s+(?:\w+\s+){0,2}?"
                    r"(?:stores?|retailers?|markets?)\b"
                    # a card refused at the till, the balance on it, ordering online with it
                    r"|\bcards?\s+(?:\w+\s+){0,2}?(?:isn'?t|is not|not|won'?t|doesn'?t|didn'?t|wasn'?t|keeps?|got|"
                    r"getting|was|is)\s+(?:getting\s+)?(?:working|work|accepted|taken|swiping|declined|rejected)\b"
                    r"|\b(?:current|remaining)\s+(?:\w+\s+)?balance\b"
                    r"|\b(?:what(?:'s| is)|whats|how much is)\s+(?:\w+\s+){0,3}?balance\b"
                    r"|\b(?:order|shop|buy)\w*\s+(?:[\w'-]+\s+){0,3}?online\b|\bonline\s+(?:grocer\w*|"
                    r"shopping|orders?)\b"
                    r"|\b(?:check|see|find out)\s+(?:\w+\s+){0,2}balance\b|\bbalance on\b|\bcash ?back\b"
                    r"|\b(?:be|show up|appear)\s+on\s+(?:her|his|their|the|my)\s+(?:ebt\s+|snap\s+)?card\b"
                    r"|\bhow much\b(?:\s+\w+){0,3}?\s+(?:left|remaining)\s+on\b|\b(?:what'?s|what is)\s+left\s+on\b"
                    r"|\b(?:amazon|instacart|walmart\.com|doordash|uber ?eats)\b"
                    r"|\bdeposits?\b(?:\s+\w+){0,3}?\s+(?:hit|hits|post|posts|land|lands|show up)\b"
                    r"|\buse\s+(?:her|his|their|my|the)?\s*(?:ebt|snap|food stamps?)(?:\s+card|\s+benefits)?\s+at\b"
                    r"|\b(?:what|which)\s+(?:day|date)\b(?:\s+\w+){0,8}?\s+(?:loaded|deposited|deposit|load|added|"
                    r"hits?|come in|comes in|come|comes|arrive|arrives|go on|goes on|put on)\b"
                    r"|\bwhen\s+(?:do|does|will|is)\b(?:\s+\w+){0,6}?\s+(?:get\s+|be\s+)?(?:loaded|deposited|"
                    r"put on|added to|go on|goes on|come on|land on)\b))"
                    # skimming, cloning and draining happen to benefit cards, whatever the question calls them
                    r"|\bcards?\s+(?:was\s+|got\s+|is\s+|has been\s+)?(?:skimmed|cloned|drained)\b"
                    r"|\bbenefits?\s+(?:was\s+|were\s+|got\s+|have been\s+|has been\s+)?(?:skimmed|cloned)\b"
                    r"|\bskimm(?:ing|ers?)\b|\bskimmed\s+(?:her\s+|his\s+|their\s+|the\s+|my\s+)?(?:snap|ebt|benefits?|"
                    r"cards?|food stamps)\b"  # not "she skimmed the letter"
                    r"|\bused\s+(?:her|his|their|my|the)\s+(?:ebt\s+|snap\s+)?card\s+without\b", re.I | re.S),
         re.compile(r"\breplace(?:ment)?\s+(?:\w+\s+){0,4}(?:ebt\s+)?cards?\b|\bcards?\s+(?:\w+\s+){0,4}replaced\b|"
                    r"\bissuance (?:schedule|calendar)\b|\b(?:benefits|snap)\s+(?:are|is)\s+(?:deposited|loaded)\b|"
                    r"\bbalance inquir|\bcheck (?:your|the|a|their) (?:\w+ )?balance\b|"
                    r"\b(?:change|reset|choose|select) (?:your|a|the|their) PIN\b", re.I),
         rule_when=re.compile(r"^(?=.*\b(?:expedited|emergency (?:snap|food stamps?|benefits)|fast[- ]?track|"
                              r"quick snap)\b)(?=.*\b(?:by when|how (?:soon|fast|quickly|many days|long)|"
                              r"when (?:should|will|would|does|do|must|has)|til|until|(?:the )?latest|deadline)\b)"
                              # the notice owed before a cut ("the notice only came the day her benefits loaded.
                              # dont they have to give 10 days notice first??"): the adverse-action rules
                              r"|\b(?:10|ten)[- ]days?'?\s+(?:advance\s+|advanced\s+)?notice\b|\badvance(?:d)? notice\b"
                              r"|\badverse action\b"
                              rf"|{_HOMELESS_MEALS}", re.I | re.S)),
    # What the benefits can buy is defined apart from the eligibility rules (7 CFR 271.2 "eligible foods"); only
    # for an item other than food itself ("use her ebt card to buy food for her" asks who may shop).
    Need("what the benefits can buy",
         re.compile(r"\b(?:buy|purchase|pay for)\s+(?!(?:(?:her|his|their|the|my|some)\s+)?(?:food|groceries|"
                    r"meals?)\b)(?:[\w'-]+\s+){0,4}?(?:with\s+|w/\s*|using\s+|on\s+)"
                    r"(?:her\s+|his\s+|their\s+|my\s+|the\s+)?(?:snap|ebt|food stamps?)\b|"
                    r"\b(?:snap|ebt|food stamps?)(?:\s+cards?|\s+benefits)?\s+(?:be\s+)?(?:used|use|spent|spend)\s+"
                    r"(?:to buy|to purchase|to pay for|for|on)\s+"
                    r"(?!(?:(?:her|his|their|the|my|some)\s+)?(?:food|groceries|meals?)\b)\w|"
                    r"\b(?:use|spend)\s+(?:her\s+|his\s+|their\s+|my\s+|the\s+)?(?:snap|ebt|food stamps?)"
                    r"(?:\s+cards?|\s+benefits)?\s+(?:to buy|to purchase|to pay for|on)\s+"
                    r"(?!(?:(?:her|his|their|the|my|some)\s+)?(?:food|groceries|meals?)\b)\w|"
                    # an item "covered by snap"; not "eligible for snap" or "approved for snap", said of people
                    r"\b(?:covered|allowed)\s+(?:by|with|under|on)\s+(?:snap|ebt|food stamps?)\b|"
                    r"\b(?:snap|ebt|food stamps?)[- ](?:eligible|approved)\s+(?:items?|foods?|products?)\b|"
                    r"\b(?:snap|ebt|food stamps?)(?:\s+cards?)?\s+(?:work|works|go through)\s+(?:for|on)\s+"
                    r"(?!(?:(?:her|his|their|the|my|some)\s+)?(?:food|groceries|meals?)\b)\w|"
                    r"\b(?:snap|ebt|food stamps?)\s+(?:cover|covers|pay for|pays for)\s+(?!(?:(?:her|his|their|the|"
                    r"my|some)\s+)?(?:food|"
                    r"groceries|meals?)\b)\w|"
                    # hot food at a store's counter, the commonest item asked about ("can she use her ebt for the hot
                    # rotisserie chicken at kroger"); a homeless household's meals are a rule (rule_when below)
                    r"\bhot\s+(?:[\w'-]+\s+){0,2}?(?:foods?|meals?|chicken|pizza|deli|soup|bar)\b|\brotisserie\b|"
                    r"\bdeli\s+(?:foods?|counter|chicken|section)\b",
                    re.I),
         re.compile(r"\beligible foods?\b|\b(?:eligible|ineligible|allowable)\s+items?\b|"
                    r"\bcan(?:not|'t)?\s+(?:be\s+)?(?:buy|bought|purchase|purchased)\b", re.I),
         rule_when=re.compile(_HOMELESS_MEALS, re.I | re.S)),
    # How many people a county serves is a report's figure, not a rule.
    Need("statistics",
         re.compile(r"\bhow many (?:people|households|families|clients|folks|residents|kids|children)\b"
                    r"(?:\s+\w+){0,6}?\s+(?:are on|get|gets|receive|use|participate|are enrolled|are getting)\b|"
                    r"\b(?:avg|average)\s+(?:snap\s+|monthly\s+)?(?:benefit|allotment|payment)s?\b", re.I),
         re.compile(r"\b\d{1,3}(?:,\d{3})+\s+(?:people|households|participants|persons|residents)\b", re.I)),
    # A password, a login or a locked account belongs to a state's website, not to the rules.
    Need("an online account's logistics",
         # trouble with one ("reset her password", "locked out", "cant log in"), not a page's steps that name one
         re.compile(r"\b(?:reset|forgot|forgotten|recover|lost|can'?t remember)\w*\s+(?:[\w']+\s+){0,3}?(?:password|"
                    r"username|user name|login)\b|"
                    # locked out of an account, not "locked out" by an employer (a lockout, 273.1(e)) or off the program
                    r"\blocked out of (?:(?:her|his|their|the|my|an?)\s+)?(?:[\w-]+\s+){0,2}?(?:account|portal|app|"
                    r"website|site|login|profile)\b|\baccount (?:is |got |was )?locked\b|"
                    r"\b(?:can'?t|cannot|unable to|won'?t let (?:her|him|them|me))\s+(?:log|sign) ?in(?:to)?\b|"
                    r"\b(?:can'?t|cannot|unable to|how (?:do|does|can) (?:i|she|he|they))\s+upload\b|"
                    r"\bupload\w*\b(?:\s+\w+){0,4}?\s+(?:to|on|into|through|in)\s+(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:app|"
                    r"portal|website|site)\b|"
                    # a button or page that does not work ("the upload button is greyed out", "the app keeps crashing")
                    r"\b(?:button|link|page|app|portal|website|site)\s+(?:\w+\s+){0,2}?(?:greyed|grayed)\s+out\b|"
                    r"\b(?:app|portal|website|site)\s+(?:\w+\s+){0,2}?(?:keeps\s+crashing|won'?t\s+load|"
                    r"isn'?t\s+loading|not\s+loading|freezes|keeps\s+freezing)\b", re.I),
         # a page on the website itself ("reset your password", "log in to"), not the rules' electronic signatures
         re.compile(r"\b(?:reset|forgot|forgotten|change|recover)\w*\s+(?:[\w']+\s+){0,3}?(?:password|username)\b|"
                    r"\b(?:password|username)\s+(?:\w+\s+){0,3}?(?:reset|recovery)\b|\blocked out\b|"
                    r"\blog(?:ging)? ?in(?:to| to)\b", re.I)),
    # Whether another program (housing, SSI, taxes) counts the SNAP benefits themselves is that program's rule: the
    # SNAP rules never count their own benefits. "count her snap as income for section 8", not "count her ssi".
    Need("how another program counts SNAP",
         re.compile(r"\bcount\w*\s+(?:her|his|their|the|my clients?'?s?)?\s*(?:snap|food stamps?|ebt)(?:\s+benefits?)?"
                    r"\s+(?:as|toward|towards|against)\b|"
                    r"\b(?:snap|food stamps?)\s+(?:benefits?\s+)?(?:counts?|counted)\s+(?:as (?:income|a resource)\s+)?"
                    r"(?:for|toward|towards|against|by|when)\s+(?:\w+\s+){0,3}?(?:section 8|housing|rent|ssi|medicaid|"
                    r"tax(?:es)?|hud|landlord)\b", re.I),
         # a page that says so ("SNAP benefits are not counted as income for housing")
         re.compile(r"\b(?:snap|food stamp|supplemental nutrition assistance)(?: program)?(?: benefits| allotments?)?"
                    r"[^.]{0,60}?\bnot\b[^.]{0,40}?\b(?:income|resources?)\b", re.I)),
    # What getting benefits means for a green card or citizenship ("public charge") is immigration law.
    Need("immigration consequences",
         re.compile(r"\bpublic charge\b|\b(?:hurt|affect|count against|ruin|mess up)\s+(?:her|his|their|my|the)\s+"
                    r"(?:[\w-]+\s+)?(?:green card|immigration|citizenship|visa|naturalization)\b", re.I),
         re.compile(r"\bpublic charge\b", re.I)),
    # Replacing food lost to a power outage, a fire or a flood is an issuance rule (7 CFR 274), not an eligibility
    # one; lost benefits (the agency's error) are, and are asked as "get back the snap she should have gotten".
    Need("replacing food lost in a misfortune",
         re.compile(r"\b(?:food|groceries)\b(?:\s+\w+){0,4}?\s+(?:spoiled|spoilt|went bad|go bad|rotted|destroyed|"
                    r"ruined|burned|burnt)\b|\b(?:snap|benefits|food stamps?|food)\s+(?:\w+\s+)?replaced\b|"
                    r"\breplace\w*\s+(?:her\s+|his\s+|their\s+|the\s+)?(?:snap|benefits|food stamps?|food)\b"
                    r"(?:\s+\w+){0,4}?\s+(?:spoiled|lost|destroyed|fire|flood|outage|storm)\b", re.I),
         re.compile(r"\bhousehold misfortune\b|\b(?:destroyed|spoiled) (?:in|by|due to)\b|"
                    r"\breplacement (?:of )?(?:benefits|issuances?|food)\b", re.I)),
    Need("a case lookup",
         # asked of the bot ("can you look up …"), not "how do I check on my case?", which a page may answer
         re.compile(r"\b(?:can|could|would|will|pls|please)\s+(?:you|u)\s+(?:please\s+)?(?:look ?up|check|find|"
                    r"see|pull up|find out)\b(?:\s+\w+){0,3}?\s+(?:my|her|his|their|this|the)\s+(?:clients?'?s?|case|"
                    r"application|app|status|benefits)\b|\blook ?up (?:her|his|my|their|the|this)?\s*(?:client'?s?\s+)?"
                    r"case\b|"
                    # "can u look up if case 20-44718 got approved", "check whether her case is open yet"
                    r"\b(?:look ?up|check|see|find out)\s+(?:if|whether)\s+(?:her\s+|his\s+|their\s+|the\s+)?case\b|"
                    r"\bpull up (?:her|his|their|the|my clients?'?s?)\s+(?:case|file|application|account|"
                    r"budget|record|history|notices?|info)\b|"
                    r"\b(?:see|find out|check)\s+why\s+(?:her|his|their|she|he|they)\b|"
                    # why one client's benefits changed ("why did she get cut off this month?"): her notice says
                    r"\bwhy\s+(?:did|was|were|has|have)\s+(?:she|he|they|her|his|their|the\s+[a-z]+\s+(?:case|hh|"
                    r"household|family))\s+(?:[\w-]+\s+){0,2}?"
                    r"(?:get\s+|got\s+|been\s+)?(?:cut off|cut|denied|close|closed|terminated|reduced|stopped|dropped|"
                    r"sanctioned|disqualified|lowered)\b|"
                    # a status asked by a name ("check if maria gonzalez's snap app got approved")
                    r"\b(?:check|see|find out|tell me)\s+(?:if|whether)\s+(?:[\w'-]+\s+){1,3}?(?:snap\s+)?"
                    r"(?:application|app|recert\w*|renewal|case|interview|hearing)\s+(?:got|was|has been|is|went)\s+"
                    r"(?:approved|denied|processed|through|scheduled|rescheduled|closed|reopened|done)\b|"
                    # the client's own dates and history ("when is his recert due?", "how many abawd months has he
                    # used"), what a hearing decided, what is on the case ("is there an overpayment claim on his case")
                    rf"^\W*when\s+(?:is|was)\s+{_OWNER}\s+(?:next\s+)?(?:recert\w*|renewal|"
                    r"interview|appointment|hearing)\s+(?:due|scheduled|set)\b(?![^?]{0,80}?\bif\b)|"
                    # who is on her record ("is her daughter listed as the authorized rep on her case")
                    r"\bis\s+(?:her|his|their|my clients?'?s?)\s+[\w-]+\s+(?:already\s+|still\s+)?(?:listed|named|"
                    r"added|on file)\s+(?:as|on)\b|"
                    r"\bhow many of (?:his|her|their) (?:[\w-]+\s+){0,3}?months\s+(?:he'?s|she'?s|hes|shes|they'?ve|"
                    r"theyve|has|have)\s+(?:already\s+)?(?:used|burned|burnt|had|gotten|got)\b|"
                    r"\bhow many\s+(?:[\w-]+\s+){0,3}?months\s+(?:has|have|did)\s+(?:he|she|they|(?:my|the) client)\s+"
                    r"(?:already\s+)?(?:used|had|gotten|received|burned|burnt|got)\b|"
                    r"\bwhat did\s+(?:the|her|his|their)\s+(?:hearing officer|judge|alj|worker|caseworker|county|state|"
                    r"agency|office)\s+(?:decide|say|rule|determine|find)\b|"
                    r"\b(?:is there|are there|there'?s|theres|there is|does (?:she|he|they|the client|client) have|"
                    r"(?:she|he|they|client) has)\s+(?:an?\s+|any\s+)?(?:[\w-]+\s+){0,2}?"
                    r"(?:claims?|holds?|sanctions?|flags?|notes?|penalt(?:y|ies)|disqualifications?|overpayments?|"
                    r"ipvs?)\s+on\s+(?:(?:her|his|their|the|my clients?'?s?)\s+(?:case|file|account|record)|file|"
                    r"record)\b|"
                    # identifiers of one client ("dob 3/4/81", "ssn ends 4471"), her record ("a benefit history")
                    r"\b(?:dob|d\.o\.b\.?|date of birth)\s*:?\s*\d{1,2}/\d{1,2}/\d{2,4}\b|"
                    r"\bssn\s+(?:ends?|ending)\s+(?:in\s+|with\s+)?\d{4}\b|\b(?:benefit|issuance|payment)\s+history\b|"
                    # what her notice said, when it was set, whether the office got what she sent
                    r"\bwhat did\s+(?:the|her|his|their)\s+(?:notice|letter)\s+say\b|"
                    r"\btell me what\s+(?:it|the notice|the letter|her notice|his notice)\s+(?:said|says)\b|"
                    r"\bwhy\s+(?:her|his|their)\s+(?:amount|snap|benefits?|allotment|check)\s+(?:dropped|went down|"
                    r"changed|decreased|was cut|got cut|is lower|is less|went up|increased)\b|"
                    r"\bwhen\s+(?:her|his|their)\s+(?:hearing|interview|appointment|appt|recert\w*)\s+(?:is|was)\s+"
                    r"(?:scheduled|set)\b|"
                    r"\b(?:did|has|have)\s+(?:the\s+)?(?:state|county|office|agency|dss|hhs|dhs|worker|caseworker)\s+"
                    r"(?:decide|decided|determine|determined|rule|ruled)\b|"
                    r"\bstatus of\s+(?:the\s+|her\s+|his\s+|their\s+)?(?:app|application|case|recert\w*|renewal)\b|"
                    # an identifier the redaction replaced (rag/redaction.py): one client's record is asked about
                    r"\[(?:dob|ssn|case)\]|\bcase notes?\b|"
                    r"\bdid\s+(?:it|she|he|they)\s+(?:get|got)\s+(?:scheduled|approved|denied|processed|rescheduled|"
                    r"closed|received)\b|"
                    # "did her expedited get approved yet?", "is her hearing still on for the 12th"
                    r"\b(?:did|has|have|is|was)\s+(?:her|his|their|my clients?'?s?|the clients?'?s?)\s+"
                    r"(?:[\w-]+\s+){1,2}?(?:get\s+|got\s+|been\s+|gotten\s+)?(?:approved|denied|processed|certified|reviewed)\s+yet\b|"
                    r"\b(?:her|his|their)\s+(?:[\w-]+\s+)?(?:hearing|interview|appointment|appt)\s+still\s+(?:on|scheduled|"
                    r"set|happening)\b|"
                    r"\bhow much\s+(?:does|do|did)\s+(?:she|he|they|my client|the client)\s+(?:still\s+)?owe\b"
                    r"(?![^?]{0,60}?\bif\b)|"
                    r"\bwhen\s+(?:was|is)\s+(?:it|(?:her|his|their|the)\s+(?:interview|appointment|hearing|"
                    r"appt))\s+scheduled\b|"
                    r"\bconfirm\s+(?:if\s+|whether\s+|that\s+)?(?:the\s+)?(?:office|county|state|agency|dss|hhs|dhs|"
                    r"they|worker|caseworker)\s+(?:got|received|has|have|processed)\b|"
                    r"(?:^|[.?!]\s*)\W*(?:did|has|have)\s+(?:the\s+)?(?:state|county|office|agency|dss|hhs|dhs|they|"
                    r"worker|caseworker)\s+(?:get|got|gotten|receive|received|approve|approved|deny|denied|process|"
                    r"processed|schedule|scheduled)\s+(?:it|them|that)\b|"
                    r"\bname of (?:her|his|their|the|my clients?'?s?)\s+(?:case ?worker|worker|supervisor|"
                    r"eligibility worker|specialist)\b|"
                    r"\bcase\s*(?:#|no\.?|number|num)?\s*:?\s*#?\d{5,}\b|\bcase\s*(?:#|no\.?|number)\s*\d|"
                    # where one client's case stands: "did her application go through?", "can u see if my clients
                    # recert was processed", "tell me when her interview is scheduled"
                    rf"^\W*(?:\w+\W+){{0,3}}?(?:did|has|have|is|was)\s+{_OWNER}\s+"
                    r"(?:[\w-]+\s+){0,2}?(?:application|app|recert\w*|renewal|case|paperwork|documents?|"
                    r"verifications?|interview)\s+(?:been\s+|get\s+|gotten\s+)?(?:go through|gone through|went through|"
                    r"go thru|gone thru|went thru|"
                    r"processed|approved|done|finished|submitted|scheduled|rescheduled|denied|closed|cancell?ed|"
                    r"reinstated|transferred|sent|mailed|reopened|received|still (?:on|open|active|"
                    r"scheduled|pending))\b|"
                    r"\b(?:see|check|find out|tell me|let me know)\s+(?:if|whether|when|where)\s+(?:her|his|their|"
                    r"(?:my|the|this) clients?'?s?)\s+(?:[\w-]+\s+){0,2}?(?:application|app|recert\w*|renewal|case|"
                    r"paperwork|documents?|interview|appointment|hearing|card|ebt|deposit)\b|"
                    # "did the state get her docs yet?"
                    r"^\W*(?:\w+\W+){0,3}?(?:did|has|have)\s+(?:the\s+)?(?:state|county|office|agency|dss|hhs|dhs|they|"
                    r"worker|caseworker)\s+(?:get|got|gotten|receive|received|process|processed|approve|approved|see|"
                    r"seen)\s+(?:her|his|their|the|my clients?'?s?)\s+(?:[\w-]+\s+){0,2}?(?:application|app|"
                    r"recert\w*|renewal|"
                    r"paperwork|documents?|docs|verifications?|forms?|paystubs?)\b|"
                    r"\b(?:see|check|find out)\s+(?:if|whether)\s+(?:she|he|they)(?:'s|'ve| has| have| was| were)?\s+"
                    r"(?:been\s+)?(?:sent|mailed|approved|denied|scheduled|assigned|certified)\b|"
                    r"\b(?:which|what) (?:case ?)?worker (?:is|was) (?:assigned|handling)\b|"
                    r"\bwho (?:is|'s) (?:her|his|their|my clients?'?s?) (?:case ?)?worker\b|"
                    # a request to act for the client, which a bot that only reads policy cannot do
                    r"\b(?:can|could|would|will|pls|please)\s+(?:you|u)\s+(?:please\s+|pls\s+)?(?:send|mail|e-?mail|"
                    r"fax|text|call|submit|schedule|reschedule|book|set up|move|approve|process|update|enroll|sign up|"
                    r"cancel|reopen|"
                    r"transfer)\s+(?:her|him|them|(?:my|the|this) clients?)\b|"
                    r"\b(?:please|pls|can you|could you|can u|could u)\s+(?:submit|send in|file|fax|mail in|turn in)\s+"
                    r"(?:a|an|the|her|his|their)\s+(?:[\w-]+\s+){0,2}?(?:report|form|application|app|packet|"
                    r"documents?|paperwork)\b", re.I),
         None),
)
