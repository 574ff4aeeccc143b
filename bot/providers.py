"""Chooses the models from settings: embedder, rewriter and answerer (offline defaults unless configured)."""

from __future__ import annotations

from bot.settings import Settings
from rag.answering import Answerer
from rag.embedding import Embedder, WordLlamaEmbedder
from rag.extractive import ExtractiveAnswerer
from rag.rewrite import CachedTitles, HeuristicRewriter, Rewriter


def make_embedder(settings: Settings) -> Embedder:
    return WordLlamaEmbedder()


def make_rewriter(settings: Settings, titles: CachedTitles) -> Rewriter:
    return HeuristicRewriter(titles)


def make_answerer(settings: Settings, embedder: Embedder) -> Answerer:
    return ExtractiveAnswerer(embedder)
