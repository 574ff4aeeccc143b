"""Embeddings from an OpenAI-compatible `/embeddings` endpoint (Azure OpenAI, Ollama, vLLM, llama.cpp, a LiteLLM
proxy), through `Failover` like the Gemini and Cohere embedders."""

from __future__ import annotations

from typing import Any

from rag.providers.failover import Failover
from rag.providers.openai_client import Target
from rag.providers.remote_embedder import RemoteEmbedder


class OpenAIEmbedder(RemoteEmbedder[Target]):
    """No task types (the API has none). `send_dimensions` asks the server for `dim` dimensions (OpenAI's
    text-embedding-3 models shorten their vectors); off for a model with a fixed size, where servers refuse the
    parameter. Either way a vector of another size is a BadReply, so a wrong setting never reaches the store."""

    provider, batch_size = "openai", 256
    document_task = query_task = ""

    def __init__(self, failover: Failover[Target], model: str, dim: int, send_dimensions: bool = True) -> None:
        super().__init__(failover, model, dim)
        self.send_dimensions = send_dimensions

    def _request(self, client: Target, batch: list[str], task: str, timeout: float) -> list[list[float]]:
        extra: dict[str, Any] = {"dimensions": self._dim} if self.send_dimensions else {}
        # "float" said explicitly: the SDK otherwise asks for base64, which Ollama and others do not send.
        response = client.client.embeddings.create(model=client.models.embed, input=batch, encoding_format="float",
                                                   timeout=timeout, **extra)
        ordered = sorted(response.data, key=lambda e: e.index)
        return [list(e.embedding) for e in ordered]
