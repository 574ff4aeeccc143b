"""Chooses the models from settings: embedder, rewriter, answerer and reranker (offline defaults unless configured).

The provider SDKs are imported only when a provider is selected, so the offline bot starts without them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import SecretStr

from bot.config.settings import Settings
from rag.answer.answerer import Answerer, FallbackAnswerer
from rag.answer.extractive import ExtractiveAnswerer
from rag.answer.rewrite import CachedTitles, HeuristicRewriter, Rewriter
from rag.engine import Reranker
from rag.search.embedding import Embedder, WordLlamaEmbedder
from rag.search.glossary import Glossary
from rag.search.store import EmbeddingMismatch, KnowledgeStore

if TYPE_CHECKING:
    import cohere
    from google import genai

    from rag.providers.failover import Failover
    from rag.providers.openai_client import Target


def _keys(secrets: list[SecretStr]) -> list[str]:
    return [s.get_secret_value().strip() for s in secrets if s.get_secret_value().strip()]


def gemini_failover(settings: Settings) -> Failover[genai.Client]:
    from rag.providers.gemini import gemini_failover as build

    return build(_keys(settings.gemini_api_keys), settings.gemini_base_urls, settings.provider_timeout_seconds)


def cohere_failover(settings: Settings) -> Failover[cohere.ClientV2]:
    from rag.providers.cohere import cohere_failover as build

    # An on-prem reranker (vLLM, Infinity) needs no key; the SDK wants one to send.
    keys = _keys(settings.cohere_api_keys) or ["not-needed"]
    return build(keys, settings.cohere_base_urls, settings.provider_timeout_seconds)


def uses_compatible_servers(settings: Settings) -> bool:
    """OpenAI-compatible endpoints are in play: base URLs given, a key for api.openai.com, or no Azure at all."""
    return bool(settings.openai_base_urls or _keys(settings.openai_api_keys)) or not settings.azure_openai_endpoints


def openai_failover(settings: Settings, embeddings: bool = False) -> Failover[Target]:
    """OpenAI-compatible endpoints (model names), then Azure ones (deployment names), in one failover: listed, a
    local server is tried before a hosted one. Embeddings use the first kind only: vectors from two different
    models must never mix in a store."""
    from rag.providers.openai_client import EntraTokens, Models, azure_targets, openai_targets, target_failover

    timeout = settings.provider_timeout_seconds
    endpoints = []
    if uses_compatible_servers(settings):
        models = Models(settings.openai_model, settings.openai_rewrite_model or settings.openai_model,
                        settings.openai_embed_model)
        endpoints += openai_targets(_keys(settings.openai_api_keys), settings.openai_base_urls, models, timeout)
    if settings.azure_openai_endpoints and not (embeddings and endpoints):
        deployment = settings.azure_openai_deployment
        models = Models(deployment, settings.azure_openai_rewrite_deployment or deployment,
                        settings.azure_openai_embed_deployment)
        tokens = None
        if settings.azure_openai_auth != "key":
            tokens = EntraTokens(settings.azure_openai_token_scope, tenant_id=settings.azure_tenant_id,
                                 client_id=settings.azure_client_id,
                                 client_secret=settings.azure_client_secret.get_secret_value(),
                                 authority_host=settings.azure_authority_host,
                                 managed_identity=settings.azure_openai_auth == "managed_identity")
        endpoints += azure_targets(settings.azure_openai_endpoints, settings.azure_openai_api_version,
                                   _keys(settings.azure_openai_api_keys), tokens, models, timeout)
    return target_failover(endpoints, timeout, in_order=settings.openai_failover_order == "listed")


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "gemini":
        from rag.providers.gemini import GeminiEmbedder

        return GeminiEmbedder(gemini_failover(settings), settings.gemini_embed_model, settings.gemini_embed_dim)
    if settings.embedder == "cohere":
        from rag.providers.cohere import CohereEmbedder

        return CohereEmbedder(cohere_failover(settings), settings.cohere_embed_model, settings.cohere_embed_dim)
    if settings.embedder == "openai":
        from rag.providers.openai_embed import OpenAIEmbedder

        compatible = uses_compatible_servers(settings)
        model = settings.openai_embed_model if compatible else settings.azure_openai_embed_deployment
        return OpenAIEmbedder(openai_failover(settings, embeddings=True), model, settings.openai_embed_dim,
                              settings.openai_embed_send_dimensions)
    return WordLlamaEmbedder()


def make_rewriter(settings: Settings, titles: CachedTitles) -> Rewriter:
    offline = HeuristicRewriter(titles)
    if settings.llm == "gemini":
        from rag.providers.gemini import GeminiRewriter

        return GeminiRewriter(gemini_failover(settings), settings.gemini_rewrite_model, offline,
                              settings.gemini_thinking_budget)
    if settings.llm == "openai":
        from rag.providers.openai_chat import OpenAIRewriter

        return OpenAIRewriter(openai_failover(settings), offline, settings.openai_structured_output,
                              settings.openai_reasoning_effort)
    return offline


def make_answerer(settings: Settings, embedder: Embedder, glossary: Glossary | None = None) -> Answerer:
    # The extractive answerer scores a few dozen sentences per turn: with the bundled model, not a hosted one
    # (a call per turn saved, and it still works when the embedding provider is down: it is the fallback).
    # The glossary (the retriever's) lets it rank paragraphs by the policy terms a navigator's words map to.
    extractive = ExtractiveAnswerer(embedder if isinstance(embedder, WordLlamaEmbedder) else WordLlamaEmbedder(),
                                    settings.min_coverage, glossary)
    if settings.llm == "gemini":
        from rag.providers.gemini import GeminiAnswerer

        answerer = GeminiAnswerer(gemini_failover(settings), settings.gemini_model, settings.gemini_thinking_budget)
        return FallbackAnswerer(answerer, extractive)
    if settings.llm == "openai":
        from rag.providers.openai_chat import OpenAIAnswerer

        chat = OpenAIAnswerer(openai_failover(settings), settings.openai_structured_output,
                              settings.openai_reasoning_effort)
        return FallbackAnswerer(chat, extractive)
    return extractive


def make_reranker(settings: Settings) -> Reranker | None:
    if settings.rerank == "cohere":
        from rag.providers.cohere import CohereReranker

        return CohereReranker(cohere_failover(settings), settings.cohere_rerank_model)
    if settings.rerank == "tei":
        from rag.providers.tei_rerank import TeiReranker, tei_failover

        return TeiReranker(tei_failover(settings.tei_rerank_urls, settings.provider_timeout_seconds))
    return None


def check_store_embedder(store: KnowledgeStore, embedder: Embedder) -> None:
    """Refuse, at start-up, a store built with another embedding model than the configured one (a query vector
    from another model would silently match the wrong sections), saying both ways out."""
    try:
        store.check_embedder(embedder.name, embedder.dim)
    except EmbeddingMismatch as exc:
        raise EmbeddingMismatch(f"{exc}; or set NAVIBOT_EMBEDDER (and its model and dimension settings) back to "
                                "the model the store was built with") from exc
