"""The ``links`` table: which memories evolution connected, and why.

A link is stored once, from the new memory (``src``) to the older one it evolved (``dst``), and
read from both ends: for search and for a person the connection goes both ways.
"""

from __future__ import annotations

from localmem.store import records
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow
from localmem.types import Link  # defined with the API's other light types (a client decodes it)

EVOLUTION = "evolution"


def add_link(
    db: StoreDatabase, src: str, dst: str, *, weight: float, reason: str, kind: str = EVOLUTION
) -> None:
    """Record (or refresh) the link ``src -> dst`` (inside the caller's transaction)."""
    db.execute(
        "INSERT INTO links VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (src, dst, kind) "
        "DO UPDATE SET weight = excluded.weight, reason = excluded.reason",
        [src, dst, kind, float(weight), reason, utcnow()],
    )


def remove_link(db: StoreDatabase, src: str, dst: str, *, kind: str = EVOLUTION) -> bool:
    """Delete the link ``src -> dst``; True when there was one."""
    n = db.scalar(
        "SELECT count(*) FROM links WHERE src = ? AND dst = ? AND kind = ?", [src, dst, kind]
    )
    if n:
        db.execute("DELETE FROM links WHERE src = ? AND dst = ? AND kind = ?", [src, dst, kind])
    return bool(n)


def links_of(db: StoreDatabase, memory_id: str, *, kind: str | None = None) -> list[Link]:
    """Every link touching a memory, newest first."""
    where, params = "", [memory_id, memory_id]
    if kind is not None:
        where, params = " AND kind = ?", [memory_id, memory_id, kind]
    rows = db.fetchall(
        "SELECT CASE WHEN src = ? THEN dst ELSE src END, src, kind, weight, reason, created_at "
        f"FROM links WHERE (src = ? OR dst = ?){where} ORDER BY created_at DESC, 1",
        [memory_id, *params],
    )
    return [
        Link(
            other=r[0],
            direction="to" if r[1] == memory_id else "from",
            kind=r[2],
            weight=float(r[3]),
            reason=r[4],
            created_at=records.aware(r[5]),
        )
        for r in rows
    ]


def linked_ids(
    db: StoreDatabase, ids: list[str], *, kind: str = EVOLUTION
) -> list[tuple[str, str, float]]:
    """(one of ``ids``, the memory at the other end, weight) for every link touching ``ids``."""
    if not ids:
        return []
    return [
        (r[0], r[1], float(r[2]))
        for r in db.fetchall(
            "SELECT src, dst, weight FROM links WHERE kind = ? "
            "AND src IN (SELECT unnest(?::VARCHAR[])) UNION ALL "
            "SELECT dst, src, weight FROM links WHERE kind = ? "
            "AND dst IN (SELECT unnest(?::VARCHAR[]))",
            [kind, ids, kind, ids],
        )
    ]


def pairs(db: StoreDatabase, *, kind: str) -> list[tuple[str, str]]:
    """(src, dst) of every link of one kind."""
    return [(r[0], r[1]) for r in db.fetchall("SELECT src, dst FROM links WHERE kind = ?", [kind])]
