"""Finding a row by its id or a unique prefix of it: memories, sessions and procedures alike.

A prefix needs :data:`MIN_PREFIX` characters: shorter ones match too much to mean one thing
(ids are 16 hexadecimal characters), so a short id that is not a whole id is refused as such,
not reported as missing.
"""

from __future__ import annotations

from typing import Any

from localmem.errors import InputError, NotFoundError

#: the fewest characters of an id that may stand for it
MIN_PREFIX = 4


def find_rows(db: Any, select: str, ident: str, *, what: str, column: str = "id") -> list[Any]:
    """The row of ``select`` (a ``SELECT ... FROM table``) whose ``column`` is ``ident`` or
    starts with it.

    Raises:
        InputError: ``ident`` is not a whole id and shorter than :data:`MIN_PREFIX`, or a
            prefix of several (the error says how many).
        NotFoundError: no row has that id or prefix.
    """
    rows = db.fetchall(f"{select} WHERE {column} = ?", [ident])
    if rows:
        return list(rows)
    if len(ident) < MIN_PREFIX:
        raise InputError(
            f"{what} id {ident!r} is too short: give the whole id or at least {MIN_PREFIX} "
            "of its first characters"
        )
    rows = db.fetchall(f"{select} WHERE starts_with({column}, ?) LIMIT 2", [ident])
    if len(rows) > 1:
        table = select.split(" FROM ", 1)[1].split()[0]
        n = int(db.scalar(f"SELECT count(*) FROM {table} WHERE starts_with(id, ?)", [ident]))
        raise InputError(f"id prefix {ident!r} matches {n} {what}s; give more of its characters")
    if not rows:
        raise NotFoundError(f"no {what} with id {ident!r}")
    return list(rows)
