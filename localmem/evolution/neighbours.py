"""Finding the memories a new one may evolve: the most similar older ones in its scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from localmem.store import memories, records
from localmem.store.vectors import exact_search
from localmem.types import MemoryItem

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel

_SCOPE_COLUMN = {"user": "user_id", "session": "session_id", "store": None}


def memory_vector(kernel: Kernel, item: MemoryItem) -> np.ndarray | None:
    """The stored vector of a memory (from the index, else from DuckDB)."""
    try:
        return kernel.store.vector_index.get([item.label])[0]
    except KeyError:
        return memories.stored_vector(kernel, item.id)


def find_neighbours(
    kernel: Kernel,
    item: MemoryItem,
    *,
    k: int,
    scope: str,
    min_similarity: float,
) -> list[tuple[MemoryItem, float]]:
    """The ``k`` live memories most similar to ``item`` that are older than it, in its scope.

    Older means added before it (a smaller label): evolution lets a new memory change how the
    older ones read, never the other way round. Returns (memory, cosine similarity), best first.
    """
    vec = memory_vector(kernel, item)
    if vec is None:
        return []
    column = _SCOPE_COLUMN[scope]
    allowed = records.older_labels(
        kernel.db, item.label, column, getattr(item, column) if column else None
    )
    if len(allowed) == 0:
        return []
    vectors = kernel.store.vector_index
    if len(allowed) <= kernel.config.search.brute_force_below:
        # vectors_of: a memory deleted by another thread since ``allowed`` was read gets a
        # zero vector (similarity 0) and is mended by the next unit, instead of a KeyError
        labels, sims = exact_search(vec, kernel.store.vectors_of(allowed), allowed, k)
    else:  # a big scope: walk the graph, over-fetching, and keep the allowed labels
        keep = set(allowed.tolist())
        labels, sims = vectors.search(vec, min(vectors.live_count, k * 8 + 1))
        mask = np.fromiter((x in keep for x in labels.tolist()), bool, len(labels))
        labels, sims = labels[mask][:k], sims[mask][:k]
    chosen = [(int(x), float(s)) for x, s in zip(labels, sims, strict=True) if s >= min_similarity]
    items = memories.by_labels(kernel, [x for x, _ in chosen])
    return [(items[x], s) for x, s in chosen if x in items]
