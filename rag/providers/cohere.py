"""Cohere (ClientV2): embeddings (`embed-v4.0`) and rerank (`rerank-v3.5`), through `Failover` like Gemini."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import cohere
from cohere.core.api_error import ApiError

from rag.documents import SearchHit
from rag.providers.failover import (
    BadReply,
    Endpoint,
    Failover,
    Verdict,
    api_message,
    classify_status,
    endpoint_labels,
    not_an_http_error,
    not_the_api,
)
from rag.providers.remote_embedder import RemoteEmbedder

RERANK_SHARE = 0.3
RERANK_DOC_CHARS = 6000  # a section is long; its start (title, headings, first paragraphs) decides relevance


def classify(exc: Exception) -> tuple[Verdict, str]:
    if isinstance(exc, ApiError):  # (never str(exc): it dumps the headers)
        if not isinstance(exc.body, dict):
            return not_the_api("Cohere", exc.status_code)  # the API's errors are JSON objects with a message
        return classify_status(exc.status_code), f"HTTP {exc.status_code}{api_message(exc.body.get('message'))}"
    return not_an_http_error(exc)


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


class CohereEmbedder(RemoteEmbedder[cohere.ClientV2]):
    provider, batch_size = "cohere", 96  # the v2 embed endpoint takes at most 96 texts per call
    document_task, query_task = "search_document", "search_query"

    def __init__(self, failover: Failover[cohere.ClientV2], model: str = "embed-v4.0", dim: int = 1536) -> None:
        super().__init__(failover, model, dim)

    def _request(self, client: cohere.ClientV2, batch: list[str], task: str, timeout: float) -> list[list[float]]:
        response = client.embed(model=self.model, input_type=task, texts=batch,
                                embedding_types=["float"], output_dimension=self._dim,
                                request_options=_options(timeout))  # type: ignore[arg-type]
        return [list(v) for v in response.embeddings.float_ or []]


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
