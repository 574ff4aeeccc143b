"""Access control: which documents a chat may see.

Documents carry access groups (`navibot ingest --groups`, default `all`). `NAVIBOT_ACCESS_GROUPS` maps a Slack
channel (`slack:<channel id>`) or a Microsoft Teams team (`teams:<team id>`) to the groups it may see, and
retrieval is filtered by them, so a restricted document never reaches a chat without access: not as a quote, not
as context for the model. Every chat sees `all`; a chat with no entry sees only `all`. The terminal commands
(`navibot ask`, `chat`) run on the operator's own machine, with access to the store itself, and see everything.
"""

from __future__ import annotations

import re

from bot.turns import Turn

EVERYONE = "all"
PLATFORMS = ("slack", "teams")
_GROUP = re.compile(r"^[\w.@:-]{1,100}$")


class AccessError(ValueError):
    """NAVIBOT_ACCESS_GROUPS is malformed; the message names the entry."""


class AccessMap:
    def __init__(self, mapping: dict[str, list[str]]) -> None:
        self.grants: dict[str, list[str]] = {}
        for key, groups in mapping.items():
            platform, _, space = key.partition(":")
            if platform not in PLATFORMS or not space.strip():
                raise AccessError(f"NAVIBOT_ACCESS_GROUPS: {key!r} should be slack:<channel id> or "
                                  "teams:<team id>")
            bad = [g for g in groups if not _GROUP.match(g)]
            if bad:
                raise AccessError(f"NAVIBOT_ACCESS_GROUPS: {key!r} has invalid group names {bad} (letters, digits, "
                                  "and . _ - @ : only)")
            self.grants[f"{platform}:{space.strip()}"] = list(dict.fromkeys([EVERYONE, *groups]))

    def groups_for(self, turn: Turn) -> list[str] | None:
        """The groups a turn's chat may see; None (no limit) for the terminal."""
        if turn.platform not in PLATFORMS:
            return None
        space = turn.team if turn.platform == "teams" else turn.channel
        return self.grants.get(f"{turn.platform}:{space}", [EVERYONE]) if space else [EVERYONE]
