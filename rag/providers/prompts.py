"""What the language model is told: the assistant's role and rules, the retrieved sections, the mood.

Kept apart from the client code so that the wording can be reviewed (and tuned) on its own."""

from __future__ import annotations

from collections.abc import Sequence

from rag.models import SearchHit
from rag.moods import Mood
from rag.rewrite import Exchange

ANSWER_SYSTEM = """\
You are Navibot. You help benefits navigators (caseworkers, call-center staff, community health workers) who are \
on the phone with a client and need a short, correct answer about public benefits programs (such as SNAP, \
Medicaid, WIC, LIHEAP, unemployment insurance, tax credits).

Rules:
1. Use ONLY the documents given in this conversation. Never add facts from your own knowledge and never guess.
2. Scope: benefits rules, eligibility, how to apply and related procedures. Anything else is out of scope.
3. Refusal: when the documents do not answer the question, or it is out of scope, set "answer" to one sentence \
saying you could not find it in the knowledge base, and leave "citations" empty.
4. Citations: list in "citations" the ids of the paragraphs your answer relies on, exactly as written in the \
documents (e.g. "abc123.2"). In "answer", end each sentence that states a fact with [n], where n is the \
1-based position of its paragraph id in "citations".
5. Greetings and thanks: reply with one short friendly sentence and leave "citations" empty.
6. Plain text only (no Markdown headings or tables): the navigator may read the answer aloud.
Reply with JSON only: {"answer": "...", "citations": ["..."]}."""

ANSWER_SCHEMA: dict[str, object] = {
    "type": "OBJECT",
    "properties": {
        "answer": {"type": "STRING", "description": "The answer, with [n] citation markers."},
        "citations": {"type": "ARRAY", "items": {"type": "STRING"},
                      "description": "Paragraph ids the answer relies on; [n] points to the n-th."},
    },
    "required": ["answer", "citations"],
    "propertyOrdering": ["answer", "citations"],
}

REWRITE_SYSTEM = """\
You rewrite the latest question of a conversation between a benefits navigator and an assistant into ONE \
standalone question that can be understood without the conversation. Keep the navigator's words and every \
detail (program names, ages, hours, places, amounts); replace pronouns and elliptical phrases ("what about \
part-time?", "and WIC?") with what they refer to. If the latest question already stands alone or starts a new \
topic, return it unchanged. Never answer it. Reply with JSON only: {"question": "..."}."""

REWRITE_SCHEMA: dict[str, object] = {
    "type": "OBJECT",
    "properties": {"question": {"type": "STRING"}},
    "required": ["question"],
}

HISTORY_ANSWER_WORDS = 80  # earlier answers are context, not something to re-read in full


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


def _attr(value: str) -> str:
    """An attribute value that cannot close its quotes (titles may contain double quotes)."""
    return value.replace('"', "'")


def documents_block(hits: Sequence[SearchHit]) -> str:
    """The retrieved sections with their paragraph ids, the most relevant LAST (models attend most to the ends
    of a long context; the question comes right after it)."""
    blocks = []
    for rank, hit in reversed(list(enumerate(hits, start=1))):
        chunk = hit.chunk
        header = f'<document rank="{rank}" title="{_attr(chunk.title)}" section="{_attr(chunk.heading_text)}"'
        header += f' url="{_attr(chunk.url)}">' if chunk.url else ">"
        paragraphs = []
        for sub in chunk.subchunks:
            under = " > ".join(sub.heading_path[len(chunk.heading_path):])
            paragraphs.append(f'<paragraph id="{_attr(sub.sub_id)}"' + (f' heading="{_attr(under)}"' if under else "")
                              + f">\n{sub.text}\n</paragraph>")
        blocks.append(header + "\n" + "\n".join(paragraphs) + "\n</document>")
    return ("Documents (the most relevant is last):\n\n" + "\n\n".join(blocks))


def mood_instruction(mood: Mood) -> str:
    """The second instruction, placed between the history and the question: the tone and the answer format."""
    return (f"Answer format for the next question: {mood.instructions} "
            f"Keep it short enough to read aloud during a call (about {mood.max_words} words; a verse or list may "
            "be a little longer). Use only the documents above, put a [n] marker after each fact, and list the "
            "paragraph ids in \"citations\". Follow rule 3 if the documents do not answer it.")


def history_turns(history: Sequence[Exchange]) -> list[tuple[str, str]]:
    """(role, text) pairs for the earlier turns: the question as asked, the answer as given (clipped)."""
    turns: list[tuple[str, str]] = []
    for exchange in history:
        if exchange.question.strip():
            turns.append(("user", exchange.question.strip()))
            if exchange.answer.strip():
                turns.append(("model", _clip(exchange.answer.strip(), HISTORY_ANSWER_WORDS)))
    return turns


def rewrite_prompt(question: str, history: Sequence[Exchange]) -> str:
    lines = ["Conversation so far:"]
    for exchange in history:
        lines.append(f"Navigator: {exchange.question.strip()}")
        if exchange.answer.strip():
            lines.append(f"Assistant: {_clip(exchange.answer.strip(), HISTORY_ANSWER_WORDS)}")
    lines += ["", f"Latest question: {question.strip()}"]
    return "\n".join(lines)
