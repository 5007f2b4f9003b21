"""pyarrow tables to and from PostgreSQL: the column types of a temporary table, ``COPY`` into
it, and query results as pyarrow tables with the types DuckDB would have given."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa

#: PostgreSQL's ``real`` and ``real[]`` type oids
REAL_OID = 700
REAL_ARRAY_OID = 1021

# PostgreSQL type oids -> pyarrow types (anything else is inferred from the values)
_FROM_OID = {
    16: pa.bool_(),
    20: pa.int64(),
    21: pa.int16(),
    23: pa.int32(),
    25: pa.string(),
    114: pa.string(),
    700: pa.float32(),
    701: pa.float64(),
    1043: pa.string(),
    1114: pa.timestamp("us"),
    1700: pa.float64(),
    3802: pa.string(),
    1000: pa.list_(pa.bool_()),
    1007: pa.list_(pa.int32()),
    1009: pa.list_(pa.string()),
    1015: pa.list_(pa.string()),
    1016: pa.list_(pa.int64()),
    1021: pa.list_(pa.float32()),
    1022: pa.list_(pa.float64()),
}


def table(description: Any, rows: list[tuple[Any, ...]]) -> pa.Table:
    """Query rows as a pyarrow table, typed by the result's column types."""
    names = [col.name for col in description]
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    arrays = []
    for col, values in zip(description, columns, strict=True):
        kind = _FROM_OID.get(col.type_code)
        arrays.append(pa.array(list(values), kind) if kind is not None else pa.array(list(values)))
    return pa.table(dict(zip(_unique(names), arrays, strict=True)))


def _unique(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return out


def _sql_type(kind: pa.DataType) -> str:
    if pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind) or pa.types.is_large_list(kind):
        return _sql_type(kind.value_type) + "[]"
    if pa.types.is_boolean(kind):
        return "boolean"
    if pa.types.is_int8(kind) or pa.types.is_int16(kind):
        return "smallint"
    if pa.types.is_int32(kind) or pa.types.is_uint16(kind):
        return "integer"
    if pa.types.is_integer(kind):
        return "bigint"
    if pa.types.is_float32(kind) or pa.types.is_float16(kind):
        return "real"
    if pa.types.is_floating(kind):
        return "double precision"
    if pa.types.is_timestamp(kind):
        return "timestamptz" if kind.tz else "timestamp"
    if pa.types.is_date(kind):
        return "date"
    return "text"  # strings, and nulls with no type yet


def columns_ddl(schema: pa.Schema) -> str:
    """The columns of a temporary table that holds ``schema``'s rows."""
    return ", ".join(f'"{field.name}" {_sql_type(field.type)}' for field in schema)


def _values(column: pa.ChunkedArray) -> list[Any]:
    """A column's values for ``COPY``; float lists (embeddings) as array literals written here:
    psycopg's generic list dumper costs about 0.6 ms per 384-d vector, this about 0.05 ms."""
    kind = column.type
    is_list = pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind)
    if not (is_list and pa.types.is_floating(kind.value_type)):
        values: list[Any] = column.to_pylist()
        return values
    # float32 vectors never come here: copy_into sends a table holding them in binary
    return [
        None if row is None else "{" + ",".join(map(repr, row)) + "}" for row in column.to_pylist()
    ]


def copy_into(con: Any, name: str, data: pa.Table) -> None:
    """``COPY`` every row of ``data`` into the table ``name`` (made by :func:`columns_ddl`).

    A table with float32 vectors (new memories' embeddings) goes in binary: each vector is
    packed by numpy in PostgreSQL's ``real[]`` layout, where the text format spent about 0.1 ms
    a 384-d vector printing its floats (a fifth of an ``add_many`` on PostgreSQL)."""
    if data.num_rows == 0:
        return
    cols = ", ".join(f'"{n}"' for n in data.column_names)
    if any(_is_float32_list(field.type) for field in data.schema):
        _copy_binary(con, name, cols, data)
        return
    columns = [_values(data.column(i)) for i in range(data.num_columns)]
    with con.cursor() as cur, cur.copy(f"COPY {name} ({cols}) FROM STDIN") as copy:
        for row in zip(*columns, strict=True):
            copy.write_row(row)


def _is_float32_list(kind: pa.DataType) -> bool:
    is_list = pa.types.is_list(kind) or pa.types.is_fixed_size_list(kind)
    return bool(is_list and pa.types.is_float32(kind.value_type))


class PackedReals(bytes):
    """A ``real[]`` value already in PostgreSQL's binary array layout (:func:`pack_reals`)."""


@cache
def _packed_reals_dumper() -> type:
    """psycopg's dumper of :class:`PackedReals` (psycopg is imported when a copy needs it)."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    class PackedRealsDumper(Dumper):
        format = Format.BINARY
        oid = REAL_ARRAY_OID

        def dump(self, obj: Any) -> bytes:
            return bytes(obj)

    return PackedRealsDumper


def pack_reals(column: pa.ChunkedArray) -> list[PackedReals | None]:
    """A column of float32 vectors as one-dimensional ``real[]`` values in binary (each:
    dimensions, flags, element type, length, lower bound, then each element's length and
    big-endian value), packed by numpy all at once."""
    arr = column.combine_chunks()
    n = len(arr)
    valid = np.asarray(arr.is_valid())
    lengths = (
        np.full(n, arr.type.list_size)
        if pa.types.is_fixed_size_list(arr.type)
        else np.asarray(arr.value_lengths().fill_null(0))
    )
    dims = set(lengths[valid].tolist())
    if len(dims) > 1:  # vectors of several lengths: one at a time
        return [
            None if v is None else pack_reals(pa.chunked_array([[v]], arr.type))[0]
            for v in arr.to_pylist()
        ]
    dim = dims.pop() if dims else 0
    flat = arr.filter(pa.array(valid)).flatten().to_numpy(zero_copy_only=False)
    cell = np.dtype([("len", ">i4"), ("val", ">f4")])
    rows = np.empty(int(valid.sum()), dtype=[("head", ">i4", (5,)), ("cells", cell, (dim,))])
    rows["head"] = (1, 0, REAL_OID, dim, 1)
    rows["cells"]["len"] = 4
    rows["cells"]["val"] = flat.reshape(len(rows), dim)
    data, size = rows.tobytes(), rows.itemsize
    packed = iter(range(0, len(data), size))
    return [PackedReals(data[(at := next(packed)) : at + size]) if ok else None for ok in valid]


def _copy_binary(con: Any, name: str, cols: str, data: pa.Table) -> None:
    types = [_sql_type(field.type) for field in data.schema]
    columns: list[list[Any]] = []
    for i, field in enumerate(data.schema):
        column = data.column(i)
        columns.append(pack_reals(column) if _is_float32_list(field.type) else column.to_pylist())
    with con.cursor() as cur:
        cur.adapters.register_dumper(PackedReals, _packed_reals_dumper())
        with cur.copy(f"COPY {name} ({cols}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(types)
            for row in zip(*columns, strict=True):
                copy.write_row(row)
