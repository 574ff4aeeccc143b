"""Embeddings from an OpenAI-compatible `/embeddings` endpoint (Azure OpenAI, Ollama, vLLM, llama.cpp, a LiteLLM
proxy), through `Failover` like the Gemini and Cohere embedders."""

from __future__ import annotations

import json
from typing import Any, cast

import numpy as np

from rag.providers.failover import BadReply, Failover
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
        # "float" said explicitly: the SDK otherwise asks for base64, which Ollama and others do not send. The
        # reply is read raw: the SDK's typed parse builds one object per float (2.5 s per batch of 256 x 256).
        raw = client.client.embeddings.with_raw_response.create(
            model=client.models.embed, input=batch, encoding_format="float", timeout=timeout, **extra)
        try:
            data = json.loads(raw.content)["data"]
            ordered = sorted(data, key=lambda e: int(e["index"]))
            matrix = np.asarray([e["embedding"] for e in ordered], dtype=np.float32)
        except (ValueError, TypeError, KeyError) as exc:  # not JSON, no data, or not numbers
            raise BadReply(f"no embeddings in the reply ({type(exc).__name__})") from exc
        if matrix.ndim != 2:
            raise BadReply("the embeddings are not vectors of one size")
        return cast(list[list[float]], list(matrix))
