"""The history of memory rows: append a change, read a memory's changes, scrub a purged text."""

from __future__ import annotations

import json
from typing import Any

from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow
from localmem.store.records import aware
from localmem.types import HistoryEvent


def record_history(
    db: StoreDatabase,
    memory_id: str,
    event: str,
    *,
    field: str | None = None,
    old: str | None = None,
    new: str | None = None,
    actor: str = "user",
    info: dict[str, Any] | None = None,
) -> None:
    """Append one change to ``history``."""
    db.execute(
        "INSERT INTO history VALUES (nextval('history_seq'), ?, ?, ?, ?, ?, ?, ?, ?)",
        [memory_id, event, field, old, new, actor, utcnow(), json.dumps(info) if info else None],
    )


def history(db: StoreDatabase, memory_id: str) -> list[HistoryEvent]:
    """Every change of a memory, oldest first."""
    rows = db.fetchall(
        "SELECT id, memory_id, event, field, old_value, new_value, actor, changed_at, info "
        "FROM history WHERE memory_id = ? ORDER BY id",
        [memory_id],
    )
    return [
        HistoryEvent(
            id=r[0],
            memory_id=r[1],
            event=r[2],
            field=r[3],
            old_value=r[4],
            new_value=r[5],
            actor=r[6],
            at=aware(r[7]),
            info=json.loads(r[8]) if r[8] else {},
        )
        for r in rows
    ]


def latest_history_id(
    db: StoreDatabase, memory_id: str, *, event: str | None = None, field: str | None = None
) -> int | None:
    """The id of a memory's latest history event (of one kind, or touching one field)."""
    where, params = ["memory_id = ?"], [memory_id]
    if event is not None:
        where.append("event = ?")
        params.append(event)
    if field is not None:
        where.append("field = ?")
        params.append(field)
    found = db.scalar(f"SELECT max(id) FROM history WHERE {' AND '.join(where)}", params)
    return None if found is None else int(found)


def scrub_history(
    db: StoreDatabase,
    event_id: int,
    *,
    old: bool = False,
    new: bool = False,
    info: dict[str, Any] | None = None,
) -> None:
    """Blank the old and/or new value of one history event (a purge took its words); ``info``
    replaces the event's info when given."""
    sets = [name for name, on in (("old_value = NULL", old), ("new_value = NULL", new)) if on]
    params: list[Any] = []
    if info is not None:
        sets.append("info = ?::JSON")
        params.append(json.dumps(info))
    if sets:
        db.execute(f"UPDATE history SET {', '.join(sets)} WHERE id = ?", [*params, event_id])
