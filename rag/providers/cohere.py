"""Cohere (ClientV2): embeddings (`embed-v4.0`) and rerank (`rerank-v3.5`), through `Failover` like Gemini."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import cohere
import numpy as np
from cohere.core.api_error import ApiError

from rag.embedding import EmbeddingUnavailable, _normalise
from rag.models import SearchHit
from rag.providers.budget import note_fallback
from rag.providers.failover import (
    BadReply,
    Endpoint,
    Failover,
    ProviderError,
    Verdict,
    classify_status,
    endpoint_labels,
    transport_cause,
)

EMBED_BATCH = 96  # the v2 embed endpoint takes at most 96 texts per call
QUERY_EMBED_SHARE = 0.25  # of the turn's time left: the rest is kept for the answer
RERANK_SHARE = 0.3
RERANK_DOC_CHARS = 6000  # a section is long; its start (title, headings, first paragraphs) decides relevance


def classify(exc: Exception) -> tuple[Verdict, str]:
    if isinstance(exc, ApiError):
        return classify_status(exc.status_code), f"HTTP {exc.status_code}"  # not str(exc): it dumps headers
    cause = transport_cause(exc)
    return Verdict.NEXT, cause or f"{type(exc).__name__}: {str(exc)[:200]}"


def cohere_failover(api_keys: Sequence[str], base_urls: Sequence[str], per_call_timeout: float,
                    rng: random.Random | None = None) -> Failover[cohere.ClientV2]:
    endpoints = []
    for url, key, label in endpoint_labels("cohere", base_urls, len(api_keys)):
        extra = {"base_url": url} if url else {}
        client = cohere.ClientV2(api_key=api_keys[key], timeout=per_call_timeout, max_retries=0,
                                 log_warning_experimental_features=False, **extra)  # type: ignore[arg-type]
        endpoints.append(Endpoint(label, client))
    return Failover("cohere", endpoints, per_call_timeout, classify, rng)


def _options(timeout: float) -> dict[str, float | int]:
    return {"timeout": timeout, "max_retries": 0}


class CohereEmbedder:
    def __init__(self, failover: Failover[cohere.ClientV2], model: str = "embed-v4.0", dim: int = 1536) -> None:
        self.failover = failover
        self.model = model
        self._dim = dim

    @property
    def name(self) -> str:
        return f"cohere/{self.model}-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _embed(self, texts: list[str], input_type: str, operation: str, share: float = 1.0) -> np.ndarray:
        def call(client: cohere.ClientV2, timeout: float) -> list[list[float]]:
            response = client.embed(model=self.model, input_type=input_type, texts=batch,  # type: ignore[arg-type]
                                    embedding_types=["float"], output_dimension=self._dim,
                                    request_options=_options(timeout))  # type: ignore[arg-type]
            vectors = response.embeddings.float_ or []
            if len(vectors) != len(batch) or any(len(v) != self._dim for v in vectors):
                raise BadReply(f"expected {len(batch)} vectors of {self._dim} dims")
            return [list(v) for v in vectors]

        out: list[list[float]] = []
        for start in range(0, len(texts), EMBED_BATCH):
            batch = texts[start:start + EMBED_BATCH]
            try:
                out.extend(self.failover.call(operation, call, share=share))
            except ProviderError as exc:
                raise EmbeddingUnavailable(str(exc)) from exc
        return _normalise(np.asarray(out, dtype=np.float32).reshape(len(texts), self._dim))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._embed(texts, "search_document", "embed documents")

    def embed_query(self, text: str) -> np.ndarray:
        try:
            return self._embed([text], "search_query", "embed query", share=QUERY_EMBED_SHARE)[0]
        except EmbeddingUnavailable as exc:
            note_fallback("embed", f"{exc}; lexical search only", logged=False)  # the Retriever logs it
            raise


class CohereReranker:
    """Orders the fused candidates by Cohere's relevance score (kept on each hit as `rerank_score`)."""

    def __init__(self, failover: Failover[cohere.ClientV2], model: str = "rerank-v3.5") -> None:
        self.failover = failover
        self.model = model

    def rerank(self, query: str, hits: list[SearchHit], top_n: int) -> list[SearchHit]:
        if not hits:
            return []
        documents = [f"{h.chunk.heading_text}\n\n{h.chunk.text}"[:RERANK_DOC_CHARS] for h in hits]

        def call(client: cohere.ClientV2, timeout: float) -> list[tuple[int, float]]:
            response = client.rerank(model=self.model, query=query, documents=documents,
                                     top_n=min(top_n, len(documents)),
                                     request_options=_options(timeout))  # type: ignore[arg-type]
            results = [(r.index, float(r.relevance_score)) for r in response.results]
            if not results or any(not 0 <= i < len(documents) for i, _ in results):
                raise BadReply("rerank results do not match the documents sent")
            return results

        # A ProviderError reaches the engine, which keeps the fused order.
        results = self.failover.call("rerank", call, share=RERANK_SHARE)
        ranked = sorted(results, key=lambda r: -r[1])
        return [replace(hits[i], rerank_score=score) for i, score in dict(ranked).items()]
