"""The PostgreSQL side of a store: :class:`PgDatabase` has the methods of
:class:`localmem.store.db.Database`, so the store, the kernel and the mechanisms' data modules
run their SQL on either backend unchanged.

What differs is handled here, in one place:

- paramstyle: DuckDB's ``?`` becomes psycopg's ``%s`` (and a literal ``%`` is doubled);
- DuckDB functions the shared SQL uses (``range(n)``, ``json_extract_string``) exist as small
  SQL functions made by ``0001_initial.postgres.sql``;
- pyarrow in and out: a table handed in is copied (``COPY``) into a temporary table of the
  same name (``_arg`` or ``_arrow``) the statement reads; results come back as pyarrow tables;
- JSON columns come back as text and ``numeric`` as float, as DuckDB gives them;
- connections: a psycopg pool (``store.pg_pool_size``, 4 by default; ``pool.py``), so one
  process's threads read at once; a transaction keeps its connection for its thread;
- errors: a lost connection is a :class:`StoreConnectionError` naming the store without its
  password; the pool checks a connection before lending it and replaces a lost one, so a retry
  works. Migrations run once among all
  the processes that open the database, under an advisory lock.
"""

from __future__ import annotations

import importlib
import logging
import re
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from localmem.errors import StoreConnectionError, StoreError, StoreReadOnlyError
from localmem.store.address import StoreAddress
from localmem.store.backend import Params, Row, StoreDatabase
from localmem.store.db import MetaTable, list_migrations, split_sql, utcnow
from localmem.store.postgres import arrow
from localmem.store.postgres.pool import Connections

log = logging.getLogger("localmem.store")

#: the advisory lock key migrations run under (any constant shared by every localmem process)
MIGRATION_LOCK = 0x6C6F63616C6D656D  # "localmem"
_DOUBLE = re.compile(r"::DOUBLE\b(?!\s+PRECISION)", re.IGNORECASE)


class PgDatabase(MetaTable, StoreDatabase):
    """A PostgreSQL database with the methods of :class:`~localmem.store.db.Database`, on a
    pool of psycopg 3 connections (:class:`~localmem.store.postgres.pool.Connections`: a
    statement borrows one for its own length; a transaction keeps one for its thread)."""

    backend = "postgres"
    one_writer = False  # any process with the address may write
    row_lock = " FOR UPDATE"  # a row read to write it waits for another process's change

    def __init__(
        self, address: str | StoreAddress, *, read_only: bool = False, pool_size: int = 4
    ) -> None:
        self.address = StoreAddress.parse(address)
        self.location = self.address.shown
        self.path = Path(self.location)  # what messages name (never the password)
        self.read_only = read_only
        self._sql: dict[tuple[str, bool], str] = {}
        self._with_vector_types: weakref.WeakSet[Any] = weakref.WeakSet()
        self.conns = Connections(self.address, read_only=read_only, size=pool_size)

    @property
    def pool(self) -> Any:
        """The psycopg connection pool."""
        return self.conns.pool

    def _scrub(self, exc: BaseException) -> str:
        """The first line of an error, nothing of the address's secret in it."""
        return self.address.describe(exc)

    @contextmanager
    def guarded(self) -> Iterator[Any]:
        """The calling thread's connection for the block (:meth:`Connections.held`), with
        psycopg's errors as the store's."""
        with self.conns.held() as con, self._errors(con):
            yield con

    @contextmanager
    def _errors(self, con: Any) -> Iterator[None]:
        """psycopg's errors on ``con`` as the store's: a lost connection is
        :class:`StoreConnectionError`, a write to a read-only store :class:`StoreReadOnlyError`."""
        import psycopg

        try:
            yield
        except psycopg.errors.ReadOnlySqlTransaction:
            raise StoreReadOnlyError(
                f"store {self.location} is open read-only: it cannot be changed"
            ) from None
        except psycopg.OperationalError as exc:
            if con.closed or con.broken:
                raise StoreConnectionError(
                    f"lost the connection to the store {self.location} ({self._scrub(exc)}); "
                    "what was not committed is not stored; try again"
                ) from None
            raise

    def _translate(self, sql: str, params: bool) -> str:
        """DuckDB's spelling as PostgreSQL's: ``?`` placeholders as ``%s`` (our SQL has no
        ``?`` inside literals), ``::DOUBLE`` as ``::DOUBLE PRECISION``."""
        key = (sql, params)
        out = self._sql.get(key)
        if out is None:
            out = _DOUBLE.sub("::DOUBLE PRECISION", sql)
            if params:
                out = out.replace("%", "%%").replace("?", "%s")
            self._sql[key] = out
        return out

    def execute(self, sql: str, params: Params = None) -> Any:
        """Run one statement (on a pooled connection, or the transaction's); returns the cursor."""
        with self.guarded() as con:
            if params is None:
                return con.execute(self._translate(sql, False))
            return con.execute(self._translate(sql, True), list(params))

    def fetchall(self, sql: str, params: Params = None) -> list[Row]:
        """Run a query and return every row."""
        with self.guarded():
            cur = self.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def fetch_vectors(self, sql: str, params: Params = None) -> list[Row]:
        """Run a query whose columns include ``vector`` values and return every row, read in
        PostgreSQL's binary format with pgvector's adapter (numpy arrays): parsing 384 floats
        a row from text cost about 0.15 ms, so an exact search over a user's 600 memories
        spent 100 ms reading their vectors."""
        from pgvector.psycopg import register_vector

        with self.guarded() as con:
            if con not in self._with_vector_types:
                register_vector(con)
                self._with_vector_types.add(con)
            cur = con.cursor(binary=True)
            cur.execute(self._translate(sql, params is not None), params)
            rows: list[Row] = cur.fetchall()
            return rows

    def fetchone(self, sql: str, params: Params = None) -> Row | None:
        """Run a query and return its first row (or None)."""
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Params = None) -> Any:
        """Run a query and return the first column of its first row."""
        row = self.fetchone(sql, params)
        return row[0] if row else None

    def arrow(self, sql: str, params: Params = None) -> pa.Table:
        """Run a query and return a pyarrow table."""
        with self.guarded():
            cur = self.execute(sql, params)
            return arrow.table(cur.description, cur.fetchall())

    def arrow_batches(
        self, sql: str, params: Params = None, *, rows: int = 50_000
    ) -> Iterator[pa.RecordBatch]:
        """Run a query and yield pyarrow record batches of about ``rows`` rows, streamed by a
        server-side cursor, so a copy of a large table never holds all of it. The cursor has
        a connection of its own (the thread's, within its transaction, when it holds one)
        and touches nothing of the thread's state while the generator is suspended."""
        with self.conns.own() as con, self._errors(con), con.transaction():
            cur = con.cursor(name=self.conns.cursor_name())
            try:
                cur.execute(self._translate(sql, params is not None), params)
                while chunk := cur.fetchmany(rows):
                    yield from arrow.table(cur.description, chunk).to_batches()
            finally:
                if not (con.closed or con.broken):
                    cur.close()

    def insert_arrow(self, table: str, data: pa.Table, columns: str = "*") -> None:
        """Bulk-insert a pyarrow table (``COPY`` into a temporary table, one INSERT)."""
        with self.transaction(), self._staged(data, "_arrow"):
            self.execute(f"INSERT INTO {table} SELECT {columns} FROM _arrow")

    def with_arrow(self, data: pa.Table, sql: str, params: Params = None) -> list[Row]:
        """Run ``sql`` with a pyarrow table visible as ``_arg``; returns the rows."""
        with self.transaction(), self._staged(data, "_arg"):
            cur = self.execute(sql, params)
            return cur.fetchall() if cur.description else []

    @contextmanager
    def _staged(self, data: pa.Table, name: str) -> Iterator[None]:
        """``data`` as the temporary table ``name`` (inside a transaction: its connection)."""
        with self.guarded() as con:
            con.execute(f"CREATE TEMP TABLE {name} ({arrow.columns_ddl(data.schema)})")
            try:
                arrow.copy_into(con, name, data)
                yield
            finally:
                if not (con.closed or con.broken):
                    con.execute(f"DROP TABLE IF EXISTS {name}")

    @contextmanager
    def transaction(self) -> Iterator[PgDatabase]:
        """One atomic unit: everything inside commits together or not at all. Nests."""
        conns = self.conns
        with self.guarded() as con:
            if conns.depth:
                conns.depth += 1
                try:
                    yield self
                finally:
                    conns.depth -= 1
                return
            con.execute("BEGIN")
            conns.depth = 1
            try:
                yield self
            except BaseException:
                conns.depth = 0
                if not (con.closed or con.broken):
                    con.execute("ROLLBACK")
                raise
            conns.depth = 0
            con.execute("COMMIT")

    # -- meta and migrations ----------------------------------------------------------------
    def applied_migrations(self) -> list[str]:
        """Names of the migrations this database has had."""
        if self.scalar("SELECT to_regclass('schema_migrations') IS NOT NULL") is not True:
            return []
        return [r[0] for r in self.fetchall("SELECT name FROM schema_migrations ORDER BY name")]

    def migrate(self, packages: Sequence[str] = ()) -> list[str]:
        """Apply every migration not applied yet, each in its own transaction, while holding
        an advisory lock: of several processes opening a new database at once, one migrates
        and the others then find it done."""
        import psycopg

        with self.guarded() as con, self.advisory_lock():
            applied: list[str] = []
            try:
                con.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    "name VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL)"
                )
                done = set(self.applied_migrations())
                for name, file, package in list_migrations(packages, self.backend):
                    if name in done:
                        continue
                    with self.transaction():
                        if file.endswith(".sql"):
                            text = resources.files(package).joinpath(file).read_text("utf-8")
                            for statement in split_sql(text):
                                con.execute(statement)
                        else:
                            importlib.import_module(f"{package}.{name}").migrate(self)
                        self.execute(
                            "INSERT INTO schema_migrations VALUES (?, ?)", [name, utcnow()]
                        )
                    applied.append(name)
            except psycopg.errors.InsufficientPrivilege as exc:
                # typically CREATE EXTENSION vector by a role that may not: say what to ask for
                raise StoreError(
                    f"cannot set up the store in {self.location}: {self._scrub(exc)} (a "
                    "database owner must run CREATE EXTENSION vector, or grant the role "
                    "what it needs)"
                ) from None
            return applied

    @contextmanager
    def advisory_lock(self, key: int = MIGRATION_LOCK) -> Iterator[None]:
        """Hold PostgreSQL's session advisory lock ``key`` (one process at a time): the
        migrations', or another (``Kernel.serialised``)."""
        with self.guarded() as con:  # held by this thread until the lock is released
            con.execute("SELECT pg_advisory_lock(%s)", [key])
            try:
                yield
            finally:
                if not (con.closed or con.broken):
                    con.execute("SELECT pg_advisory_unlock(%s)", [key])

    def restart_sequence(self, name: str, start: int) -> None:
        """Make sequence ``name`` continue from ``start``."""
        self.execute("SELECT setval(?, ?, false)", [name, int(start)])

    def checkpoint(self) -> None:
        """After a purge: vacuum the tables that held the text, so the dead row versions'
        space is reclaimed (the text may stay in the WAL until the server recycles it)."""
        if not self.conns.depth:  # VACUUM cannot run inside a transaction
            self.execute("VACUUM memories, history")

    def close(self) -> None:
        """Close every connection of the pool."""
        self.conns.close()

    # -- what doctor reads -------------------------------------------------------------------
    def make_private(self) -> None:
        """Nothing to do: access to the database is the server's (roles and grants)."""

    def user_tables(self) -> list[tuple[str, str, int]]:
        """Every table of the current schema as (schema, name, rows)."""
        tables = self.fetchall(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1, 2"
        )
        return [
            (schema, name, int(self.scalar(f'SELECT count(*) FROM "{schema}"."{name}"')))
            for schema, name in tables
        ]

    def is_unfinished(self) -> bool:
        """A creation cut short cannot happen here: each migration is one transaction."""
        return False

    def read_all(self) -> list[str]:
        """Read every table of the store (the server checks its pages' checksums when it was
        initialised with them); returns the problems found."""
        problems = []
        for schema, name, _ in self.user_tables():
            try:
                self.fetchall(f'SELECT count(*) FROM (SELECT * FROM "{schema}"."{name}") t')
            except StoreError as exc:
                problems.append(f"table {name}: {exc}")
        return problems
