"""The search's spelling lookup (and its English word list) is built while the server starts, not by the first
navigator's question."""

from __future__ import annotations

import asyncio

from adapters.slack.settings import SlackSettings
from adapters.teams.settings import TeamsSettings
from bot.server.app import Server, build_server_app
from bot.wiring.runtime import Bot
from rag.search.spelling import english_words


def test_the_spelling_lexicon_is_built_before_the_server_listens(bot: Bot) -> None:
    speller = bot.core.retriever.speller
    assert speller is not None, "the demo store keeps a vocabulary"
    built: dict[str, bool] = {}

    async def scenario() -> None:
        app = build_server_app(bot, bot.core.settings, SlackSettings(_env_file=None),  # type: ignore[call-arg]
                               TeamsSettings(_env_file=None, allow_anonymous=True))  # type: ignore[call-arg]
        server = Server(app)
        english_words.cache_clear()
        built["before"] = speller._built is not None or english_words.cache_info().currsize > 0
        await server.start("127.0.0.1", 0)
        try:
            built["after"] = speller._built is not None and english_words.cache_info().currsize == 1
        finally:
            await server.stop()

    asyncio.run(scenario())
    assert built == {"before": False, "after": True}
