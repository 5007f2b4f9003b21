"""The embedder interface: one abstract method, the rest built on it."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from localmem.text import content_hash


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors.

    Subclasses implement :meth:`embed_batch` (and say their ``name`` and ``dim``); caching,
    batching and query handling are shared. :meth:`embed_batch` embeds what is stored
    (memories, chunks); :meth:`embed_query` and :meth:`embed_queries` what is searched for.
    """

    #: identifies the model in a store; a store refuses vectors from another model
    name: str

    def __init__(self, *, query_cache_size: int = 2048) -> None:
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._cache_lock = threading.Lock()

    @property
    @abstractmethod
    def dim(self) -> int:
        """Length of a vector."""

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` as an ``(n, dim)`` float32 array, each row of length 1."""

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer (a word-based estimate by default)."""
        return max(1, int(len(text.split()) * 1.3))

    @property
    def max_tokens(self) -> int:
        """Longest input the model reads; longer text is truncated by the model."""
        return 512

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of search queries, uncached.

        The same as :meth:`embed_batch` for a symmetric model; a model that embeds a query
        differently from the text it should find (E5's "query: " and "passage: ") overrides it.
        """
        return self.embed_batch(texts)

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of one query, cached by its hash so a repeated query costs nothing."""
        key = content_hash(text)
        with self._cache_lock:
            hit = self._query_cache.get(key)
            if hit is not None:
                self._query_cache.move_to_end(key)
                return hit
        vec = self.embed_queries([text])[0]
        if self._query_cache_size:
            with self._cache_lock:
                self._query_cache[key] = vec
                while len(self._query_cache) > self._query_cache_size:
                    self._query_cache.popitem(last=False)
        return vec

    def describe(self) -> dict:
        """What this embedder is, for `localmem doctor` and the TUI."""
        return {"name": self.name, "dim": self.dim, "backend": type(self).__name__}


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (a zero row stays zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
