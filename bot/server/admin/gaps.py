"""Knowledge gaps: the questions that got the no-answer or a 👎, grouped by meaning into topics.

The questions are embedded with the bot's own embedder (the one its knowledge store was built with), then grouped
in one pass: each question joins the topic whose centre it is closest to, if that is at least SIMILARITY, else it
starts a topic. One pass is linear in questions times topics (10,000 questions in well under 10 s on a laptop,
benchmarks/bench_admin.py), where pairwise clustering would hold a 10,000 x 10,000 matrix. Topics are listed
largest first with a few example questions (those nearest the centre) and the documents nearest the centre, so a
content owner sees what to write or fix.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from bot.conversations.store import ConversationStore
from bot.observability.usage_report import BOM, defuse
from bot.server.admin.overview import channel_of
from bot.server.admin.period import Period
from rag.search.embedding import Embedder
from rag.search.store import Filters, KnowledgeStore

# Cosine to a topic's centre. WordLlama scores rewordings of one question 0.4-0.95 and unrelated questions < 0.2;
# questions that share most words but ask about another program ("apply for SNAP" / "apply for WIC") ~0.4-0.6.
# At 0.35 those merged into a few huge topics; at 0.75 rewordings split. 0.5 keeps the seeded rewordings together
# (tests/bot/server/admin) and a program's questions apart from another's in most cases.
SIMILARITY = 0.5
EXAMPLES = 5
CLOSEST_DOCUMENTS = 3
EMBED_BATCH = 1000
CSV_FIELDS = ("topic", "questions", "no_answer", "thumbs_down", "examples", "closest_documents")


@dataclass(frozen=True, slots=True)
class GapQuestion:
    answer_id: str
    question: str
    created: str
    why: str  # "no answer" or "👎"
    channel: str


@dataclass(slots=True)
class Topic:
    number: int
    questions: list[GapQuestion]
    examples: list[str]
    centre: np.ndarray
    documents: list[tuple[str, str, str | None]] = field(default_factory=list)  # (doc_id, title, url)

    @property
    def title(self) -> str:
        return self.examples[0] if self.examples else ""

    @property
    def no_answer(self) -> int:
        return sum(q.why == "no answer" for q in self.questions)

    @property
    def thumbs_down(self) -> int:
        return len(self.questions) - self.no_answer


def gap_questions(store: ConversationStore, period: Period) -> list[GapQuestion]:
    """No-answers asked in the period and answers it rated 👎, once each; questions blanked by the retention or a
    `reset` are left out (there is nothing to group)."""
    found: dict[str, GapQuestion] = {}
    asked: dict[str, tuple[str, str, str]] = {}
    for record in store.answers(period.since):
        if not period.includes(record.created) or not record.question.strip():
            continue
        asked[record.answer_id] = (record.question, record.created, channel_of(record))
        if record.kind != "answer":
            found[record.answer_id] = GapQuestion(record.answer_id, record.question, record.created, "no answer",
                                                  channel_of(record))
    for rating in store.ratings(period.since):
        if not rating.helpful and rating.answer_id in asked and rating.answer_id not in found:
            question, created, channel = asked[rating.answer_id]
            found[rating.answer_id] = GapQuestion(rating.answer_id, question, created, "👎", channel)
    return list(found.values())


def group_by_meaning(questions: list[GapQuestion], embedder: Embedder,
                     similarity: float = SIMILARITY) -> list[Topic]:
    if not questions:
        return []
    texts = [q.question for q in questions]
    vectors = np.vstack([embedder.embed_queries(texts[i:i + EMBED_BATCH])
                         for i in range(0, len(texts), EMBED_BATCH)]).astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)
    sums = np.zeros_like(vectors)  # room for one topic per question; only the first `count` rows are used
    centres = np.zeros_like(vectors)
    members: list[list[int]] = []
    for i, vector in enumerate(vectors):
        count = len(members)
        best = -1
        if count:
            scores = centres[:count] @ vector
            best = int(np.argmax(scores))
            if scores[best] < similarity:
                best = -1
        if best < 0:
            best = count
            members.append([])
        members[best].append(i)
        sums[best] += vector
        centres[best] = sums[best] / (np.linalg.norm(sums[best]) or 1.0)
    topics = []
    for index, ids in enumerate(members):
        centre = centres[index]
        nearest = sorted(ids, key=lambda j: -float(vectors[j] @ centre))
        examples: list[str] = []
        for j in nearest:
            if texts[j] not in examples:
                examples.append(texts[j])
            if len(examples) == EXAMPLES:
                break
        topics.append(Topic(0, [questions[j] for j in nearest], examples, centre.copy()))
    topics.sort(key=lambda t: (-len(t.questions), t.title))
    for number, topic in enumerate(topics, 1):
        topic.number = number
    return topics


def add_closest_documents(topics: Iterable[Topic], store: KnowledgeStore) -> None:
    """The documents nearest each topic's centre (by their sections' vectors): where the answer may belong, or the
    page that should have held it."""
    for topic in topics:
        if topic.documents:
            continue
        hits = store.vector_search(topic.centre, CLOSEST_DOCUMENTS * 4, Filters.of())
        seen: set[str] = set()
        for chunk in store.get_chunks([chunk_id for chunk_id, _ in hits]):
            if chunk.doc_id not in seen:
                seen.add(chunk.doc_id)
                topic.documents.append((chunk.doc_id, chunk.title, chunk.url))
            if len(seen) == CLOSEST_DOCUMENTS:
                break


def write_topics_csv(topics: list[Topic], out: TextIO) -> int:
    """One row per topic, largest first, in the form of `navibot feedback export`'s CSV (a byte order mark for
    Excel; cells a spreadsheet would run as formulas defused)."""
    out.write(BOM)
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_FIELDS)
    for topic in topics:
        documents = " | ".join(f"{title} — {url}" if url else title for _, title, url in topic.documents)
        cells = [str(topic.number), str(len(topic.questions)), str(topic.no_answer), str(topic.thumbs_down),
                 " | ".join(topic.examples), documents]
        writer.writerow([defuse(cell) for cell in cells])
    return len(topics)
