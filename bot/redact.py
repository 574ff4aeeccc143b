"""PII redaction: SSN-like numbers, phone numbers, e-mail addresses and dates of birth are replaced before
anything is stored, so a caller's details read out during a call never reach the conversation store.

Deliberately narrow: policy text is full of numbers ("7 CFR 273.5", "$1,234", "20 hours", "January 1, 2025",
"130 percent"), so only shapes that are personal data are replaced. A date counts as a date of birth only right
after "DOB", "date of birth", "birthday" or "born". Quoted source paragraphs (citations) are public text and are
kept whole, and so is what a stored answer repeats from them (a hotline number such as 1-800-772-1213): the
answers are the record of what navigators were told. History turns carry no quotes, so their copy of the answer
is redacted in full (it only gives the next question its context).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime

from bot.conversations import (
    AnswerRecord,
    ConversationStore,
    FeedbackRecord,
    HistoryTurn,
)

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
# 123-45-6789 / 123 45 6789 (even glued to a label: "SSN123-45-6789") / 123456789 (nine digits standing alone);
# not part of a longer number, amount or id.
_SSN = re.compile(r"(?:(?<![\d$.,/-])\d{3}([- ])\d{2}\1\d{4}|(?<![\w$.,/-])\d{9})(?![\w.,/-]?\d)(?![A-Za-z_])")
# US numbers: (555) 123-4567, 555-123-4567, 555.123.4567, +1 555 123 4567, 1-800-221-5689, 5551234567;
# international: + country code and 7 to 14 more digits; an extension (x12, ext. 12) goes with the number.
_PHONE = re.compile(
    r"(?<![\w$.,/-])(?:(?:\+?1[-. ]?)?(?:\(\d{3}\)\s?|\d{3}[-. ])\d{3}[-. ]\d{4}|(?:\+?1)?[2-9]\d{9}"
    r"|\+\d{1,3}(?:[-. ]?\d){7,14})(?:\s?(?:x|ext\.?)\s?\d{1,6})?(?![\w.,/-]?\d)(?![A-Za-z_])")
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
          r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DATE = (rf"(?:\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
         rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+\d{{4}})")
_DOB = re.compile(rf"(?i)\b(d\.?o\.?b\.?|date\s+of\s+birth|birth\s*(?:date|day)|born(?:\s+on)?)"
                  rf"(\s*(?:is|:|-)?\s*)({_DATE})")


def redact(text: str, public: str = "") -> str:
    """The text with personal data replaced by [email], [ssn], [phone] and [dob]; a match that also appears in
    `public` (the source paragraphs an answer quotes) is public text and stays."""
    if not text:
        return text

    def kept(found: str) -> bool:
        return bool(public) and found in public

    text = _EMAIL.sub(lambda m: m[0] if kept(m[0]) else "[email]", text)
    text = _DOB.sub(lambda m: m[0] if kept(m[3]) else f"{m[1]}{m[2]}[dob]", text)
    text = _SSN.sub(lambda m: m[0] if kept(m[0]) else "[ssn]", text)
    return _PHONE.sub(lambda m: m[0] if kept(m[0]) else "[phone]", text)


class RedactingConversationStore:
    """Wraps any ConversationStore: questions, rewritten questions, answers and feedback reasons are redacted
    on the way in (and so everywhere they are read back). Keys, ids and citations are stored as they are, and an
    answer keeps what it repeats from its citations."""

    def __init__(self, inner: ConversationStore) -> None:
        self.inner = inner

    def history(self, conversation_key: str, limit: int) -> list[HistoryTurn]:
        return self.inner.history(conversation_key, limit)

    def append_turn(self, conversation_key: str, turn: HistoryTurn, keep: int) -> None:
        self.inner.append_turn(conversation_key, HistoryTurn(
            redact(turn.question), redact(turn.standalone), redact(turn.answer), turn.cited_ids), keep)

    def clear_history(self, conversation_key: str) -> int:
        return self.inner.clear_history(conversation_key)

    def get_mood(self, preference_key: str) -> str | None:
        return self.inner.get_mood(preference_key)

    def set_mood(self, preference_key: str, mood: str) -> None:
        self.inner.set_mood(preference_key, mood)

    def claim_event(self, platform: str, event_id: str) -> bool:
        return self.inner.claim_event(platform, event_id)

    def complete_event(self, platform: str, event_id: str) -> None:
        self.inner.complete_event(platform, event_id)

    def release_event(self, platform: str, event_id: str) -> None:
        self.inner.release_event(platform, event_id)

    def save_answer(self, record: AnswerRecord) -> None:
        self.inner.save_answer(replace(
            record, question=redact(record.question), standalone=redact(record.standalone),
            answer=redact(record.answer, "\n".join(c.quote for c in record.citations))))

    def get_answer(self, answer_id: str) -> AnswerRecord | None:
        return self.inner.get_answer(answer_id)

    def record_feedback(self, answer_id: str, user: str, helpful: bool, reason: str | None) -> FeedbackRecord:
        return self.inner.record_feedback(answer_id, user, helpful, redact(reason) if reason else reason)

    def answers(self, since: datetime | None = None) -> Iterator[AnswerRecord]:
        return self.inner.answers(since)

    def feedback(self, answer_id: str | None = None, since: datetime | None = None) -> list[FeedbackRecord]:
        return self.inner.feedback(answer_id, since)

    def ratings(self, since: datetime | None = None) -> Iterator[FeedbackRecord]:
        return self.inner.ratings(since)

    def close(self) -> None:
        self.inner.close()
