"""Settings of the model providers (Gemini, Cohere): which one does what, keys, models, timeouts.

A mixin of `bot.settings.Settings`, so every field is read as NAVIBOT_<FIELD>."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings


class ProviderSettings(BaseSettings):
    llm: Literal["offline", "gemini"] = Field(
        default="offline", description="Who rewrites follow-ups and writes answers: the offline extractive "
                                       "answerer, or Gemini (needs NAVIBOT_GEMINI_API_KEYS).")
