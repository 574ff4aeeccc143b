"""`navibot ask` and `navibot chat`: the bot in a terminal, on the same turn handler as Slack and Teams."""

from __future__ import annotations

import contextlib
import json
import sys
import textwrap
import uuid
from collections.abc import Callable
from typing import TextIO

from bot.port import FeedbackError, Reply, ReplyKind, Turn
from bot.wiring.runtime import Bot

WIDTH = 100
CHAT_HELP = "After an answer: `+` helpful, `-` not helpful (optionally `- reason`). `quit` or Ctrl-D to leave."


class StreamedLines:
    """`navibot chat` shows a language model's answer sentence by verified sentence, as Slack and Teams do."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.streamed = False

    def status(self, words: str) -> None:
        """The stages are not printed: in a terminal the answer follows within seconds."""

    def sentence(self, text: str) -> None:
        print(("" if self.streamed else "bot> ") + text, end="", file=self.out, flush=True)
        self.streamed = True


def render(reply: Reply, asked: str | None = None, streamed: bool = False) -> str:
    """The answer, then each citation as a numbered quote with its title, heading path and link. When a follow-up
    was rewritten, how it was understood is shown too, so a misunderstanding is seen before it is read aloud.
    `streamed`: the answer's text is already on screen; only what follows it."""
    lines = [] if streamed else [textwrap.fill(para, WIDTH) if para.strip() else "" for para in reply.text.split("\n")]
    understood = reply.standalone_question
    if asked is not None and understood and understood.strip() != asked.strip():
        lines.append(textwrap.fill(f"(understood as: {understood})", WIDTH))
    if reply.kind is ReplyKind.ANSWER:
        lines.append("")
        lines.append(f"Sources ({len(reply.citations)}) · mood: {reply.mood}")
        for c in reply.citations:
            where = " > ".join([c.title, *c.heading_path])
            lines.append(f"[{c.number}] {where}" + (f" (page {c.page})" if c.page else ""))
            if c.url:
                lines.append(f"    {c.url}")
            for para in c.quote.splitlines():
                lines.append(textwrap.fill(para, WIDTH, initial_indent="    > ", subsequent_indent="    > "))
    return "\n".join(lines)


def cli_turn(thread: str, text: str) -> Turn:
    return Turn(platform="cli", workspace="local", channel="terminal", thread=thread, user="local", text=text)


def ask(bot: Bot, question: str, mood: str | None, as_json: bool, out: TextIO | None = None) -> int:
    """One question, its own thread (no history); exit 0 with an answer, 1 with a no-answer or an error."""
    out = sys.stdout if out is None else out  # looked up per call: a redirected stdout must see the answer
    reply = bot.handler.handle(cli_turn(f"ask-{uuid.uuid4().hex}", question), mood_override=mood)
    # asked: a question read otherwise than typed (a typo corrected) shows "(understood as …)", as in a chat
    print(json.dumps(reply.as_dict(), ensure_ascii=False, indent=2) if as_json else render(reply, asked=question),
          file=out)
    return 0 if reply.kind in (ReplyKind.ANSWER, ReplyKind.COMMAND) else 1


def chat(bot: Bot, read: Callable[[str], str] = input, out: TextIO | None = None) -> int:
    """An interactive session: one thread, history, commands, and feedback on the last answer."""
    out = sys.stdout if out is None else out
    if read is input and sys.stdin.isatty():
        with contextlib.suppress(ImportError):  # not on every platform (Windows)
            import readline  # noqa: F401 - importing it gives input() line editing and arrow-key history
    thread = f"chat-{uuid.uuid4().hex}"
    print("Navibot chat. Ask a benefits question; `help` for commands. " + CHAT_HELP, file=out)
    last_answer: str | None = None
    while True:
        try:
            text = read("\nyou> ").strip()
        except EOFError:
            print(file=out)
            return 0
        except KeyboardInterrupt:
            print("\nbye", file=out)
            return 0
        if text.lower() in {"quit", "exit", ":q"}:
            return 0
        if text[:1] in {"+", "-"} and (len(text) == 1 or text[1] == " "):
            if last_answer is None:
                print("bot> There is no answer to rate yet.", file=out)
                continue
            try:
                bot.handler.record_feedback(last_answer, "local", text[0] == "+", text[1:].strip() or None)
                print("bot> Thanks, feedback saved.", file=out)
            except FeedbackError as exc:
                print(f"bot> {exc}", file=out)
            continue
        stream = StreamedLines(out)
        reply = bot.handler.handle(cli_turn(thread, text), progress=stream)
        if reply.answer_id:
            last_answer = reply.answer_id
        if stream.streamed:
            print(render(reply, asked=text, streamed=True), file=out)
        else:
            print("bot> " + render(reply, asked=text), file=out)
