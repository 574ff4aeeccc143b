"""One INFO line per turn and per feedback click on the logger `navibot.turns`: what happened, how long each
stage took, which model stages fell back, with the turn's trace id (the one an error reply shows the user).

In JSON logs the details are structured fields; in text logs the message alone reads as a compact line. The
question is logged only with NAVIBOT_LOG_QUESTIONS=true, and then redacted unless NAVIBOT_REDACT_PII=false.
Feedback reasons are never logged (they are in the conversation store, redacted). No settings value is logged,
so no key can be.
"""

from __future__ import annotations

import json
import logging

from bot.config.settings import Settings
from bot.conversations.redacting import redact
from bot.observability.observers import TurnEvent

log = logging.getLogger("navibot.turns")
# A logged question is cut after this many characters: an over-long message (refused as too_long) would otherwise
# be a line of tens of kB, which log shippers split (Docker's json-file driver at 16 kB), breaking the JSON.
LOGGED_QUESTION_CHARS = 2000


class TurnLog:
    """An Observer (bot/observability/observers.py) writing the per-turn log line."""

    def __init__(self, settings: Settings) -> None:
        self.log_questions = settings.log_questions
        self.redact_pii = settings.redact_pii

    def turn(self, event: TurnEvent) -> None:
        if not log.isEnabledFor(logging.INFO):
            return  # the CLI's default level: skip building the line
        timings = {stage: round(ms, 1) for stage, ms in event.timings_ms.items()}
        fields: dict[str, object] = {
            "event": "turn", "trace_id": event.trace_id, "platform": event.platform, "kind": event.kind,
            "timings_ms": timings, "fallbacks": list(event.fallbacks), "citations": event.citations,
            "answer_id": event.answer_id, "mood": event.mood, "groups": list(event.groups), "error": event.error,
        }
        parts = [f"turn {event.trace_id} {event.platform} {event.kind}"]
        if event.error:
            parts.append(f"error={event.error}")
        if event.kind in ("answer", "no_answer"):
            parts.append(f"citations={event.citations}")
        if event.mood:
            parts.append(f"mood={event.mood}")
        parts.append(" ".join(f"{stage}={ms:.0f}ms" for stage, ms in timings.items()))
        if event.fallbacks:
            parts.append(f"fallbacks={'; '.join(event.fallbacks)}")
        if event.groups:
            parts.append(f"groups={','.join(event.groups)}")
        if event.answer_id:
            parts.append(f"answer={event.answer_id}")
        if self.log_questions:
            question = event.question
            if len(question) > LOGGED_QUESTION_CHARS:
                question = f"{question[:LOGGED_QUESTION_CHARS]}… [{len(question) - LOGGED_QUESTION_CHARS:,} more]"
            question = redact(question) if self.redact_pii else question
            fields["question"] = question
            parts.append(f"question={json.dumps(question, ensure_ascii=False)}")
        log.info(" ".join(p for p in parts if p), extra=fields)

    def feedback(self, platform: str, helpful: bool) -> None:
        rating = "up" if helpful else "down"
        log.info("feedback %s %s", platform, rating, extra={"event": "feedback", "platform": platform,
                                                           "rating": rating})

    def error(self, kind: str, platform: str) -> None:
        """Nothing to add: the adapter that reports a platform-side failure logs it itself, with its trace id."""
