"""Every kind of card the Teams bot sends, checked for Adaptive Cards 1.5 by Microsoft's own Adaptive Cards library
(npm `adaptivecards`, run by tests/node/check_cards.js) and, when NAVIBOT_ADAPTIVE_CARD_SCHEMA names a copy of the
official JSON schema (schemas/1.5.0/adaptive-card.json of github.com/microsoft/AdaptiveCards, not published on
npm), against that schema too.

Needs Node.js and `npm ci --prefix tests/node` (the CI script runs it; 8 packages from the npm registry, node_modules
not committed); without them the test is skipped and says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from adapters.teams.cards import answer_card, notice_card
from adapters.teams.messages import AnswerParts, answer_variants
from bot.chat.chat_commands import HELP
from rag.cite.rail import Citation
from tests.adapters.teams.test_teams_limits import answer, regulation
from tests.adapters.teams.test_teams_markup import HEADING, PARAGRAPH, SUBHEADING, TITLE

NODE_DIR = Path(__file__).parents[2] / "node"
CHECKER = NODE_DIR / "check_cards.js"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the Adaptive Cards check needs it (see tests/node/package.json)")
    if not (NODE_DIR / "node_modules" / "adaptivecards").is_dir():
        pytest.skip("the npm package adaptivecards is not installed: run `npm ci --prefix tests/node` (.ci/run does)")
    return node


def check(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = subprocess.run([_node(), str(CHECKER)], input=json.dumps(cards), capture_output=True, text=True,
                          timeout=120, cwd=NODE_DIR, check=False)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def every_card() -> dict[str, dict[str, Any]]:
    """One card of each kind the bot sends: answers of every size and their smaller variants, a rated answer, a
    no-answer, a crafted document's card, command replies, help and an apology."""
    crafted = Citation(number=1, doc_id="evil", chunk_id="evil::0", sub_id="evil::0.0", title=TITLE,
                       heading_path=[HEADING, SUBHEADING], url="javascript:alert(1)", page=None, quote=PARAGRAPH)
    table_row = Citation(number=1, doc_id="7-cfr-273", chunk_id="c::0", sub_id="c::0.3", title=TITLE,
                         heading_path=[HEADING, SUBHEADING], url=None, page=None,
                         quote="| As a State agency, you must . . . | Unless . . . |\n|---|---|\n| (iii) For an IHE or "
                               "AE claim, limit the amount reduced to $10 | the household agrees. |")
    cards = {"short answer": answer_card("Yes **if** they work [1].\n(Offline note.)", regulation(1, 500), "a1",
                                         "concise", understood_as="Can students get SNAP?"),
             "rated answer": answer_card("Yes [1].", regulation(2, 900), "a1", "kids", feedback=False),
             "no-answer": answer_card("I couldn't find this.", [], "a2", "concise"),
             "crafted document": answer_card("Students can [1].", [crafted], "a3", None),
             "table row quoted": answer_card("As a State agency, you must (iii) limit it [1].", [table_row], "a4",
                                             None),
             "help": notice_card(HELP),
             "mood reply": notice_card("I don't know the mood '[x](https://evil.example)'.\n"
                                       "Change it with `mood <name>`."),
             "apology": notice_card("Sorry, something went wrong (trace id 0123456789ab).", attention=True)}
    for count in (5, 20, 60):
        for n, variant in enumerate(answer_variants(AnswerParts(**_parts(answer(regulation(count)))))):
            content = variant.attachments[0].content  # typed `object` by the SDK: a card is a JSON object
            assert isinstance(content, dict)
            cards[f"{count} citations, variant {n + 1}"] = content
    return cards


def _parts(reply: Any) -> dict[str, Any]:
    return {"text": reply.text, "citations": list(reply.citations), "answer_id": reply.answer_id, "mood": reply.mood}


def test_every_card_is_a_valid_adaptive_card_1_5() -> None:
    cards = every_card()
    results = check(list(cards.values()))
    problems = {name: r["problems"] for name, r in zip(cards, results, strict=True) if r["problems"]}
    assert not problems, problems
    if os.environ.get("NAVIBOT_ADAPTIVE_CARD_SCHEMA"):
        assert all(r["schema"] for r in results), "checked against the official JSON schema too"


def test_the_checker_reports_a_broken_card() -> None:
    broken = {"type": "AdaptiveCard", "version": "1.5",
              "body": [{"type": "TextBlock", "text": "x", "size": "Huge"}, {"type": "Carousel3D"},
                       {"type": "ActionSet", "actions": [{"type": "Action.Teleport"}]}]}
    (result,) = check([broken])
    assert any('"Huge"' in p for p in result["problems"]) and any("Carousel3D" in p for p in result["problems"])
