"""What the Gemini and Cohere embedders share: batches, failover per batch, checked shapes, unit vectors, and
the note that a failed query embedding leaves lexical search only."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from rag.answer.budget import note_fallback
from rag.providers.failover import BadReply, Failover, ProviderError
from rag.search.embedding import EmbeddingUnavailable, _normalise

QUERY_EMBED_SHARE = 0.25  # of the turn's time left: the rest is kept for the answer


class RemoteEmbedder[Client]:
    """Subclasses name the provider, its batch limit and task names, and make one API call in `_request`."""

    provider: ClassVar[str]
    batch_size: ClassVar[int]
    document_task: ClassVar[str]
    query_task: ClassVar[str]

    def __init__(self, failover: Failover[Client], model: str, dim: int) -> None:
        self.failover = failover
        self.model = model
        self._dim = dim

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _request(self, client: Client, batch: list[str], task: str, timeout: float) -> list[list[float]]:
        raise NotImplementedError

    def _embed(self, texts: list[str], task: str, operation: str, share: float = 1.0) -> np.ndarray:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start:start + self.batch_size]

            def call(client: Client, timeout: float, batch: list[str] = batch) -> list[list[float]]:
                vectors = self._request(client, batch, task, timeout)
                if len(vectors) != len(batch) or any(len(v) != self._dim for v in vectors):
                    raise BadReply(f"expected {len(batch)} vectors of {self._dim} dims")
                return vectors

            try:
                out.extend(self.failover.call(operation, call, share=share))
            except ProviderError as exc:
                raise EmbeddingUnavailable(str(exc)) from exc
        return _normalise(np.asarray(out, dtype=np.float32).reshape(len(texts), self._dim))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._embed(texts, self.document_task, "embed documents")

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_queries([text])[0]
        return vector

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """The question and its glossary terms in one request (a second call would cost a second round trip)."""
        try:
            return self._embed(texts, self.query_task, "embed query", share=QUERY_EMBED_SHARE)
        except EmbeddingUnavailable as exc:
            note_fallback("embed", f"{exc}; lexical search only", logged=False)  # the Retriever logs it
            raise
