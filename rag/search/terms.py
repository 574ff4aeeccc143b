"""Which words of a text carry its topic. Used to build lexical queries and to focus static embeddings."""

from __future__ import annotations

import re

# Function words: no topic in any text.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves also may might must shall let
""".split())

# Conversational filler of questions asked in a chat ("Hi, I need some help with information about ..."): it
# matches pages about "help" and "information" instead of the topic, so questions drop it.
QUESTION_FILLER = frozenset("""
hi hello hey hope well thanks thank please okay ok yes sure wondering wonder question questions help helping
information info need needs want wanted like know tell explain get gets getting got find finding learn looking look
searching search understand understanding begin start started give provide some something anything any thing
things kind sort much many way ways someone somebody i'm i've i'd you're it's can't don't what's let's
happen happens happened happening
""".split())

# How navigators type mid-call: contractions without their apostrophe ("doesnt", "hes", "whats"), chat shorthand
# ("tho", "bc", "rn", "diff"), "client" (or "cl", "cx", "pt") and the telling around a question ("she says", "they
# told her", "2 weeks ago"), which no rule turns on. As topic words they would be
# looked for in the sections (lowering the no-answer gate's coverage) and match the few paragraphs that happen
# to use them. Not "ill", "shed", "id" or "wont": words of their own ("photo ID").
CHAT_FILLER = frozenset("""
dont doesnt didnt isnt arent wasnt werent wouldnt cant couldnt shouldnt havent hasnt hadnt aint hes shes theyre
youre im ive theyve weve youve whats thats theres whos wheres hows tho bc cuz coz pls plz thx btw fyi lol um uh
yeah yep nope gonna wanna gotta kinda really actually basically literally client clients guy cl cx pt rn diff
thru stuff anymore supposed ago say says said told
""".split())

_TOKEN = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")


def tokens(text: str) -> list[str]:
    return [t.replace("’", "'") for t in _TOKEN.findall(text.lower())]


def question_terms(question: str) -> list[str]:
    """Distinct topic words of a question, in order; falls back to all non-stopwords if filler is all there is."""
    # A contraction is its first word ("she's" -> "she", "SNAP's" -> "snap"); a negated verb ("doesn't") is none.
    words = [t.split("'")[0] for t in tokens(question) if not t.endswith("n't")]
    for drop in (STOPWORDS | QUESTION_FILLER | CHAT_FILLER, STOPWORDS):
        kept: list[str] = []
        for word in words:
            if word and word not in drop and (len(word) > 1 or word.isdigit()) and word not in kept:
                kept.append(word)
        if kept:
            return kept
    return []
