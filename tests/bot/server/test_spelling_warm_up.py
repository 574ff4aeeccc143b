"""The search's spelling lexicon is built while the server starts, not by the first navigator's question."""

from __future__ import annotations

import asyncio

from adapters.slack.settings import SlackSettings
from adapters.teams.settings import TeamsSettings
from bot.server.app import Server, build_server_app
from bot.wiring.runtime import Bot


def test_the_spelling_lexicon_is_built_before_the_server_listens(bot: Bot) -> None:
    speller = bot.core.retriever.speller
    assert speller is not None, "the demo store keeps a vocabulary"
    built: dict[str, bool] = {}

    async def scenario() -> None:
        app = build_server_app(bot, bot.core.settings, SlackSettings(_env_file=None),  # type: ignore[call-arg]
                               TeamsSettings(_env_file=None, allow_anonymous=True))  # type: ignore[call-arg]
        server = Server(app)
        built["before"] = speller._built is not None
        await server.start("127.0.0.1", 0)
        try:
            built["after"] = speller._built is not None
        finally:
            await server.stop()

    asyncio.run(scenario())
    assert built == {"before": False, "after": True}
