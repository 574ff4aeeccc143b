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


def _keys(secrets: list[SecretStr]) -> list[str]:
    return [s.get_secret_value().strip() for s in secrets if s.get_secret_value().strip()]


def gemini_failover(settings: Settings) -> Failover[genai.Client]:
    from rag.providers.gemini import gemini_failover as build

    return build(_keys(settings.gemini_api_keys), settings.gemini_base_urls, settings.provider_timeout_seconds)


def cohere_failover(settings: Settings) -> Failover[cohere.ClientV2]:
    from rag.providers.cohere import cohere_failover as build

    return build(_keys(settings.cohere_api_keys), settings.cohere_base_urls, settings.provider_timeout_seconds)


def make_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "gemini":
        from rag.providers.gemini import GeminiEmbedder

        return GeminiEmbedder(gemini_failover(settings), settings.gemini_embed_model, settings.gemini_embed_dim)
    if settings.embedder == "cohere":
        from rag.providers.cohere import CohereEmbedder

        return CohereEmbedder(cohere_failover(settings), settings.cohere_embed_model, settings.cohere_embed_dim)
    return WordLlamaEmbedder()


def make_rewriter(settings: Settings, titles: CachedTitles) -> Rewriter:
    offline = HeuristicRewriter(titles)
    if settings.llm == "gemini":
        from rag.providers.gemini import GeminiRewriter

        return GeminiRewriter(gemini_failover(settings), settings.gemini_rewrite_model, offline,
                              settings.gemini_thinking_budget)
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
    return extractive


def make_reranker(settings: Settings) -> Reranker | None:
    if settings.rerank == "cohere":
        from rag.providers.cohere import CohereReranker

        return CohereReranker(cohere_failover(settings), settings.cohere_rerank_model)
    return None


def check_store_embedder(store: KnowledgeStore, embedder: Embedder) -> None:
    """Refuse, at start-up, a store built with another embedding model than the configured one (a query vector
    from another model would silently match the wrong sections), saying both ways out."""
    try:
        store.check_embedder(embedder.name, embedder.dim)
    except EmbeddingMismatch as exc:
        raise EmbeddingMismatch(f"{exc}; or set NAVIBOT_EMBEDDER (and its model and dimension settings) back to "
                                "the model the store was built with") from exc
