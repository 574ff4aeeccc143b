"""Commands typed as the message (after the mention) or given to the Slack slash command / Teams command list."""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMAND = re.compile(r"^\s*[/!]?(reset|help|mood)(?:\s+(\S+))?\s*$", re.IGNORECASE)
_RESET_WORDS = {"", "history", "conversation", "thread"}

HELP = """Ask me a benefits question in plain words, e.g. "Can college students get SNAP?"
I answer in a few sentences and quote the source paragraphs, with links, so you can check them.
Follow-up questions in the same thread use the conversation so far.
Commands:
• `reset` — forget this conversation's history
• `mood` — list the answer tones and show yours; `mood <name>` to pick one (e.g. `mood elderly`)
• `help` — this message"""


@dataclass(frozen=True, slots=True)
class Command:
    name: str  # "reset", "help" or "mood"
    argument: str | None = None


def parse_command(text: str) -> Command | None:
    """A whole message that is a command; questions that merely start with such a word are not."""
    match = _COMMAND.match(text)
    if not match:
        return None
    name, argument = match.group(1).lower(), match.group(2)
    if name == "help" and argument:
        return None  # "help students" is a (terse) question, not the help command
    if name == "reset" and (argument or "").lower() not in _RESET_WORDS:
        return None
    return Command(name, argument if name == "mood" else None)
