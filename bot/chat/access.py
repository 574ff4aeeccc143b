"""Access control: which documents a chat may see.

Documents carry access groups (`navibot ingest --groups`, default `all`). `NAVIBOT_ACCESS_GROUPS` maps a Slack
channel (`slack:<channel id>`) or a Microsoft Teams team (`teams:<team id>`) to the groups it may see, and
retrieval is filtered by them, so a restricted document never reaches a chat without access: not as a quote, not
as context for the model. Every chat sees `all`; a chat with no entry sees only `all`. The terminal commands
(`navibot ask`, `chat`) run on the operator's own machine, with access to the store itself, and see everything.
"""

from __future__ import annotations

import re

from bot.port import Turn
from rag.search.store import EVERYONE

PLATFORMS = ("slack", "teams")
_GROUP = re.compile(r"^[\w.@:-]{1,100}$")
# What an id looks like, to warn about a key that can never match a chat (it fails closed: that chat sees only `all`).
_ID_SHAPES = {
    "slack": (re.compile(r"^[CGD][A-Z0-9]{8,}$"),
              "a Slack channel id looks like C07ABCDEF12 (channel name > About > Channel ID), not a channel name"),
    "teams": (re.compile(r"^19:\S+@thread\.(tacv2|skype)$"),
              "a Teams team id looks like 19:...@thread.tacv2 (Get link to team, after /team/), not the groupId"),
}


class AccessError(ValueError):
    """NAVIBOT_ACCESS_GROUPS is malformed; the message names the entry."""


def check_groups(groups: list[str], where: str) -> list[str]:
    """Group names as NAVIBOT_ACCESS_GROUPS accepts them; others raise AccessError naming `where`."""
    bad = [g for g in groups if not _GROUP.match(g)]
    if bad:
        raise AccessError(f"{where}: invalid group names {bad} (letters, digits, and . _ - @ : only)")
    return groups


class AccessMap:
    def __init__(self, mapping: dict[str, list[str]]) -> None:
        self.grants: dict[str, list[str]] = {}
        for key, groups in mapping.items():
            platform, _, space = key.partition(":")
            if platform not in PLATFORMS or not space.strip():
                raise AccessError(f"NAVIBOT_ACCESS_GROUPS: {key!r} should be slack:<channel id> or "
                                  "teams:<team id>")
            check_groups(groups, f"NAVIBOT_ACCESS_GROUPS: {key!r}")
            self.grants[f"{platform}:{space.strip()}"] = list(dict.fromkeys([EVERYONE, *groups]))

    def check(self) -> list[str]:
        """A warning for each key that cannot be a chat id (a typo would otherwise go unnoticed)."""
        warnings = []
        for key in self.grants:
            platform, _, space = key.partition(":")
            shape, hint = _ID_SHAPES[platform]
            if not shape.match(space):
                warnings.append(f"NAVIBOT_ACCESS_GROUPS: {key!r} does not look like an id ({hint}); no chat will "
                                "match it, so that chat sees only `all`")
        return warnings

    def describe(self) -> str:
        """One line for the server's start-up log: what each mapped chat may see."""
        if not self.grants:
            return "access groups: no chat is mapped (NAVIBOT_ACCESS_GROUPS): every chat sees only `all`"
        return ("access groups: " + "; ".join(f"{key} -> {', '.join(groups)}" for key, groups in self.grants.items())
                + "; any other chat -> all")

    def groups_for(self, turn: Turn) -> list[str] | None:
        """The groups a turn's chat may see; None (no limit) for the terminal."""
        if turn.platform not in PLATFORMS:
            return None
        space = turn.team if turn.platform == "teams" else turn.channel
        return self.grants.get(f"{turn.platform}:{space}", [EVERYONE]) if space else [EVERYONE]
