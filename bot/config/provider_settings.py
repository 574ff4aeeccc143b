"""Settings of the model providers (Gemini, Cohere, Azure OpenAI and OpenAI-compatible servers, TEI): which one
does what, keys, endpoints, models, timeouts.

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

    llm: Literal["offline", "gemini", "openai"] = Field(
        default="offline", description="Who rewrites follow-ups and writes answers: the offline extractive "
                                       "answerer, Gemini (needs NAVIBOT_GEMINI_API_KEYS), or an OpenAI-compatible "
                                       "server or Azure OpenAI (NAVIBOT_OPENAI_* / NAVIBOT_AZURE_OPENAI_*).")
    embedder: Literal["wordllama", "gemini", "cohere", "openai"] = Field(
        default="wordllama", description="Embedding model: the bundled offline WordLlama, Gemini, Cohere, or an "
                                         "OpenAI-compatible server or Azure OpenAI. Changing it needs a new store: "
                                         "`navibot reindex` re-embeds the stored chunks without the sources.")
    rerank: Literal["none", "cohere", "tei"] = Field(
        default="none", description="Rerank the fused candidates with Cohere's API: Cohere itself "
                                    "(NAVIBOT_COHERE_API_KEYS), or an on-prem server that speaks it "
                                    "(NAVIBOT_COHERE_BASE_URLS: vLLM, Infinity); or with Hugging Face Text "
                                    "Embeddings Inference (tei: NAVIBOT_TEI_RERANK_URLS).")
    tei_rerank_urls: CommaList = Field(
        default_factory=list, validate_default=True,
        description="Text Embeddings Inference servers that rerank (e.g. http://tei:80), comma-separated.")

    gemini_api_keys: CommaSecrets = Field(
        default_factory=list, validate_default=True,
        description="Gemini API key(s), comma-separated; tried in a random order.")
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

    cohere_base_urls: CommaList = Field(
        default_factory=list, description="Cohere endpoints, comma-separated; empty = Cohere's default. An "
                                          "on-prem reranker that speaks Cohere's v2 API (vLLM, Infinity) goes here, "
                                          "and then needs no key.")
    cohere_api_keys: CommaSecrets = Field(
        default_factory=list, validate_default=True,
        description="Cohere API key(s), comma-separated; tried in a random order.")
    cohere_embed_model: str = Field(default="embed-v4.0", description="Cohere embedding model.")
    cohere_embed_dim: Literal[256, 512, 1024, 1536] = Field(
        default=1536, description="Output dimension of the Cohere embeddings (embed-v4.0: 256, 512, 1024, 1536).")
    cohere_rerank_model: str = Field(default="rerank-v3.5", description="Cohere rerank model.")
    azure_openai_endpoints: CommaList = Field(
        default_factory=list, description="Azure OpenAI resource endpoints, comma-separated (e.g. two regions: "
                                          "https://agency-east.openai.azure.com, https://agency-west.openai.azure.us)"
                                          "; after NAVIBOT_OPENAI_BASE_URLS when both are set.")
    azure_openai_api_version: str = Field(default="2024-10-21",
                                          description="The Azure OpenAI API version sent as ?api-version=.")
    azure_openai_deployment: str = Field(default="", description="Azure deployment that writes answers.")
    azure_openai_rewrite_deployment: str = Field(
        default="", description="Azure deployment that makes follow-ups standalone; empty = the answer deployment.")
    azure_openai_embed_deployment: str = Field(default="", description="Azure deployment of the embedding model.")
    azure_openai_auth: Literal["key", "entra_secret", "managed_identity"] = Field(
        default="key", description="How the bot signs in to Azure OpenAI: an API key, a Microsoft Entra app "
                                   "registration's client secret, or the host's managed identity.")
    azure_tenant_id: str = Field(default="", description="Entra tenant (directory) id, for entra_secret.")
    azure_client_id: str = Field(default="", description="Entra app (client) id for entra_secret, or a "
                                                         "user-assigned managed identity's client id.")
    azure_client_secret: SecretStr = Field(default=SecretStr(""), description="Entra client secret, for "
                                                                              "entra_secret.")
    azure_authority_host: str = Field(
        default="https://login.microsoftonline.com",
        description="Entra sign-in host; https://login.microsoftonline.us in Azure Government.")
    azure_openai_token_scope: str = Field(
        default="https://cognitiveservices.azure.com/.default",
        description="Scope of the Entra token; https://cognitiveservices.azure.us/.default in Azure Government.")
    azure_openai_api_keys: CommaSecrets = Field(
        default_factory=list, validate_default=True,
        description="Azure OpenAI API key(s), comma-separated, for NAVIBOT_AZURE_OPENAI_AUTH=key.")

    openai_api_keys: CommaSecrets = Field(
        default_factory=list, description="API key(s) of the OpenAI-compatible endpoints, comma-separated; none "
                                          "for a local server that wants none.")
    openai_base_urls: CommaList = Field(
        default_factory=list, validate_default=True,
        description="OpenAI-compatible endpoints, comma-separated, each ending where /chat/completions is added "
                    "(Ollama http://ollama:11434/v1, vLLM http://vllm:8000/v1, a LiteLLM proxy); empty with "
                    "keys = api.openai.com.")
    openai_model: str = Field(default="gpt-4o-mini", description="Model that writes answers on those endpoints "
                                                                  "(e.g. llama3.1:8b on Ollama).")
    openai_rewrite_model: str = Field(default="", description="Model that makes follow-ups standalone; empty = "
                                                              "NAVIBOT_OPENAI_MODEL.")
    openai_embed_model: str = Field(default="text-embedding-3-small",
                                    description="Embedding model on those endpoints (e.g. nomic-embed-text).")
    openai_embed_dim: int = Field(default=1536, ge=8, le=8192,
                                  description="Dimension of the embeddings (a vector of another size is refused).")
    openai_embed_send_dimensions: bool = Field(
        default=True, description="Ask for NAVIBOT_OPENAI_EMBED_DIM dimensions (OpenAI's text-embedding-3 models "
                                  "shorten their vectors); false for a model of fixed size.")
    openai_structured_output: Literal["json_schema", "json_object", "prompt"] = Field(
        default="json_schema", description="How replies are made JSON: a strict JSON schema, JSON mode, or only "
                                           "the prompt's instruction, for servers that refuse both (the reply is "
                                           "read tolerantly either way; an unreadable one is the offline fallback).")
    openai_reasoning_effort: Literal["", "minimal", "low", "medium", "high"] = Field(
        default="", description="Set for a reasoning model (o-series, gpt-5), which refuses temperature and "
                                "max_tokens: it then gets max_completion_tokens and this effort (minimal or low "
                                "keeps a navigator's wait short). Empty for a chat model.")
    openai_failover_order: Literal["random", "listed"] = Field(
        default="random", description="Try the endpoints in a random order, or as listed (NAVIBOT_OPENAI_BASE_URLS "
                                      "first, then the Azure endpoints: e.g. a local server first, a hosted one "
                                      "second).")

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
                                  "a model provider (rewrite, answer, query embedding, rerank).")
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
                                   "openai_api_keys", "openai_base_urls", "azure_openai_endpoints",
                                   "azure_openai_api_keys", "tei_rerank_urls", mode="before")(_split)

    @field_validator("gemini_api_keys", "cohere_api_keys", mode="after")
    @classmethod
    def _keys_for_the_chosen_providers(cls, keys: list[SecretStr], info: ValidationInfo) -> list[SecretStr]:
        provider = "gemini" if info.field_name == "gemini_api_keys" else "cohere"
        users = [f"NAVIBOT_{name.upper()}={provider}" for name in ("llm", "embedder", "rerank")
                 if info.data.get(name) == provider]
        on_prem = provider == "cohere" and info.data.get("cohere_base_urls")  # a local reranker wants no key
        if users and not on_prem and not [k for k in keys if k.get_secret_value().strip()]:
            raise ValueError(f"{' and '.join(users)} needs at least one {provider.capitalize()} API key "
                             "(comma-separated)")
        return keys

    @field_validator("gemini_api_keys", "cohere_api_keys", "openai_api_keys", "azure_openai_api_keys", mode="after")
    @classmethod
    def _printable_keys(cls, keys: list[SecretStr]) -> list[SecretStr]:
        # A key is sent in an HTTP header: a pasted space, accent or smart quote would fail every call of every
        # turn (as a fallback); refused here at start-up instead, without showing the key.
        for number, key in enumerate(keys, start=1):
            value = key.get_secret_value().strip()
            if value and not (value.isascii() and value.isprintable() and " " not in value):
                raise ValueError(f"key {number} has a space or a character that is not plain ASCII")
        return keys

    @field_validator("gemini_base_urls", "cohere_base_urls", "openai_base_urls", "azure_openai_endpoints",
                     "tei_rerank_urls", mode="after")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        for number, url in enumerate(urls, start=1):
            if not _http_url(url):
                shown = f"{url!r}" if "@" not in url else f"URL {number} (not repeated: it holds a user or password)"
                raise ValueError(f"{shown} is not an http(s) URL with a host, e.g. https://proxy.example:8443")
        return urls

    @field_validator("azure_openai_api_keys", mode="after")
    @classmethod
    def _azure_sign_in(cls, keys: list[SecretStr], info: ValidationInfo) -> list[SecretStr]:
        """Azure endpoints need a way to sign in and a deployment for each part that uses them."""
        data = info.data
        if not data.get("azure_openai_endpoints"):
            return keys
        auth = data.get("azure_openai_auth")
        if auth == "key" and not [k for k in keys if k.get_secret_value().strip()]:
            raise ValueError("NAVIBOT_AZURE_OPENAI_ENDPOINTS needs at least one key (comma-separated), or "
                             "NAVIBOT_AZURE_OPENAI_AUTH=entra_secret or managed_identity")
        secret = data.get("azure_client_secret") or SecretStr("")
        if auth == "entra_secret" and not (data.get("azure_tenant_id") and data.get("azure_client_id")
                                           and secret.get_secret_value()):
            raise ValueError("NAVIBOT_AZURE_OPENAI_AUTH=entra_secret needs NAVIBOT_AZURE_TENANT_ID, "
                             "NAVIBOT_AZURE_CLIENT_ID and NAVIBOT_AZURE_CLIENT_SECRET")
        if data.get("llm") == "openai" and not data.get("azure_openai_deployment"):
            raise ValueError("NAVIBOT_LLM=openai with Azure endpoints needs NAVIBOT_AZURE_OPENAI_DEPLOYMENT")
        return keys

    @field_validator("openai_base_urls", mode="after")
    @classmethod
    def _an_openai_endpoint(cls, urls: list[str], info: ValidationInfo) -> list[str]:
        users = [f"NAVIBOT_{name.upper()}=openai" for name in ("llm", "embedder") if info.data.get(name) == "openai"]
        keys = [k for k in info.data.get("openai_api_keys") or [] if k.get_secret_value().strip()]
        azure = info.data.get("azure_openai_endpoints")
        if users and not urls and not keys and not azure:
            raise ValueError(f"{' and '.join(users)} needs an endpoint: a server's URL here (e.g. "
                             "http://ollama:11434/v1), NAVIBOT_AZURE_OPENAI_ENDPOINTS, or NAVIBOT_OPENAI_API_KEYS "
                             "for api.openai.com")
        # Embeddings come from the first kind of endpoint: Azure only when no compatible server is configured.
        if info.data.get("embedder") == "openai" and azure and not urls and not keys \
                and not info.data.get("azure_openai_embed_deployment"):
            raise ValueError("NAVIBOT_EMBEDDER=openai with Azure endpoints needs NAVIBOT_AZURE_OPENAI_EMBED_DEPLOYMENT")
        return urls

    @field_validator("tei_rerank_urls", mode="after")
    @classmethod
    def _tei_servers(cls, urls: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("rerank") == "tei" and not urls:
            raise ValueError("NAVIBOT_RERANK=tei needs at least one server URL (comma-separated), e.g. http://tei:80")
        return urls
