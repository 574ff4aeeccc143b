"""Settings from the environment (prefix NAVIBOT_) or a .env file, validated once at start-up."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from bot.config.admin_settings import AdminSettings
from bot.config.mongodb_settings import MongoSettings
from bot.config.provider_settings import ProviderSettings
from bot.config.server_settings import ServerSettings


class Settings(ProviderSettings, MongoSettings, ServerSettings, AdminSettings):
    """Everything an admin can tune without editing code. Secrets are `SecretStr` so that they never show up in
    logs or reprs. Provider, MongoDB and server fields live in their own mixins (bot/config/provider_settings.py,
    bot/config/mongodb_settings.py, bot/config/server_settings.py); the chat platforms read their own settings
    (adapters/*/settings.py)."""

    model_config = SettingsConfigDict(env_prefix="NAVIBOT_", env_file=".env", env_file_encoding="utf-8",
                                      extra="ignore")

    data_dir: Path = Field(default=Path.home() / ".navibot",
                           description="Folder for the knowledge store and conversation data.")
    store_file: Path = Field(default=Path("knowledge.sqlite3"),
                             description="SQLite file of the knowledge store, relative to data_dir unless absolute.")
    chunk_max_words: int = Field(default=450, ge=50, le=5000,
                                 description="Largest section chunk, in words (a single paragraph may exceed it).")
    top_k: int = Field(default=5, ge=1, le=50, description="Section chunks handed to the answerer.")
    candidates: int = Field(default=50, ge=5, le=1000,
                            description="Top-N taken from each of vector and lexical search before fusion.")

    conversations_file: Path = Field(default=Path("conversations.sqlite3"),
                                     description="SQLite file of history, moods, answers and feedback.")
    history_turns: int = Field(default=6, ge=1, le=50, description="Turns of a conversation kept as history.")
    max_question_chars: int = Field(default=4000, ge=100, le=100_000,
                                    description="Longer messages get a polite error instead of an answer.")
    min_coverage: float = Field(default=0.30, ge=0.0, le=1.0,
                                description="Share of the question's topic words the best sections must contain "
                                            "for the offline (extractive) answer; below it the bot says it could "
                                            "not find the answer. A question asking for a fact no section holds "
                                            "(a phone number, this year's figure, another program's application) "
                                            "has none (rag/answer/answerability.py). Calibrated on answerable and "
                                            "unanswerable questions (benchmarks/RESULTS.md). Gemini judges "
                                            "relevance itself.")
    moods_file: Path | None = Field(default=None, description="TOML file of extra or changed moods.")
    glossary_file: Path | None = Field(default=None,
                                       description="TOML file of an agency's own acronyms, program names and words, "
                                                   "merged over the bundled glossary (rag/data/glossary.toml).")
    word_links_file: Path | None = Field(
        default=None,
        description="File of learned word links replacing the bundled ones (rag/data/word_links.tsv.gz, learned "
                    "from navigator-style questions about 7 CFR 273 and applied only to that regulation's sections); "
                    "rag/search/word_links.py gives the form, benchmarks/paragraph_ltr.py how they are learned; a "
                    "file with a '#scope' line and no link switches them off.")
    suggested_questions: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Questions offered as prompts in Slack's assistant pane and as Teams prompt starters, separated "
                    "by | (e.g. \"Can college students get SNAP? | How do I report a change?\"). Empty: questions "
                    "about the knowledge base's own topics (its public documents' titles).")
    compute_slots: int = Field(
        default=2, ge=0, le=64,
        description="Answers that do their CPU work (search in the embedded store, the extractive answer, the "
                    "citation check) at the same moment; the rest wait, without slowing the server's "
                    "acknowledgements of new Slack and Teams requests. A turn waiting on a hosted model gives its "
                    "slot up, so model calls still overlap. 0: no limit. Not applied with NAVIBOT_STORE=mongodb "
                    "(its searches wait on the network).")

    @field_validator("suggested_questions", mode="before")
    @classmethod
    def _questions(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [q.strip() for q in value.split("|") if q.strip()]
        return value

    @field_validator("data_dir", mode="after")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    def _in_data_dir(self, path: Path) -> Path:
        path = path.expanduser()
        return path if path.is_absolute() else self.data_dir / path

    @property
    def store_path(self) -> Path:
        return self._in_data_dir(self.store_file)

    @property
    def conversations_path(self) -> Path:
        return self._in_data_dir(self.conversations_file)
