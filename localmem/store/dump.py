"""A store as lines of JSON and back (``localmem export`` / ``localmem import``).

:func:`dump` reads every table (the core's and the mechanisms': memories with their scopes,
times, validity, metadata and stored vectors, history, links, attributes, sessions, jobs...)
in one transaction under the store's write lock, so the export is one consistent moment even
while a server keeps writing; each row becomes ``{"table": name, "row": {column: value}}``
after a header line. :func:`load` writes such lines into an empty store row for row, with the
same ids, labels and numbers (as ``migrate-store`` copies: :mod:`localmem.store.copy`), so
nothing is lost and nothing points elsewhere; the vector index follows from the rows when the
store is next opened. Every value travels as JSON and is cast back by the database to its
column's type (PostgreSQL's arrays element by element), so one format serves both backends:
an export of either loads into the other (the BM25 counts only PostgreSQL keeps are left out of
a folder store and counted again on PostgreSQL).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa

from localmem.errors import InputError, StoreError
from localmem.store.copy import (
    DERIVED_COLUMNS,
    RECOUNTED_COLUMNS,
    SKIPPED,
    advance_sequences,
    columns_of,
    forget_terms_on_postgres,
)
from localmem.store.store import Store

FORMAT = "localmem-export"
VERSION = 1


def _plain(value: Any) -> Any:
    """A value of a row as JSON can carry it (times as ISO 8601 with their offset)."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def tables_of(store: Store) -> list[str]:
    """The tables an export carries, memories first (the rest point at them)."""
    names = {name for _, name, _ in store.db.user_tables()} - SKIPPED
    return sorted(names, key=lambda name: (name != "memories", name))


def dump(store: Store) -> list[dict[str, Any]]:
    """Every row of the store as export lines, the header first, read as one moment (on
    PostgreSQL, one REPEATABLE READ transaction: other processes' commits stay out of it)."""
    lines: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    with store.write_lock, store.db.transaction():
        if store.db.backend == "postgres":  # the first statement of the transaction
            store.db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        for table in tables_of(store):
            rows = [
                {c: v for c, v in row.items() if c not in DERIVED_COLUMNS}
                for row in store.db.arrow(f'SELECT * FROM "{table}"').to_pylist()
            ]
            counts[table] = len(rows)
            lines.extend({"table": table, "row": _plain(row)} for row in rows)
        migrations = store.db.applied_migrations()
    header = {"format": FORMAT, "version": VERSION, "tables": counts, "migrations": migrations}
    return [header, *lines]


def read_header(line: Mapping[str, Any]) -> dict[str, int]:
    """The rows per table a header announces.

    Raises:
        InputError: not the header of a localmem export of a version this code reads.
    """
    if not isinstance(line, Mapping) or line.get("format") != FORMAT:
        raise InputError("not a localmem export: its first line has no format 'localmem-export'")
    if line.get("version") != VERSION:
        raise InputError(f"a localmem export of version {line.get('version')!r}; this reads 1")
    tables = line.get("tables")
    if not isinstance(tables, Mapping):
        raise InputError("the export's header has no table counts")
    return {str(k): int(v) for k, v in tables.items()}


def _rows_by_table(lines: Iterable[Mapping[str, Any]]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    for n, line in enumerate(lines, start=2):
        if not isinstance(line, Mapping) or not isinstance(line.get("table"), str):
            raise InputError(f"line {n} of the export is not a row (no table)")
        row = line.get("row")
        if not isinstance(row, Mapping):
            raise InputError(f"line {n} of the export has no row object")
        yield n, line["table"], dict(row)


def load(store: Store, lines: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Write an export's lines (header first) into an empty store; returns rows per table.
    Everything is written in one transaction: a bad line leaves the store as it was.

    Raises:
        InputError: the lines are not an export, a row names an unknown table or column, or
            the counts differ from the header's.
        StoreError: the store already holds memories.
    """
    lines = iter(lines)
    header = next(lines, None)
    if header is None:
        raise InputError("the export is empty (no header line)")
    # tables no export carries now (derived ones: the packs, by code before them) are left out
    announced = read_header(header)
    expected = {table: n for table, n in announced.items() if table not in SKIPPED}
    if store.db.scalar("SELECT count(*) FROM memories"):
        raise StoreError(f"the store {store.location} is not empty; import into a new store")
    known = set(tables_of(store))
    missing = set(expected) - known
    if missing:
        raise StoreError(
            f"the store lacks tables the export has: {sorted(missing)} (open it with the same "
            "mechanisms and version as the exported one)"
        )
    grouped: dict[str, list[dict[str, Any]]] = {table: [] for table in expected}
    for n, table, row in _rows_by_table(lines):
        if table in SKIPPED and table in announced:
            continue
        if table not in grouped:
            raise InputError(f"line {n}: table {table!r} is not in the export's header")
        # a derived column is this database's own (``posting_seq``: the order the postings
        # came in here; a pack relies on it): an export's values of it are another's
        grouped[table].append({c: v for c, v in row.items() if c not in DERIVED_COLUMNS})
    for table, rows in grouped.items():
        if len(rows) != expected[table]:
            raise InputError(
                f"the export announces {expected[table]} rows of {table} and holds {len(rows)}"
                " (a cut-off file?)"
            )
    with store.write_lock, store.bulk_loading():
        for table, rows in grouped.items():
            store.db.execute(f'DELETE FROM "{table}"')  # a new store's meta: the export's wins
            if rows:
                _insert(store, table, rows)
        advance_sequences(store)
        forget_terms_on_postgres(store)
        store.lexical.refresh_stats()
    return {table: len(rows) for table, rows in grouped.items()}


def _insert(store: Store, table: str, rows: list[dict[str, Any]]) -> None:
    columns = columns_of(store, table)
    names = [c for c, _ in columns]
    unknown = set().union(*rows) - set(names) - RECOUNTED_COLUMNS.get(table, frozenset())
    if unknown:
        raise InputError(f"rows of {table} have columns the store lacks: {sorted(unknown)}")
    present = [(c, kind) for c, kind in columns if any(c in row for row in rows)]
    # every value travels as JSON text and is cast to the column's type by the database: one
    # rule for times, JSON, lists and numbers on either backend
    data = pa.table(
        {
            c: pa.array(
                [None if row.get(c) is None else _json_text(row[c]) for row in rows],
                pa.string(),
            )
            for c, _ in present
        }
    )
    arrays = _array_types(store, table) if store.db.backend == "postgres" else {}
    select = ", ".join(
        _pg_array(c, arrays[c]) if c in arrays else _cast(c, kind) for c, kind in present
    )
    quoted = ", ".join(f'"{c}"' for c, _ in present)
    store.db.insert_arrow(f'"{table}" ({quoted})', data, select)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _cast(column: str, kind: str) -> str:
    lowered = kind.lower()
    if lowered in ("varchar", "text", "character varying"):
        return f'"{column}"'
    if lowered == "blob" or lowered == "bytea":
        raise InputError(f"column {column} holds bytes, which this export format does not read")
    return f'CAST("{column}" AS {kind})'


def _array_types(store: Store, table: str) -> dict[str, str]:
    """PostgreSQL's array columns of a table, name -> element type (``real``, ``text``...)."""
    rows = store.db.fetchall(
        "SELECT c.column_name, e.data_type FROM information_schema.columns c "
        "JOIN information_schema.element_types e ON e.object_catalog = c.table_catalog "
        "AND e.object_schema = c.table_schema AND e.object_name = c.table_name "
        "AND e.object_type = 'TABLE' AND e.collection_type_identifier = c.dtd_identifier "
        "WHERE c.table_name = ? AND c.table_schema = current_schema() AND c.data_type = 'ARRAY'",
        [table],
    )
    return {name: kind for name, kind in rows}


def _pg_array(column: str, element: str) -> str:
    # the JSON list read element by element: PostgreSQL's array literal is another syntax
    return (
        f'CASE WHEN "{column}" IS NULL THEN NULL ELSE ARRAY(SELECT CAST(v AS {element}) '
        f'FROM json_array_elements_text(CAST("{column}" AS json)) WITH ORDINALITY AS t(v, i) '
        "ORDER BY i) END"
    )
