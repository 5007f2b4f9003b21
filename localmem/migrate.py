"""``localmem migrate-store SRC DST``: copy a store to another backend (a folder <-> a
PostgreSQL database) and check the copy.

The copy itself is the store's (:func:`localmem.store.copy.copy_store`); this module opens both
ends with the same embedder and verifies what a person relies on: every table holds as many
rows, and a sample of searches (queries made of stored memories' own text, in every mode)
returns the same memories in the same order on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from localmem.errors import StoreError
from localmem.memory import Memory
from localmem.store.copy import copy_store, table_counts
from localmem.types import Mode

MODES: tuple[Mode, ...] = ("lexical", "dense", "hybrid")


def _sample_queries(memory: Memory, n: int) -> list[str]:
    items = memory.list(limit=1_000_000, oldest_first=True)
    if not items:
        return []
    step = max(1, len(items) // n)
    return [" ".join(item.content.split()[:12]) for item in items[::step][:n]]


def migrate_store(
    src: str | Path,
    dst: str | Path,
    *,
    samples: int = 20,
    k: int = 10,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, Any]:
    """Copy the store at ``src`` into a new store at ``dst`` and verify the copy.

    Returns the rows copied per table, the tables whose counts differ, and per search mode how
    many sampled searches returned the same ids in the same order.

    Raises:
        StoreError: ``src`` holds no store, ``dst`` is not empty, or the copy does not verify
            (the destination is left as it is, for a look).
    """
    with Memory.open(src, create=False) as source:
        target = Memory.open(dst, embedder=source.embedder)
        try:
            copied = copy_store(source.store, target.store, progress=progress)
        finally:
            target.close()
        # opened again: the embedded index catches up with the copied rows
        with Memory.open(dst, embedder=source.embedder, create=False) as target:
            a, b = table_counts(source.store), table_counts(target.store)
            differ = sorted(t for t in a if a[t] != b.get(t))
            queries = _sample_queries(source, samples)
            same = {mode: 0 for mode in MODES}
            for query in queries:
                for mode in MODES:
                    left = [h.memory.id for h in source.search(query, k=k, mode=mode)]
                    right = [h.memory.id for h in target.search(query, k=k, mode=mode)]
                    same[mode] += left == right
    report = {
        "from": source.store.location,
        "to": target.store.location,
        "rows": copied,
        "tables_differ": differ,
        "searches": len(queries),
        "same_results": same,
    }
    if differ:
        raise StoreError(f"the copy's row counts differ in {', '.join(differ)}")
    return report
