"""Settings of the MongoDB Atlas backend. A mixin of `bot.config.settings.Settings` (read as NAVIBOT_<FIELD>)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings


class MongoSettings(BaseSettings):
    store: Literal["sqlite", "mongodb"] = Field(
        default="sqlite", description="Where knowledge and conversations live: embedded SQLite files in "
                                      "NAVIBOT_DATA_DIR, or MongoDB Atlas (needs NAVIBOT_MONGODB_URI).")
    mongodb_uri: SecretStr | None = Field(
        default=None, description="MongoDB connection string (for Atlas the mongodb+srv:// string of "
                                  "Connect > Drivers, "
                                  "mongodb://localhost:27017/?directConnection=true for mongodb-atlas-local).")
    mongodb_database: str = Field(default="navibot", min_length=1, max_length=63, pattern=r"^[^/\\. \"$]+$",
                                  description="Database holding the knowledge and conversation collections.")
    mongodb_connect_timeout: float = Field(
        default=5.0, gt=0, le=120, description="Seconds to wait for a reachable server (start-up and each turn).")
    mongodb_operation_timeout: float = Field(
        default=10.0, gt=0, le=600, description="Seconds to wait for one reply of the server (socketTimeoutMS).")
    retention_days: int | None = Field(
        default=None, ge=1, le=3650,
        description="Days the conversation store (SQLite or MongoDB) keeps history turns and event ids; after them an "
                    "answer no one rated also loses its question text (answers and ratings are kept). Applied when "
                    "the store opens and at most hourly on a write (on MongoDB also by TTL indexes). Unset: "
                    "NAVIBOT_MONGODB_HISTORY_TTL_DAYS, the older name (30).")
    mongodb_history_ttl_days: int = Field(
        default=30, ge=1, le=3650, description="The older name of NAVIBOT_RETENTION_DAYS, read when that is unset.")
    mongodb_event_ttl_hours: int = Field(
        default=24, ge=1, le=24 * 30, description="How long a chat platform event id is remembered to drop "
                                                  "redeliveries (TTL index).")
    mongodb_num_candidates: int = Field(
        default=20, ge=1, le=200, description="$vectorSearch numCandidates as a multiple of the results wanted.")
    mongodb_exact_search: bool = Field(
        default=False, description="Exact nearest-neighbour vector search (every vector compared) instead of ANN.")
    mongodb_rank_fusion: bool = Field(
        default=True, description="Use $rankFusion (MongoDB 8.0+) to run vector and full-text search in one round "
                                  "trip; off, or on an older server, the two searches run separately.")
    mongodb_vector_index: str = Field(default="navibot_vector", min_length=1,
                                      description="Name of the Atlas Vector Search index on the chunks.")
    mongodb_search_index: str = Field(default="navibot_text", min_length=1,
                                      description="Name of the Atlas Search (full-text) index on the chunks.")
    @model_validator(mode="after")
    def _one_retention(self) -> Self:
        """One retention for both backends: NAVIBOT_RETENTION_DAYS wins; the MongoDB name keeps working."""
        if self.retention_days is None:
            self.retention_days = self.mongodb_history_ttl_days
        else:
            self.mongodb_history_ttl_days = self.retention_days
        return self

    redact_pii: bool = Field(
        default=True, description="Replace SSNs, phone numbers, card numbers, immigration A-numbers, e-mail "
                                  "addresses, dates of birth and NAVIBOT_REDACT_PATTERNS matches with [ssn], "
                                  "[phone], [card], [a-number], [email], [dob], [case] in every log line and "
                                  "everything the conversation store keeps "
                                  "(SQLite or MongoDB); a stored answer keeps what it repeats from its cited "
                                  "sources (a public hotline number).")
