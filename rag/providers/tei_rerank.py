"""Rerank by Hugging Face Text Embeddings Inference (TEI), which does not speak Cohere's API:
`POST /rerank {"query", "texts", "truncate"}` answers a bare list `[{"index", "score"}]`.

The request goes through the `openai` SDK's generic `post` (its HTTP client, timeouts and error types, so the same
`Failover` classification applies) to each configured TEI server in turn; no new dependency."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import openai

from rag.documents import SearchHit
from rag.providers.cohere import RERANK_DOC_CHARS, RERANK_SHARE
from rag.providers.failover import BadReply, Endpoint, Failover, endpoint_labels
from rag.providers.openai_client import NO_KEY, classify


def tei_failover(base_urls: Sequence[str], per_call_timeout: float,
                 rng: random.Random | None = None) -> Failover[openai.OpenAI]:
    endpoints = [Endpoint(label.removesuffix("#key1"), openai.OpenAI(api_key=NO_KEY, base_url=url,
                                                                     timeout=per_call_timeout, max_retries=0))
                 for url, _, label in endpoint_labels("tei", base_urls, 1)]
    return Failover("tei", endpoints, per_call_timeout, classify, rng)


class TeiReranker:
    """Orders the fused candidates by TEI's score (kept on each hit as `rerank_score`); a failure reaches the
    engine as a ProviderError, which keeps the fused order."""

    def __init__(self, failover: Failover[openai.OpenAI]) -> None:
        self.failover = failover

    def rerank(self, query: str, hits: list[SearchHit], top_n: int) -> list[SearchHit]:
        if not hits:
            return []
        documents = [f"{h.chunk.heading_text}\n\n{h.chunk.text}"[:RERANK_DOC_CHARS] for h in hits]

        def call(client: openai.OpenAI, timeout: float) -> list[tuple[int, float]]:
            reply = client.post("/rerank", cast_to=object, body={"query": query, "texts": documents,
                                                                  "truncate": True}, options={"timeout": timeout})
            try:
                results = [(int(r["index"]), float(r["score"])) for r in reply]  # type: ignore[attr-defined]
            except (TypeError, KeyError, ValueError) as exc:
                raise BadReply(f"not a TEI rerank reply ({type(exc).__name__})") from exc
            if not results or any(not 0 <= i < len(documents) for i, _ in results):
                raise BadReply("rerank results do not match the documents sent")
            return results

        results = self.failover.call("rerank", call, share=RERANK_SHARE)
        ranked = sorted(dict(results).items(), key=lambda r: -r[1])[:top_n]
        return [replace(hits[i], rerank_score=score) for i, score in ranked]
