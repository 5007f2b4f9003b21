"""The DuckDB side of a store: connection, named and ordered migrations, transactions."""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from localmem.errors import StoreError, StoreReadOnlyError
from localmem.store.backend import Params, Row, StoreDatabase

if TYPE_CHECKING:
    import pyarrow as pa

DB_FILE = "localmem.duckdb"
CORE_MIGRATIONS = "localmem.store.migrations"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+(?:\.([a-z]+))?\.(sql|py)$")


def utcnow() -> datetime:
    """Now, in UTC without tzinfo: how every timestamp is kept in DuckDB."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def list_migrations(
    packages: Sequence[str] = (), backend: str = "duckdb"
) -> list[tuple[str, str, str]]:
    """The migrations of the core and of ``packages`` as (name, file, package), in the order
    they apply: by their number, whichever package holds them.

    A migration is a file ``NNNN_name.sql`` (statements) or ``NNNN_name.py`` (a module with
    ``migrate(con)``) in ``localmem/store/migrations`` (the core tables) or in a mechanism's
    ``migrations`` package (its own tables). Each runs once, in its own transaction. Where a
    backend's DDL differs, ``NNNN_name.<backend>.sql`` beside it replaces it for that backend
    (``0001_initial.postgres.sql``): the migration keeps its name, so a store copied from one
    backend to the other has the same migrations recorded.
    """
    found: dict[str, tuple[str, str]] = {}
    overrides: dict[str, tuple[str, str]] = {}
    for package in dict.fromkeys([CORE_MIGRATIONS, *packages]):
        for entry in resources.files(package).iterdir():
            m = _MIGRATION_NAME.match(entry.name)
            if not m:
                continue
            name = entry.name.split(".", 1)[0]
            if m.group(2) is None:
                found[name] = (entry.name, package)
            elif m.group(2) == backend:
                overrides[name] = (entry.name, package)
    found.update((name, file) for name, file in overrides.items() if name in found)
    numbers = [name[:4] for name in found]
    if len(numbers) != len(set(numbers)):
        raise StoreError(f"two migrations share a number: {sorted(numbers)}")
    return [(name, *found[name]) for name in sorted(found)]


class MetaTable:
    """The store's ``meta`` key-value rows, on any backend's connection (the SQL is the same)."""

    def scalar(self, sql: str, params: Params = None) -> Any:  # pragma: no cover - the backends'
        raise NotImplementedError

    def execute(self, sql: str, params: Params = None) -> Any:  # pragma: no cover - the backends'
        raise NotImplementedError

    def get_meta(self, key: str) -> str | None:
        """A value of the store's meta table."""
        value = self.scalar("SELECT value FROM meta WHERE key = ?", [key])
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        """Set a value of the store's meta table."""
        self.execute(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, value],
        )


class Database(MetaTable, StoreDatabase):
    """A DuckDB connection with a lock, so worker threads (TUI, job runner) can share it."""

    #: which migration files apply (``NNNN_name.<backend>.sql`` overrides ``NNNN_name.sql``)
    backend = "duckdb"
    #: only this process writes the file (DuckDB allows one read-write process): what it read
    #: stays true until it writes (``Kernel.generation``)
    one_writer = True
    #: what locks a row read to write it (``records.fetch_locked``): one writing process and
    #: its store lock need none
    row_lock = ""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._wal = Path(str(path) + ".wal")
        try:
            self.con = duckdb.connect(str(path), read_only=read_only)
            if not read_only:
                self.make_private()
            # no progress bars: DuckDB draws them on stdout during long queries (an index
            # rebuild at 1M memories), into a person's terminal or a script's JSON output
            self.con.execute("SET enable_progress_bar = false")
        except duckdb.IOException as exc:
            raise StoreError(f"cannot open database {path}: {_first_line(exc)}") from None
        except duckdb.Error as exc:
            raise StoreError(
                f"{path} is not a readable localmem database: {_first_line(exc)}"
            ) from None
        self.lock = threading.RLock()
        self._in_tx = 0

    # -- statements -------------------------------------------------------------------------
    @contextmanager
    def guarded(self) -> Iterator[None]:
        """Hold the connection lock; turn DuckDB's errors about the file (damage, I/O, a write
        on a read-only store) into :class:`StoreError` with advice, and keep the files private
        after a write (DuckDB makes its WAL anew with the process umask)."""
        with self.lock:
            try:
                yield
            except duckdb.Error as exc:
                raise _translate(exc, self.path) from None
            finally:
                if not self.read_only and not self._in_tx:
                    self._private_wal()

    def execute(self, sql: str, params: Params = None) -> duckdb.DuckDBPyConnection:
        """Run one statement (under the connection lock)."""
        with self.guarded():
            return self.con.execute(sql, params) if params is not None else self.con.execute(sql)

    def fetchall(self, sql: str, params: Params = None) -> list[Row]:
        """Run a query and return every row."""
        with self.guarded():
            return self.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Params = None) -> Row | None:
        """Run a query and return its first row (or None)."""
        with self.guarded():
            rows = self.execute(sql, params).fetchall()  # a half-read result blocks the connection
            return rows[0] if rows else None

    def scalar(self, sql: str, params: Params = None) -> Any:
        """Run a query and return the first column of its first row."""
        row = self.fetchone(sql, params)
        return row[0] if row else None

    def arrow(self, sql: str, params: Params = None) -> pa.Table:
        """Run a query and return a pyarrow table (bulk reads without a Python object per row)."""
        with self.guarded():
            return self.con.sql(sql, params=params).to_arrow_table()

    def arrow_batches(
        self, sql: str, params: Params = None, *, rows: int = 50_000
    ) -> Iterator[pa.RecordBatch]:
        """Run a query and yield pyarrow record batches of about ``rows`` rows."""
        with self.guarded():
            yield from self.con.sql(sql, params=params).to_arrow_reader(rows)

    def insert_arrow(self, table: str, data: pa.Table, columns: str = "*") -> None:
        """Bulk-insert a pyarrow table (one statement, no Python loop per row)."""
        with self.guarded():
            name = f"_arrow_{id(data)}"
            self.con.register(name, data)
            try:
                self.con.execute(f"INSERT INTO {table} SELECT {columns} FROM {name}")
            finally:
                self.con.unregister(name)

    def with_arrow(self, data: pa.Table, sql: str, params: Params = None) -> list[Row]:
        """Run ``sql`` with a pyarrow table visible as ``_arg``; returns the rows."""
        with self.guarded():
            self.con.register("_arg", data)
            try:
                return (
                    self.con.execute(sql, params).fetchall()
                    if params is not None
                    else (self.con.execute(sql).fetchall())
                )
            finally:
                self.con.unregister("_arg")

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """One atomic unit: everything inside commits together or not at all. Nests."""
        with self.guarded():
            if self._in_tx:
                self._in_tx += 1
                try:
                    yield self
                finally:
                    self._in_tx -= 1
                return
            self.con.execute("BEGIN TRANSACTION")
            self._in_tx = 1
            try:
                yield self
            except BaseException:
                self._in_tx = 0
                self.con.execute("ROLLBACK")
                raise
            self._in_tx = 0
            self.con.execute("COMMIT")

    @contextmanager
    def advisory_lock(self, key: int = 0) -> Iterator[None]:
        """Nothing to hold: this process is the file's only writer (DuckDB allows one)."""
        yield

    # -- meta and migrations ----------------------------------------------------------------
    def applied_migrations(self) -> list[str]:
        """Names of the migrations this database has had."""
        exists = self.scalar(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'"
        )
        if not exists:
            return []
        return [r[0] for r in self.fetchall("SELECT name FROM schema_migrations ORDER BY name")]

    def migrate(self, packages: Sequence[str] = ()) -> list[str]:
        """Apply every migration (core and ``packages``) not applied yet, each in its own
        transaction; returns them."""
        with self.guarded():
            self.con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "name VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL)"
            )
            done = set(self.applied_migrations())
            applied = []
            for name, file, package in list_migrations(packages, self.backend):
                if name in done:
                    continue
                with self.transaction():
                    if file.endswith(".sql"):
                        sql = resources.files(package).joinpath(file)
                        for statement in split_sql(sql.read_text(encoding="utf-8")):
                            self.con.execute(statement)
                    else:
                        module = importlib.import_module(f"{package}.{name}")
                        module.migrate(self.con)
                    self.con.execute(
                        "INSERT INTO schema_migrations VALUES (?, ?)", [name, utcnow()]
                    )
                applied.append(name)
            return applied

    def restart_sequence(self, name: str, start: int) -> None:
        """Make sequence ``name`` continue from ``start`` (a copied store's numbers go on after
        the copied rows'). DuckDB has no setval: the sequence is made again."""
        self.execute(f"CREATE OR REPLACE SEQUENCE {name} START {int(start)} MINVALUE 0")

    def checkpoint(self) -> None:
        """Write the WAL into the database file (after a purge, so removed text leaves the disk)."""
        with self.guarded():
            self.con.execute("CHECKPOINT")

    def close(self) -> None:
        """Close the connection."""
        with self.lock:
            self.con.close()

    # -- the files ----------------------------------------------------------------------------
    def make_private(self) -> None:
        """Owner-only permissions on the database file and its WAL, whatever the umask."""
        _chmod_private(self.path)
        self._private_wal()

    def _private_wal(self) -> None:
        _chmod_private(self._wal)

    def user_tables(self) -> list[tuple[str, str, int]]:
        """Every table of the file as (schema, name, rows): what `doctor` reads and what
        decides whether an uninitialised file holds anything."""
        tables = self.fetchall(
            "SELECT schema_name, table_name FROM duckdb_tables() "
            "WHERE database_name = current_database() AND NOT temporary ORDER BY 1, 2"
        )
        return [
            (schema, name, int(self.scalar(f'SELECT count(*) FROM "{schema}"."{name}"')))
            for schema, name in tables
        ]

    def is_unfinished(self) -> bool:
        """Whether this file is a store whose creation was cut short: no localmem migration
        committed and no row in any table (a kill between DuckDB making the file and the first
        migration's commit). Such a file holds nothing, so it may be initialised again."""
        if self.applied_migrations():
            return False
        if self.fetchone("SELECT 1 FROM duckdb_views() WHERE NOT internal AND NOT temporary"):
            return False  # someone's views: not ours to take over
        return all(
            name == "schema_migrations" and rows == 0 for _, name, rows in self.user_tables()
        )

    def read_all(self) -> list[str]:
        """Read every column of every table, then every single-column index through the index,
        so DuckDB verifies the checksum of every block it stores them in (it reads an index's
        blocks only when a query uses that index); returns the problems found."""
        problems = []
        for schema, name in self.fetchall(
            "SELECT schema_name, table_name FROM duckdb_tables() "
            "WHERE database_name = current_database() AND NOT temporary ORDER BY 1, 2"
        ):
            try:
                for _ in self.arrow_batches(f'SELECT * FROM "{schema}"."{name}"'):
                    pass
            except StoreError as exc:
                problems.append(f"table {name}: {exc}")
        keyed = self.fetchall(
            "SELECT table_name, constraint_column_names[1] FROM duckdb_constraints() "
            "WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE') AND database_name = "
            "current_database()"
        ) + [
            (table, expr.strip("[]'\" "))
            for table, expr in self.fetchall(
                "SELECT table_name, CAST(expressions AS VARCHAR) FROM duckdb_indexes() "
                "WHERE database_name = current_database()"
            )
        ]
        # a range over the whole key, scanned through the index whatever its size
        self.execute("SET index_scan_percentage = 1.0")
        self.execute("SET index_scan_max_count = 9223372036854775807")
        try:
            for table, column in keyed:
                if not _IDENTIFIER.match(column):
                    continue  # an index on an expression: not ours, not checked
                try:
                    self.fetchall(
                        f'SELECT count(*) FROM "{table}" WHERE "{column}" >= '
                        f'(SELECT min("{column}") FROM "{table}")'
                    )
                except StoreError as exc:
                    problems.append(f"index on {table}.{column}: {exc}")
        finally:
            self.execute("RESET index_scan_percentage")
            self.execute("RESET index_scan_max_count")
        return problems


def split_sql(text: str) -> list[str]:
    """Statements of a migration file (no semicolons inside literals in our migrations)."""
    lines = [line for line in text.splitlines() if not line.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def _chmod_private(path: Path) -> None:
    # missing, of another owner, on a read-only filesystem: nothing to make private
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)


_DAMAGE = ("corrupt", "checksum", "not a valid duckdb")


def _translate(exc: duckdb.Error, path: Path) -> Exception:
    """A DuckDB error about the store's file as a StoreError; anything else as it came."""
    message = _first_line(exc)
    lower = message.lower()
    if "read-only mode" in lower:
        return StoreReadOnlyError(
            f"store {path.parent} is open read-only (its folder or filesystem is not "
            "writable): it cannot be changed"
        )
    if any(word in lower for word in _DAMAGE):
        return StoreError(
            f"the store database {path} is damaged ({message}); "
            "run `localmem doctor` and restore it from a backup"
        )
    if isinstance(exc, (duckdb.IOException, duckdb.FatalException)):  # a full disk, I/O errors
        return StoreError(f"cannot read or write the store database {path}: {message}")
    return exc


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
