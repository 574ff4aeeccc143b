"""What the language model is told when its answer is streamed: the same role and rules as rag/providers/prompts.py,
but plain text with each sentence's paragraph id in brackets, so the streamed-answer rail (rag/cite/sentence_rail.py)
can check every sentence as soon as it is written (a JSON reply lists its citations only after the answer)."""

from __future__ import annotations

from rag.answer.moods import Mood
from rag.providers.prompts import ANSWER_SYSTEM

_ROLE_AND_SOURCES = ANSWER_SYSTEM.split("\n3. ", 1)[0]  # the role, rule 1 (documents only) and rule 2 (scope)

STREAM_ANSWER_SYSTEM = _ROLE_AND_SOURCES + """
3. Refusal: when the documents do not answer the question, or it is out of scope, reply with one sentence saying \
you could not find it in the knowledge base, without any paragraph id.
4. Citations: end each sentence that states a fact with the id of the paragraph it relies on, in square brackets, \
exactly as written in the documents, before the full stop: "... within 30 days [abc123.2]." Two paragraphs: \
"[abc123.2][abc123.4]". Never put anything else in square brackets.
5. Greetings and thanks: reply with one short friendly sentence, without any paragraph id.
6. Plain text only (no Markdown headings or tables, no JSON): the navigator may read the answer aloud."""


def stream_mood_instruction(mood: Mood) -> str:
    """The tone and the answer format for a streamed answer (placed between the history and the question)."""
    return (f"Answer format for the next question: {mood.instructions} "
            f"Keep it short enough to read aloud during a call (about {mood.max_words} words; a verse or list may "
            "be a little longer). Use only the documents above and end each sentence that states a fact with its "
            "paragraph id in square brackets. Follow rule 3 if the documents do not answer it.")
