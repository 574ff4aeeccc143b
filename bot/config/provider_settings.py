"""Settings of the model providers (Gemini, Cohere): which one does what, keys, endpoints, models, timeouts.

A mixin of `bot.config.settings.Settings`, so every field is read as NAVIBOT_<FIELD>. Lists (keys, base URLs) are
comma-separated in the environment. A provider that is selected without a key is refused at start-up with one
line that names the missing setting."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from rag.redaction import compile_case_patterns

CommaList = Annotated[list[str], NoDecode]
CommaSecrets = Annotated[list[SecretStr], NoDecode]


def _split(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _http_url(url: str) -> bool:
    parts = urlsplit(url)
    try:
        _ = parts.port  # raises ValueError for a port that is not a number from 0 to 65535
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


class ProviderSettings(BaseSettings):
    # A refused setting's error never repeats its value: it may be an API key (pydantic shows inputs otherwise).
    model_config = SettingsConfigDict(hide_input_in_errors=True)

    llm: Literal["offline", "gemini"] = Field(
        default="offline", description="Who rewrites follow-ups and writes answers: the offline extractive "
                                       "answerer, or Gemini (needs NAVIBOT_GEMINI_API_KEYS).")
    embedder: Literal["wordllama", "gemini", "cohere"] = Field(
        default="wordllama", description="Embedding model: the bundled offline WordLlama, Gemini or Cohere. "
                                         "Changing it needs a re-ingest into a new store.")
    rerank: Literal["none", "cohere"] = Field(
        default="none", description="Rerank the fused candidates with Cohere (needs NAVIBOT_COHERE_API_KEYS).")

    gemini_api_keys: CommaSecrets = Field(
        default_factory=list, validate_default=True, description="Gemini API key(s), comma-separated; tried in a random order.")
    gemini_base_urls: CommaList = Field(
        default_factory=list, description="Gemini endpoints (regions, proxies), comma-separated; "
                                          "empty = Google's default endpoint.")
    gemini_model: str = Field(default="gemini-2.5-flash", description="Gemini model that writes answers.")
    gemini_rewrite_model: str = Field(default="gemini-2.5-flash-lite",
                                      description="Gemini model that makes follow-ups standalone.")
    gemini_thinking_budget: int = Field(
        default=0, ge=-1, le=32768, description="Thinking tokens Gemini may spend before answering: 0 = none (fastest, "
                                                "for the 2.5 Flash models), -1 = the model's own choice (needed for "
                                                "models that cannot switch thinking off, e.g. 2.5 Pro).")
    gemini_embed_model: str = Field(default="gemini-embedding-001", description="Gemini embedding model.")
    gemini_embed_dim: int = Field(default=768, ge=128, le=3072,
                                  description="Output dimensionality of the Gemini embeddings.")

    cohere_api_keys: CommaSecrets = Field(
        default_factory=list, validate_default=True, description="Cohere API key(s), comma-separated; tried in a random order.")
    cohere_base_urls: CommaList = Field(
        default_factory=list, description="Cohere endpoints, comma-separated; empty = Cohere's default.")
    cohere_embed_model: str = Field(default="embed-v4.0", description="Cohere embedding model.")
    cohere_embed_dim: Literal[256, 512, 1024, 1536] = Field(
        default=1536, description="Output dimension of the Cohere embeddings (embed-v4.0: 256, 512, 1024, 1536).")
    cohere_rerank_model: str = Field(default="rerank-v3.5", description="Cohere rerank model.")
    rerank_candidates: int = Field(default=30, ge=5, le=100,
                                   description="Fused candidates sent to the reranker; the best top_k are kept.")

    provider_timeout_seconds: float = Field(default=6.0, gt=0, le=120,
                                            description="Longest wait for one call to one endpoint.")
    turn_deadline_seconds: float = Field(default=12.0, gt=0, le=300,
                                         description="Time budget of all model calls of one turn; when it is "
                                                     "spent the offline fallbacks answer.")

    redact_outbound: bool = Field(
        default=True, description="Redact personal data (SSNs, phone, card and A-numbers, e-mails, dates of birth, "
                                  "NAVIBOT_REDACT_PATTERNS) from the question and the history before any call to "
                                  "Gemini or Cohere (rewrite, answer, query embedding, rerank).")
    redact_patterns: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="An agency's case-number shapes, as regular expressions separated by "
                                          "spaces (or a JSON array), e.g. 'CASE-\\d{6} [A-Z]{2}\\d{7}': replaced "
                                          "with [case] wherever personal data is redacted.")

    @field_validator("redact_patterns", mode="before")
    @classmethod
    def _split_patterns(cls, value: Any) -> Any:
        if isinstance(value, str):  # commas belong to regexes ("\\d{8,9}"): spaces separate them
            text = value.strip()
            return json.loads(text) if text.startswith('["') else text.split()
        return value

    @field_validator("redact_patterns", mode="after")
    @classmethod
    def _valid_patterns(cls, patterns: list[str]) -> list[str]:
        compile_case_patterns(patterns)  # a ValueError names the pattern that does not compile
        return patterns

    _split_lists = field_validator("gemini_api_keys", "gemini_base_urls", "cohere_api_keys", "cohere_base_urls",
                                   mode="before")(_split)

    @field_validator("gemini_api_keys", "cohere_api_keys", mode="after")
    @classmethod
    def _keys_for_the_chosen_providers(cls, keys: list[SecretStr], info: ValidationInfo) -> list[SecretStr]:
        provider = "gemini" if info.field_name == "gemini_api_keys" else "cohere"
        users = [f"NAVIBOT_{name.upper()}={provider}" for name in ("llm", "embedder", "rerank")
                 if info.data.get(name) == provider]
        if users and not [k for k in keys if k.get_secret_value().strip()]:
            raise ValueError(f"{' and '.join(users)} needs at least one {provider.capitalize()} API key "
                             "(comma-separated)")
        return keys

    @field_validator("gemini_api_keys", "cohere_api_keys", mode="after")
    @classmethod
    def _printable_keys(cls, keys: list[SecretStr]) -> list[SecretStr]:
        # A key is sent in an HTTP header: a pasted space, accent or smart quote would fail every call of every
        # turn (as a fallback); refused here at start-up instead, without showing the key.
        for number, key in enumerate(keys, start=1):
            value = key.get_secret_value().strip()
            if value and not (value.isascii() and value.isprintable() and " " not in value):
                raise ValueError(f"key {number} has a space or a character that is not plain ASCII")
        return keys

    @field_validator("gemini_base_urls", "cohere_base_urls", mode="after")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        for number, url in enumerate(urls, start=1):
            if not _http_url(url):
                shown = f"{url!r}" if "@" not in url else f"URL {number} (not repeated: it holds a user or password)"
                raise ValueError(f"{shown} is not an http(s) URL with a host, e.g. https://proxy.example:8443")
        return urls
