"""Embedders turn text into unit vectors. The offline default uses WordLlama's static token embeddings,
whose weights ship inside the `wordllama` wheel, so nothing is downloaded at run time."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Anything that embeds chunks and questions into the same vector space."""

    @property
    def name(self) -> str:
        """Model identity (name and dimension); a store built with one model refuses queries from another."""
        ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (float32, shape [len(texts), dim]) for texts to be stored."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """One unit vector for a question."""
        ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Unit vectors for several query texts at once (a question and its glossary terms): one model call."""
        ...


class EmbeddingUnavailable(RuntimeError):
    """The embedding model cannot be loaded or called; the message says what to do."""


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: np.ndarray = vectors / norms
    return normalised


class WordLlamaEmbedder:
    """Static word embeddings (WordLlama `l2_supercat`, 256 dims) averaged over tokens: fast on a CPU, offline.

    `WordLlama.load()` looks for its tokenizer in a folder that the wheel does not have and then tries to
    download it, so the bundled weights and tokenizer are opened here directly.
    """

    _lock = threading.Lock()
    _model = None  # shared by every instance: loading takes ~0.3 s and 30 MB

    def __init__(self, config: str = "l2_supercat", dim: int = 256) -> None:
        self._config = config
        self._dim = dim

    @property
    def name(self) -> str:
        return f"wordllama/{self._config}-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _load(self) -> Any:  # wordllama's WordLlamaInference (untyped)
        with self._lock:
            if WordLlamaEmbedder._model is None:
                try:
                    import wordllama
                    from safetensors import safe_open
                    from tokenizers import Tokenizer
                    from wordllama.inference import WordLlamaInference
                except ImportError as exc:
                    raise EmbeddingUnavailable(f"the 'wordllama' package is not installed ({exc})") from exc
                package = Path(wordllama.__file__).parent
                weights = package / "weights" / f"{self._config}_{self._dim}.safetensors"
                tokenizer = package / "tokenizers" / f"{self._config}_tokenizer_config.json"
                if not weights.exists() or not tokenizer.exists():
                    raise EmbeddingUnavailable(
                        f"WordLlama files missing in {package} (expected {weights.name} and {tokenizer.name}); "
                        "reinstall the 'wordllama' package")
                with safe_open(str(weights), framework="np", device="cpu") as handle:
                    matrix = handle.get_tensor("embedding.weight")
                WordLlamaEmbedder._model = WordLlamaInference(matrix, Tokenizer.from_file(str(tokenizer)))
            return WordLlamaEmbedder._model

    def warm_up(self) -> None:
        self._load()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        model = self._load()
        return _normalise(np.asarray(model.embed(texts, batch_size=64)))

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.embed_documents(texts)  # static embeddings: queries and documents are embedded alike
