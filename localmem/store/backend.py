"""The backend contract: what a store asks of its database, whichever it is.

Two backends implement :class:`StoreDatabase`: DuckDB (:class:`localmem.store.db.Database`,
one file, one writing process) and PostgreSQL (:class:`localmem.store.postgres.db.PgDatabase`,
a server, many writers). Both subclass it, so the type checker holds each to every method here;
the store, the kernel and the mechanisms' data modules are typed against it and run their SQL
on either unchanged (the SQL is DuckDB's spelling; the PostgreSQL side translates it).

A method one backend has and the other does not (PostgreSQL's ``fetch_vectors``, DuckDB's
``con``) stays off this contract: code that needs it asks which backend it has.

:class:`StoreVectors` is the other half: the vector index of a store, an hnswlib file beside
DuckDB (:class:`localmem.store.vectors.VectorIndex`) or pgvector's index over the rows
(:class:`localmem.store.postgres.vectors.PgVectorIndex`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: the parameters of one statement: positional (``?``) values, or named ones (DuckDB only)
Params: TypeAlias = Sequence[Any] | Mapping[str, Any] | None
#: one row of a result
Row: TypeAlias = tuple[Any, ...]


class StoreDatabase(Protocol):
    """A store's database: statements, transactions, migrations, the meta table, what
    ``doctor`` reads. Implemented by both backends (see the module's docstring)."""

    #: which migration files apply (``NNNN_name.<backend>.sql`` overrides ``NNNN_name.sql``)
    backend: str
    #: whether this process is the store's only writer: what it read stays true until it
    #: writes (``Kernel.kept``, ``Kernel.rows``); false where other processes may write
    one_writer: bool
    #: what locks a row read to write it (``records.fetch_locked``): empty with one writer
    row_lock: str
    #: whether the store was opened read-only
    read_only: bool
    #: what messages name as the database's place (a PostgreSQL address has no password here)
    path: Path

    # -- statements -------------------------------------------------------------------------
    @abstractmethod
    def execute(self, sql: str, params: Params = None) -> Any:
        """Run one statement; returns the backend's cursor (its rows are the caller's)."""

    @abstractmethod
    def fetchall(self, sql: str, params: Params = None) -> list[Row]:
        """Run a query and return every row."""

    @abstractmethod
    def fetchone(self, sql: str, params: Params = None) -> Row | None:
        """Run a query and return its first row (or None)."""

    @abstractmethod
    def scalar(self, sql: str, params: Params = None) -> Any:
        """Run a query and return the first column of its first row (or None)."""

    @abstractmethod
    def arrow(self, sql: str, params: Params = None) -> pa.Table:
        """Run a query and return a pyarrow table."""

    @abstractmethod
    def arrow_batches(
        self, sql: str, params: Params = None, *, rows: int = 50_000
    ) -> Iterator[pa.RecordBatch]:
        """Run a query and yield pyarrow record batches of about ``rows`` rows."""

    @abstractmethod
    def insert_arrow(self, table: str, data: pa.Table, columns: str = "*") -> None:
        """Bulk-insert a pyarrow table."""

    @abstractmethod
    def with_arrow(self, data: pa.Table, sql: str, params: Params = None) -> list[Row]:
        """Run ``sql`` with a pyarrow table visible as ``_arg``; returns the rows."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[StoreDatabase]:
        """One atomic unit: everything inside commits together or not at all. Nests."""

    @abstractmethod
    def advisory_lock(self, key: int = ...) -> AbstractContextManager[None]:
        """Hold a lock named ``key`` that other processes writing the store take too
        (``Kernel.serialised``); with one writer, nothing to hold."""

    # -- meta and migrations ----------------------------------------------------------------
    @abstractmethod
    def get_meta(self, key: str) -> str | None:
        """A value of the store's meta table."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the store's meta table."""

    @abstractmethod
    def applied_migrations(self) -> list[str]:
        """Names of the migrations this database has had."""

    @abstractmethod
    def migrate(self, packages: Sequence[str] = ()) -> list[str]:
        """Apply every migration not applied yet; returns them."""

    @abstractmethod
    def restart_sequence(self, name: str, start: int) -> None:
        """Make sequence ``name`` continue from ``start``."""

    @abstractmethod
    def checkpoint(self) -> None:
        """Let removed text leave the disk (after a purge)."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection(s)."""

    # -- what doctor reads ------------------------------------------------------------------
    @abstractmethod
    def make_private(self) -> None:
        """Owner-only access to the database's files, where it has files."""

    @abstractmethod
    def user_tables(self) -> list[tuple[str, str, int]]:
        """Every table as (schema, name, rows)."""

    @abstractmethod
    def is_unfinished(self) -> bool:
        """Whether this is a store whose creation was cut short (so it may be made again)."""

    @abstractmethod
    def read_all(self) -> list[str]:
        """Read everything stored, so damage shows; returns the problems found."""


class StoreVectors(Protocol):
    """A store's vector index: what the store, its repairs and the read pipeline use of it.
    Labels are the memories' integer labels; vectors are normalised (inner product)."""

    #: the dimension of every vector
    dim: int

    def add(self, labels: Sequence[int] | np.ndarray, vectors: np.ndarray) -> None:
        """Add (or replace) vectors under their labels."""

    def mark_deleted(self, labels: Sequence[int]) -> int:
        """Hide labels from search; returns how many were hidden."""

    @property
    def live_count(self) -> int:
        """Vectors a search can return."""

    @property
    def deleted_labels(self) -> set[int]:
        """Labels in the index that a search no longer returns."""

    def labels(self) -> np.ndarray:
        """Every label in the index (deleted ones included, where it keeps them)."""

    def get(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored vectors of live labels, in order (``KeyError`` for a missing one)."""

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels by inner product, best first, with their similarity."""
