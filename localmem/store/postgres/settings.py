"""The PostgreSQL server settings a store's size asks for (`localmem doctor` shows them).

Measured at a million memories (docs/benchmarks.md, "PostgreSQL at scale"):

- ``shared_buffers``: pgvector reads the HNSW graph through PostgreSQL's buffer cache. With the
  default 128 MB and a 2 GB index, dense search at 1M measured p95 486 ms, most of it pages
  copied in from the operating system's cache; each insert walks the graph the same way (an add
  is a search at ``ef_construction`` plus the writes). A hybrid search also reads the BM25
  postings' indexes (``lex_postings_impact`` and ``lex_postings_label``, 834 MB at 1M), which
  evict the graph's pages from buffers sized for the graph alone. The buffers should hold all
  three, with room for the tables' hot pages: their size plus a quarter, at least 128 MB.
- ``maintenance_work_mem``: building the index (opening a store whose index is missing,
  ``REINDEX``, ``migrate-store``'s bulk load, which sets it itself for its own build) is many
  times faster when the graph fits in it (:func:`localmem.store.postgres.vectors.build_memory_mb`).

A setting already at or above its recommendation is reported as fine; a lower one comes with
the ``ALTER SYSTEM`` statement that raises it (``shared_buffers`` takes a server restart).
"""

from __future__ import annotations

from dataclasses import dataclass

from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.indexes import INDEXES
from localmem.store.postgres.vectors import build_memory_mb, index_name

MB = 2**20
#: the BM25 postings' indexes a hybrid search reads (besides the HNSW index)
SEARCHED_INDEXES = tuple(name for name, (table, _) in INDEXES.items() if table == "lex_postings")


@dataclass(frozen=True)
class Advice:
    """One server setting: what it is, what the store asks for, and why."""

    name: str
    current_mb: int
    recommended_mb: int
    reason: str

    @property
    def ok(self) -> bool:
        """Whether the setting already meets the recommendation."""
        return self.current_mb >= self.recommended_mb

    def line(self) -> str:
        """What `localmem doctor` prints."""
        if self.ok:
            return f"{self.current_mb} MB (>= {self.recommended_mb} MB: {self.reason})"
        restart = " and restart the server" if self.name == "shared_buffers" else ""
        return (
            f"{self.current_mb} MB, recommended {self.recommended_mb} MB ({self.reason}): "
            f"ALTER SYSTEM SET {self.name} = '{self.recommended_mb}MB'{restart}"
        )


def advise(db: PgDatabase, *, dim: int | None, m: int, rows: int) -> list[Advice]:
    """The settings this store wants from its server (``rows``: its live memories)."""
    searched = [*SEARCHED_INDEXES, *([index_name(dim)] if dim else [])]
    index_bytes = int(
        db.scalar(
            "SELECT coalesce(sum(pg_relation_size(to_regclass(x))), 0) "
            "FROM unnest(?::VARCHAR[]) AS x",
            [searched],
        )
    )
    shared = _mb(db, "shared_buffers")
    maintenance = _mb(db, "maintenance_work_mem")
    index_mb = -(-index_bytes // MB)
    return [
        Advice(
            "shared_buffers",
            shared,
            max(128, int(index_mb * 1.25)),
            f"the HNSW index and the BM25 postings' indexes are {index_mb} MB; searches and adds "
            "read them through these buffers",
        ),
        Advice(
            "maintenance_work_mem",
            maintenance,
            build_memory_mb(rows, dim or 0, m) if dim else 64,
            f"building the HNSW index of {rows} vectors in memory",
        ),
    ]


def _mb(db: PgDatabase, name: str) -> int:
    return int(db.scalar(f"SELECT pg_size_bytes(current_setting('{name}'))")) // MB
