"""Vectors on PostgreSQL: the ``memories.embedding`` column itself, searched through a
pgvector HNSW index on ``embedding::vector(dim)`` (inner product over the normalised vectors,
as hnswlib does in the embedded store).

The column is the same ``REAL[]`` as the embedded store's ``FLOAT[]`` list, so every module that
reads stored vectors works unchanged; the index is an expression index, partial on the live
rows, made once the store records its dimension. There is nothing to save, catch up or
reconcile: PostgreSQL keeps the index in step in the writing transaction, for every process.

**Pending vectors.** pgvector inserts into an HNSW graph one row at a time (a search at
``ef_construction`` plus page writes): 62 of 70 s of an ``add_many`` measured
(docs/benchmarks.md, "PostgreSQL: pending vectors"). So a new row lands with
``vector_pending`` true, outside the index (its predicate asks for ``NOT vector_pending``),
and a drain (:meth:`PgVectorIndex.drain`) later clears the flag in small batches, which is
when PostgreSQL puts the row in the graph. A search takes the index's
top k over the indexed rows and the exact top k over the pending ones (a partial b-tree keeps
that set at hand) in one statement, so one snapshot: a row is found in one half or the other,
never both or neither, whatever a drain does meanwhile. A drain killed mid-way rolls back and
its rows stay pending, still found.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localmem.store.postgres.db import PgDatabase
from localmem.store.store import LIVE

#: pgvector's largest hnsw.ef_search
_MAX_EF = 1000


#: the rows a drain has put in the HNSW index (a pending one is searched exactly)
INDEXED = f"{LIVE} AND NOT vector_pending"
#: the partial b-tree over the pending rows (the exact half of a search, the drain's queue)
PENDING_INDEX = "memories_vector_pending"


def index_name(dim: int) -> str:
    """The name of the HNSW index for vectors of ``dim`` dimensions."""
    return f"memories_indexed_hnsw_{int(dim)}"


def _old_index_name(dim: int) -> str:
    """The index before pending vectors (over every live row): kept by a store that has it."""
    return f"memories_embedding_hnsw_{int(dim)}"


def ensure_index(db: PgDatabase, dim: int, *, m: int, ef_construction: int) -> bool:
    """Make the ``vector_pending`` column, its partial index and the HNSW index for ``dim``
    unless they exist (under the migration lock, so two processes opening a new store do not
    both build it); True when the HNSW index was built.

    A store made before pending vectors keeps its index over every live row, and its adds go
    on indexing their vectors inline: rebuilding that index at open would stall a large store
    for long (43 minutes at 1M on this project's 2-core machine). A copy into a new database
    (``localmem migrate-store``) gives it pending vectors."""
    with db.advisory_lock():
        old_index = bool(db.scalar("SELECT to_regclass(?) IS NOT NULL", [_old_index_name(dim)]))
        # each DDL statement locks the table whole: only when something is missing
        if not has_pending_column(db):
            with db.transaction():
                # existing rows are indexed already (false)
                db.execute(
                    "ALTER TABLE memories ADD COLUMN vector_pending BOOLEAN NOT NULL DEFAULT false"
                )
                if not old_index:  # new rows pending
                    db.execute("ALTER TABLE memories ALTER COLUMN vector_pending SET DEFAULT true")
        if not db.scalar("SELECT to_regclass(?) IS NOT NULL", [PENDING_INDEX]):
            db.execute(f"CREATE INDEX {PENDING_INDEX} ON memories (label) WHERE vector_pending")
        if old_index or db.scalar("SELECT to_regclass(?) IS NOT NULL", [index_name(dim)]):
            return False
        create_index(db, dim, m=m, ef_construction=ef_construction)
        return True


def has_pending_column(db: PgDatabase) -> bool:
    """Whether the store has the ``vector_pending`` column (one made before has not until a
    writable open adds it)."""
    return bool(
        db.scalar(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = 'memories' "
            "AND column_name = 'vector_pending' AND table_schema = current_schema()"
        )
    )


def drop_indexes(db: PgDatabase, dim: int) -> None:
    """Drop the HNSW index (a bulk load builds it once, after)."""
    db.execute(f"DROP INDEX IF EXISTS {index_name(dim)}")
    db.execute(f"DROP INDEX IF EXISTS {_old_index_name(dim)}")


def create_index(db: PgDatabase, dim: int, *, m: int, ef_construction: int) -> None:
    """Build the HNSW index for ``dim`` over the live rows that are not pending."""
    db.execute(
        f"CREATE INDEX {index_name(dim)} ON memories USING hnsw "
        f"((embedding::vector({int(dim)})) vector_ip_ops) "
        f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) WHERE {INDEXED}"
    )


def build_memory_mb(rows: int, dim: int, m: int) -> int:
    """``maintenance_work_mem`` for building the index of ``rows`` vectors in memory: pgvector
    builds far slower once its graph outgrows it (the vector, two layers of neighbours, a
    third for overhead), capped at 8 GB."""
    per_row = dim * 4 + 2 * m * 8 + 64
    return int(min(8192, max(64, rows * per_row * 1.5 / 2**20)))


class PgVectorIndex:
    """What the store and the read pipeline use of :class:`~localmem.store.vectors.VectorIndex`,
    over the ``memories`` table."""

    def __init__(self, db: PgDatabase, dim: int, *, ef_search: int = 96) -> None:
        self.db = db
        self.dim = int(dim)
        self.ef_search = ef_search
        self._order = f"embedding::vector({self.dim}) <#> ?::vector({self.dim})"
        #: False for a store opened read-only before it had pending vectors (one index)
        self.deferred = has_pending_column(db)

    # the rows are the index: writes need nothing more
    def add(self, labels: Sequence[int] | np.ndarray, vectors: np.ndarray) -> None:
        """Nothing to do: the vectors were written with their rows."""

    def mark_deleted(self, labels: Sequence[int]) -> int:
        """Nothing to do: a deleted row leaves the partial index in its own transaction."""
        return len(labels)

    @property
    def live_count(self) -> int:
        """Vectors a search can return."""
        return int(self.db.scalar(f"SELECT count(*) FROM memories WHERE {LIVE}"))

    @property
    def deleted_labels(self) -> set[int]:
        """None: deleted rows are simply not in the partial index."""
        return set()

    def labels(self) -> np.ndarray:
        """Every live label."""
        rows = self.db.fetchall(f"SELECT label FROM memories WHERE {LIVE} ORDER BY label")
        return np.asarray([r[0] for r in rows], dtype=np.int64)

    def get(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored vectors of live labels, in order (``KeyError`` for a missing one)."""
        wanted = [int(x) for x in labels]
        if not wanted:
            return np.empty((0, self.dim), dtype=np.float32)
        rows = self.db.fetch_vectors(
            f"SELECT label, embedding::vector FROM memories WHERE {LIVE} "
            "AND label IN (SELECT unnest(?::BIGINT[]))",
            [wanted],
        )
        found = {int(label): vec.to_numpy() for label, vec in rows}
        try:
            return np.asarray([found[x] for x in wanted], dtype=np.float32).reshape(-1, self.dim)
        except KeyError as exc:
            raise KeyError(f"label {exc.args[0]} has no live vector") from None

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels by inner product through the HNSW index, best first."""
        if k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        # the beam must hold k results (pgvector returns at most ef_search rows)
        ef = min(_MAX_EF, max(self.ef_search, 2 * k))
        return self._nearest(query, k, f"SET LOCAL hnsw.ef_search = {int(ef)}")

    def exact(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k by a full scan (no index): what recall@10 of the HNSW search is measured
        against."""
        return self._nearest(query, k, "SET LOCAL enable_indexscan = off")

    def _nearest(self, query: np.ndarray, k: int, setting: str) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels and inner products, best first, under ``setting`` (one transaction):
        the index's top k of the indexed rows and the exact top k of the pending ones, merged
        (one statement, so one snapshot: a drain committing meanwhile moves no row out of
        sight)."""
        vec = "[" + ",".join(repr(float(x)) for x in np.asarray(query).ravel()) + "]"
        nearest = f"SELECT label, -({self._order}) AS score FROM memories WHERE"
        with self.db.transaction():
            self.db.execute(setting)
            if self.deferred:
                rows = self.db.fetchall(
                    f"({nearest} {INDEXED} ORDER BY {self._order} LIMIT ?) UNION ALL "
                    f"({nearest} {LIVE} AND vector_pending ORDER BY {self._order} LIMIT ?) "
                    "ORDER BY score DESC LIMIT ?",
                    [vec, vec, int(k), vec, vec, int(k), int(k)],
                )
            else:
                rows = self.db.fetchall(
                    f"{nearest} {LIVE} ORDER BY {self._order} LIMIT ?", [vec, vec, int(k)]
                )
        labels = np.asarray([r[0] for r in rows], dtype=np.int64)
        return labels, np.asarray([r[1] for r in rows], dtype=np.float32)

    # -- pending vectors -------------------------------------------------------------------------
    def pending_count(self) -> int:
        """Rows whose vector is not in the HNSW index yet (searched exactly meanwhile)."""
        if not self.deferred:
            return 0
        return int(self.db.scalar("SELECT count(*) FROM memories WHERE vector_pending"))

    def drain(self, limit: int) -> int:
        """Put up to ``limit`` pending vectors in the HNSW index, oldest first, in one
        transaction; returns how many. Rows another drainer (or a writer) holds are skipped
        (``SKIP LOCKED``), so two processes never index a row twice and never wait on each
        other. Deleted rows only lose the flag (the index's predicate leaves them out)."""
        if not self.deferred or limit <= 0:
            return 0
        with self.db.transaction():
            rows = self.db.fetchall(
                "WITH batch AS (SELECT id FROM memories WHERE vector_pending "
                "ORDER BY label LIMIT ? FOR UPDATE SKIP LOCKED) "
                "UPDATE memories m SET vector_pending = false FROM batch "
                "WHERE m.id = batch.id RETURNING m.label",
                [int(limit)],
            )
        return len(rows)
