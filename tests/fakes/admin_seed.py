"""A seeded conversation store for the admin page's tests, screenshots and benchmark: answers and no-answers on
Slack and Teams over several days, with 👍 and 👎 (one with a reason), citing the demo knowledge base."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.conversations.store import AnswerRecord, ConversationStore
from rag.cite.rail import Citation

# The last row (day 4, 09:09) falls yesterday: always in the past, whatever the hour the tests run (with days=4,
# a run before 09:09 UTC seeded an answer in the future, and the admin snapshot, which reads what was saved
# since its newest answer, then missed one saved "now").
DAY0 = datetime.now(UTC).replace(hour=9, minute=0, second=0, microsecond=0) - timedelta(days=5)


def quote(doc: str, title: str) -> Citation:
    return Citation(1, f"demo_kb/{doc}", f"demo_kb/{doc}::0", f"demo_kb/{doc}::0.0", title, ["Eligibility"],
                    None, None, f"The rules of {title} in one paragraph.")


SNAP = quote("snap-students", "SNAP for college students")
WIC = quote("wic", "WIC for women, infants and children")
# (day, platform, channel, kind, question, latency ms, rating: None / True / (False, reason))
ROWS: list[tuple[int, str, str, str, str, float, object]] = [
    (0, "slack", "C1", "answer", "Can college students get SNAP?", 800.0, True),
    (0, "slack", "C1", "answer", "Does a student working 20 hours a week qualify for SNAP?", 900.0, True),
    (0, "slack", "C2", "no_answer", "What is the phone number of the LIHEAP office in Springfield?", 400.0, None),
    (1, "teams", "19:team@thread.tacv2", "answer", "Who can get WIC?", 1200.0, (False, "It left out the age limit")),
    (1, "slack", "C2", "no_answer", "LIHEAP office phone number in Springfield", 450.0, None),
    (2, "slack", "C1", "no_answer", "How do I appeal a denied unemployment claim?", 500.0, None),
    (2, "teams", "19:team@thread.tacv2", "no_answer", "Steps to appeal an unemployment benefits denial", 520.0, None),
    (3, "slack", "C1", "answer", "Is WIC available for a 3 year old?", 700.0, True),
    (3, "slack", "C2", "no_answer", "Which phone line does the LIHEAP office in Springfield use?", 430.0, None),
    (4, "teams", "19:team@thread.tacv2", "answer", "Can a student with a child under 6 get SNAP?", 1000.0, True),
]


def seed(store: ConversationStore, rows: list[tuple[int, str, str, str, str, float, object]] = ROWS) -> int:
    for n, (day, platform, channel, kind, question, latency, rating) in enumerate(rows):
        created = (DAY0 + timedelta(days=day, minutes=n)).isoformat(timespec="milliseconds")
        citations = ([WIC] if "WIC" in question else [SNAP]) if kind == "answer" else []
        answer = "Yes, with conditions [1]." if kind == "answer" else "I couldn't find this in the knowledge base."
        store.save_answer(AnswerRecord(f"a{n}", f"{platform}|T1|{channel}|t{n}", platform, f"U{n}", question,
                                       question, answer, kind, "concise", citations, created, latency))
        if rating is True:
            store.record_feedback(f"a{n}", f"U{n}", True, None)
        elif isinstance(rating, tuple):
            store.record_feedback(f"a{n}", f"U{n}", False, rating[1])
    return len(rows)
