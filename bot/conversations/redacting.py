"""The conversation store with PII redacted (the patterns are in rag/redaction.py, which the engine also applies
before any call to a hosted model), so a caller's details read out during a call never reach the store.

Quoted source paragraphs (citations) are public text and are kept whole, and so is what a stored answer repeats
from them (a hotline number such as 1-800-772-1213): the answers are the record of what navigators were told.
History turns carry no quotes, so their copy of the answer is redacted in full (it only gives the next question
its context).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime

from bot.conversations.store import AnswerRecord, ConversationStore, FeedbackRecord, HistoryTurn
from rag.redaction import redact

__all__ = ["RedactingConversationStore", "redact"]


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
