"""Settings of the MongoDB Atlas backend. A mixin of `bot.settings.Settings` (read as NAVIBOT_<FIELD>)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings


class MongoSettings(BaseSettings):
    store: Literal["sqlite", "mongodb"] = Field(
        default="sqlite", description="Where knowledge and conversations live: embedded SQLite files in "
                                      "NAVIBOT_DATA_DIR, or MongoDB Atlas (needs NAVIBOT_MONGODB_URI).")
