"""Embedding through the store: a text already embedded (same model) is not embedded again.

Every memory row keeps its vector and the hash of the exact text it was computed from
(``embed_hash``: content plus evolved context), so the store itself is the cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from localmem.store.backend import StoreDatabase
from localmem.store.records import NewMemory
from localmem.types import embedding_text

if TYPE_CHECKING:
    from localmem.embed.base import Embedder


def cached_vectors(db: StoreDatabase, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """Stored vectors by the hash of the text they were made from."""
    # two steps: matching the hash column alone is cheap, while a filter on the embedding
    # column reads every stored vector (1.5 GB at 1M memories) on each batch
    labels = db.fetchall(
        "SELECT label FROM memories WHERE embed_hash IN (SELECT unnest(?::VARCHAR[]))",
        [list(set(hashes))],
    )
    if not labels:
        return {}
    rows = db.fetchall(
        "SELECT embed_hash, any_value(embedding) FROM memories WHERE label IN "
        "(SELECT unnest(?::BIGINT[])) AND embedding IS NOT NULL GROUP BY 1",
        [[int(r[0]) for r in labels]],
    )
    return {h: np.asarray(v, dtype=np.float32) for h, v in rows}


def embed_rows(db: StoreDatabase, embedder: Embedder, rows: Sequence[NewMemory]) -> np.ndarray:
    """Vectors for new rows, one per row; texts stored before are not embedded again."""
    hashes = [r.embed_hash for r in rows]
    known = cached_vectors(db, hashes)
    todo: dict[str, int] = {}  # hash -> first row with that text
    for i, h in enumerate(hashes):
        if h not in known:
            todo.setdefault(h, i)
    if todo:
        texts = [embedding_text(rows[i].content, rows[i].context) for i in todo.values()]
        known.update(zip(todo, embedder.embed_batch(texts), strict=True))
    return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)


def stored_vector(db: StoreDatabase, memory_id: str) -> np.ndarray | None:
    """A memory's stored vector (None when it has none: purged)."""
    row = db.fetchone("SELECT embedding FROM memories WHERE id = ?", [memory_id])
    return None if row is None or row[0] is None else np.asarray(row[0], dtype=np.float32)
