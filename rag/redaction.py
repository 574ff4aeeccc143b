"""PII redaction: SSNs, phone numbers, card numbers, immigration A-numbers, e-mail addresses, dates of birth and an
agency's own case-number patterns are replaced before text is stored, logged or sent to a hosted model.

Deliberately narrow: policy text is full of numbers ("7 CFR 273.5", "$1,234", "20 hours", "January 1, 2025",
"130 percent"), so only shapes that are personal data are replaced. A date counts as a date of birth only right
after "DOB", "date of birth", "birthday" or "born". The shapes follow Microsoft Presidio's pattern recognizers
(US_SSN with "-", "." or " " between the groups, CREDIT_CARD checked with Luhn), written as plain regexes: the
library itself needs spaCy and a 400 MB language model for its default engine.

It lives under rag/ because the engine redacts questions before any outside call (rewrite, answer, embedding,
rerank); bot/conversations/redacting.py wraps the conversation store with the same function.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Invisible characters pasted into a number ("123\u200b-45-6789") would hide it from the patterns below: they are
# removed where they touch a digit.
_INVISIBLE = "\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff"
_ZERO_WIDTH = re.compile(rf"(?<=[\d\-.\s\u2010-\u2015\u2212])[{_INVISIBLE}]+|[{_INVISIBLE}]+(?=\d)")
_DASH = "\\-\u2010-\u2015\u2212"  # hyphen, the Unicode hyphens and dashes (en dash, em dash), minus sign

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# 123-45-6789 / 123.45.6789 / 123–45–6789 / 123 45 6789 (even glued to a label: "SSN123-45-6789") / 123456789
# (nine digits standing alone); the same separator twice; not part of a longer number, amount or id.
_SSN = re.compile(rf"(?:(?<![\d$.,/{_DASH}])\d{{3}}([{_DASH}. ])\d{{2}}\1\d{{4}}|(?<![\w$.,/{_DASH}])\d{{9}})"
                  rf"(?![\w.,/{_DASH}]?\d)(?![A-Za-z_])")
# US numbers: (555) 123-4567, 555-123-4567, 555.123.4567, +1 555 123 4567, 1-800-221-5689, 5551234567, and the
# seven-digit local 555-0100; international: + country code and 7 to 14 more digits; an extension (x12, ext. 12)
# goes with the number.
_SEP = rf"[{_DASH}. ]"
_PHONE = re.compile(
    rf"(?<![\w$.,/{_DASH}])(?:(?:\+?1{_SEP}?)?(?:\(\d{{3}}\)\s?|\d{{3}}{_SEP})\d{{3}}{_SEP}\d{{4}}"
    rf"|(?:\+?1)?[2-9]\d{{9}}|\+\d{{1,3}}(?:{_SEP}?\d){{7,14}}|\d{{3}}[{_DASH}.]\d{{4}})"
    rf"(?:\s?(?:x|ext\.?)\s?\d{{1,6}})?(?![\w.,/{_DASH}]?\d)(?![A-Za-z_])")
# Card numbers: 13 to 19 digits, in groups of four (Amex 4-6-5) or run together, starting with 2 to 6 (the card
# networks' ranges; a Unix time in milliseconds starts with 1); replaced only when Luhn-valid.
_CARD = re.compile(rf"(?<![\w$.,/{_DASH}])(?:[2-6]\d{{3}}([{_DASH} ])\d{{4}}\1\d{{4}}\1\d{{1,7}}"
                   rf"|3\d{{3}}([{_DASH} ])\d{{6}}\2\d{{5}}|[2-6]\d{{12,18}})(?![\w.,/{_DASH}]?\d)(?![A-Za-z_])")
# Immigration (USCIS) A-numbers: A + 8 or 9 digits, as printed on a green card (A123456789, A-123-456-789); a
# lower-case "a" only glued to the digits ("a 10000000" is an article and an amount).
_A_NUMBER = re.compile(rf"(?<![\w$.,/{_DASH}])(?:A[{_DASH}# ]?|a[{_DASH}#]?)"
                       rf"(?:\d{{8,9}}|\d{{3}}[{_DASH} ]\d{{3}}[{_DASH} ]\d{{3}})"
                       rf"(?![\w.,/{_DASH}]?\d)(?![A-Za-z_])")
MONTH_NAME = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
          r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DATE = (rf"(?:\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}}"
         rf"|{MONTH_NAME}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
         rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH_NAME},?\s+\d{{4}})")
_DOB = re.compile(rf"(?i)\b(d\.?o\.?b\.?|date\s+of\s+birth|birth\s*(?:date|day)|born(?:\s+on)?)"
                  rf"(\s*(?:is|:|-)?\s*)({_DATE})")


def luhn_valid(digits: str) -> bool:
    """The card-number checksum (ISO/IEC 7812): one mistyped digit or a random run of digits fails it 9 times in 10."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def compile_case_patterns(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    """An agency's case-number shapes (NAVIBOT_REDACT_PATTERNS); a pattern that does not compile, or that matches
    empty text (it would redact between every two characters), is refused with a ValueError naming it."""
    compiled = []
    for number, pattern in enumerate(patterns, start=1):
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern {number} {pattern!r} is not a valid regular expression ({exc})") from None
        if regex.fullmatch(""):
            raise ValueError(f"pattern {number} {pattern!r} matches empty text")
        compiled.append(regex)
    return compiled


_case_patterns: list[re.Pattern[str]] = []


def use_case_patterns(patterns: Sequence[str]) -> None:
    """Set the case-number patterns every redaction applies from now on (at start-up, from the settings)."""
    global _case_patterns  # noqa: PLW0603 - one process-wide setting, set at start-up
    _case_patterns = compile_case_patterns(patterns)


def redact(text: str, public: str = "") -> str:
    """The text with personal data replaced by [case], [email], [dob], [a-number], [card], [ssn] and [phone]; a
    match that also appears in `public` (the source paragraphs an answer quotes) is public text and stays."""
    if not text:
        return text

    def kept(found: str) -> bool:
        return bool(public) and found in public

    text = _ZERO_WIDTH.sub("", text)
    for pattern in _case_patterns:
        text = pattern.sub(lambda m: m[0] if kept(m[0]) else "[case]", text)
    text = EMAIL.sub(lambda m: m[0] if kept(m[0]) else "[email]", text)
    text = _DOB.sub(lambda m: m[0] if kept(m[3]) else f"{m[1]}{m[2]}[dob]", text)
    text = _A_NUMBER.sub(lambda m: m[0] if kept(m[0]) else "[a-number]", text)
    text = _CARD.sub(lambda m: m[0] if kept(m[0]) or not luhn_valid(re.sub(r"\D", "", m[0])) else "[card]", text)
    text = _SSN.sub(lambda m: m[0] if kept(m[0]) else "[ssn]", text)
    return _PHONE.sub(lambda m: m[0] if kept(m[0]) else "[phone]", text)
