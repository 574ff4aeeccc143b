"""Greetings and thanks get a short friendly reply: they are not questions, so a no-answer would be rude."""

from __future__ import annotations

from rag.search.terms import tokens

_GREETING = frozenset("hi hello hey hiya howdy morning afternoon evening good greetings yo".split())
_THANKS = frozenset("thanks thank thx ty cheers appreciated appreciate great perfect awesome helpful".split())
_BYE = frozenset(["bye", "goodbye", "later"])
# Words that may surround a greeting or thanks without making it a question.
_FILLER = frozenset("you so much a lot again very there all everyone navibot bot that's that it was is ok okay that "
                    "was see".split())


def smalltalk_reply(text: str) -> str | None:
    """A friendly reply if the whole message is a greeting, thanks or goodbye; None for anything else."""
    words = [w.split("'")[0] for w in tokens(text)]
    if not words or len(words) > 8 or any(w not in _GREETING | _THANKS | _BYE | _FILLER for w in words):
        return None
    if any(w in _THANKS for w in words):
        return "You're welcome! Ask me anything else about benefits rules whenever you need."
    if any(w in _BYE for w in words):
        return "Goodbye, and good luck with the call!"
    if any(w in _GREETING for w in words):
        return ("Hi! Ask me a benefits question, e.g. \"Can college students get SNAP?\". "
                "I answer with quotes from the sources. Type `help` for commands.")
    return None
