"""The DuckDB side of procedures: rows in and out of ``procedures``, ``procedure_versions`` and
``procedure_events`` (migration ``0030_procedures``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypedDict

from localmem import validate
from localmem.errors import InputError
from localmem.procedures.model import (
    STATUSES,
    Procedure,
    ProcedureEvent,
    ProcedureVersion,
)
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow
from localmem.store.prefix import find_rows
from localmem.store.records import aware
from localmem.store.unit import Write

COLUMNS = (
    "id, task_type, trigger, steps, level, example, caveats, source_session_id, memory_id, "
    "status, version, use_count, success_count, failure_count, last_used, created_at, "
    "updated_at, served_by"
)


def to_procedure(row: Sequence[Any]) -> Procedure:
    """A ``procedures`` row (selected with :data:`COLUMNS`) as a :class:`Procedure`."""
    return Procedure(
        id=row[0],
        task_type=row[1],
        trigger=row[2],
        steps=tuple(json.loads(row[3])),
        level=row[4],
        example=row[5],
        caveats=tuple(json.loads(row[6])) if row[6] else (),
        source_session_id=row[7],
        memory_id=row[8],
        status=row[9],
        version=int(row[10]),
        use_count=int(row[11]),
        success_count=int(row[12]),
        failure_count=int(row[13]),
        last_used=aware(row[14]),
        created_at=aware(row[15]),
        updated_at=aware(row[16]),
        served_by=row[17],
    )


def get(db: StoreDatabase, procedure_id: Any) -> Procedure:
    """A procedure by id or unique prefix (4 characters or more)."""
    pid = validate.identifier(procedure_id, "a procedure id")
    rows = find_rows(db, f"SELECT {COLUMNS} FROM procedures", pid, what="procedure")
    return to_procedure(rows[0])


def by_memory_ids(db: StoreDatabase, memory_ids: Sequence[str]) -> list[Procedure]:
    """The active procedures whose trigger memories these are."""
    if not memory_ids:
        return []
    marks = ", ".join("?" for _ in memory_ids)
    rows = db.fetchall(
        f"SELECT {COLUMNS} FROM procedures WHERE status = 'active' AND memory_id IN ({marks})",
        list(memory_ids),
    )
    return [to_procedure(r) for r in rows]


def listing(
    db: StoreDatabase,
    *,
    status: str | None,
    task_type: str | None,
    session_id: str | None,
    limit: int,
) -> list[Procedure]:
    """Procedures, newest first, filtered."""
    validate.positive_int(limit, "limit", maximum=100_000)
    where, params = ["TRUE"], []
    if status is not None:
        if status not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        where.append("status = ?")
        params.append(status)
    for column, value in (("task_type", task_type), ("source_session_id", session_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows = db.fetchall(
        f"SELECT {COLUMNS} FROM procedures WHERE {' AND '.join(where)} "
        f"ORDER BY created_at DESC, id LIMIT {limit}",
        params,
    )
    return [to_procedure(r) for r in rows]


def versions(db: StoreDatabase, procedure_id: str) -> list[ProcedureVersion]:
    """Every version of a procedure, oldest first."""
    rows = db.fetchall(
        "SELECT procedure_id, version, task_type, trigger, steps, level, example, caveats, "
        "reason, served_by, created_at FROM procedure_versions WHERE procedure_id = ? "
        "ORDER BY version",
        [procedure_id],
    )
    return [
        ProcedureVersion(
            procedure_id=r[0],
            version=int(r[1]),
            task_type=r[2],
            trigger=r[3],
            steps=tuple(json.loads(r[4])),
            level=r[5],
            example=r[6],
            caveats=tuple(json.loads(r[7])) if r[7] else (),
            reason=r[8],
            served_by=r[9],
            created_at=aware(r[10]),
        )
        for r in rows
    ]


def events(db: StoreDatabase, procedure_id: str) -> list[ProcedureEvent]:
    """What happened to a procedure, oldest first."""
    rows = db.fetchall(
        "SELECT id, procedure_id, event, version, success, info, happened_at "
        "FROM procedure_events WHERE procedure_id = ? ORDER BY id",
        [procedure_id],
    )
    return [
        ProcedureEvent(
            id=int(r[0]),
            procedure_id=r[1],
            event=r[2],
            version=int(r[3]),
            success=r[4],
            info=json.loads(r[5]) if r[5] else {},
            at=aware(r[6]),
        )
        for r in rows
    ]


class VersionFields(TypedDict):
    """What a new procedure's row and its first version's row share (``insert_procedure``,
    ``insert_version``)."""

    task_type: str
    trigger: str
    steps: Sequence[str]
    level: str
    example: str | None
    served_by: str
    now: datetime


def insert_procedure(
    db: StoreDatabase,
    pid: str,
    memory_id: str,
    *,
    task_type: str,
    trigger: str,
    steps: Sequence[str],
    level: str,
    example: str | None,
    session_id: str | None,
    served_by: str,
    now: datetime,
) -> None:
    """A new procedure at version 1, active, never used."""
    db.execute(
        f"INSERT INTO procedures ({COLUMNS}) VALUES "
        "(?, ?, ?, ?, ?, ?, NULL, ?, ?, 'active', 1, 0, 0, 0, NULL, ?, ?, ?)",
        [
            pid,
            task_type,
            trigger,
            json.dumps(list(steps)),
            level,
            example,
            session_id,
            memory_id,
            now,
            now,
            served_by,
        ],
    )


def insert_version(
    db: StoreDatabase,
    pid: str,
    version: int,
    *,
    task_type: str,
    trigger: str,
    steps: Sequence[str],
    level: str,
    example: str | None,
    caveats: Sequence[str],
    reason: str | None,
    served_by: str,
    now: datetime,
) -> None:
    """One row of ``procedure_versions``."""
    db.execute(
        "INSERT INTO procedure_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            pid,
            version,
            task_type,
            trigger,
            json.dumps(list(steps)),
            level,
            example,
            json.dumps(list(caveats)) if caveats else None,
            reason,
            served_by,
            now,
        ],
    )


def insert_event(
    db: StoreDatabase,
    pid: str,
    event: str,
    version: int,
    *,
    success: bool | None = None,
    info: dict[str, Any] | None = None,
) -> None:
    """One row of ``procedure_events``."""
    db.execute(
        "INSERT INTO procedure_events VALUES (nextval('procedure_event_seq'), ?, ?, ?, ?, ?, ?)",
        [pid, event, version, success, json.dumps(info) if info else None, utcnow()],
    )


def active_count(db: StoreDatabase) -> int:
    """How many procedures are active (findable)."""
    return int(db.scalar("SELECT count(*) FROM procedures WHERE status = 'active'"))


def set_counts(
    db: StoreDatabase,
    procedure_id: str,
    *,
    uses: int,
    successes: int,
    used_at: datetime | None = None,
) -> None:
    """Set a procedure's use and success counts (``used_at``: the use being counted now)."""
    if used_at is None:
        db.execute(
            "UPDATE procedures SET use_count = ?, success_count = ?, failure_count = ? "
            "WHERE id = ?",
            [uses, successes, uses - successes, procedure_id],
        )
        return
    db.execute(
        "UPDATE procedures SET use_count = ?, success_count = ?, failure_count = ?, "
        "last_used = ?, updated_at = ? WHERE id = ?",
        [uses, successes, uses - successes, used_at, used_at, procedure_id],
    )


def set_version(
    db: StoreDatabase,
    procedure_id: str,
    version: int,
    *,
    steps: Sequence[str],
    caveats: Sequence[str],
    served_by: str | None,
    now: datetime,
) -> None:
    """Make ``version`` (already in ``procedure_versions``) the procedure's current one."""
    db.execute(
        "UPDATE procedures SET steps = ?::JSON, caveats = ?::JSON, version = ?, served_by = ?, "
        "updated_at = ? WHERE id = ?",
        [
            json.dumps(list(steps)),
            json.dumps(list(caveats)) if caveats else None,
            version,
            served_by,
            now,
            procedure_id,
        ],
    )


def set_status(db: StoreDatabase, procedure_id: str, status: str, *, now: datetime) -> None:
    """Set a procedure's status (``active`` or ``retired``)."""
    db.execute(
        "UPDATE procedures SET status = ?, updated_at = ? WHERE id = ?", [status, now, procedure_id]
    )


def erase_for_memory(write: Write, memory_id: str) -> None:
    """A purge's hook: the procedures whose trigger memory is purged lose their text too (task
    type, trigger, steps, example, caveats, in every version, and what their events noted) and
    are retired, inside the purge's unit. Their ids, counts and times stay, as a purged
    memory's tombstone does."""
    db = write.db
    for (pid,) in db.fetchall("SELECT id FROM procedures WHERE memory_id = ?", [memory_id]):
        erased = "task_type = '', trigger = '', steps = '[]', example = NULL, caveats = NULL"
        db.execute(
            f"UPDATE procedures SET {erased}, status = 'retired', updated_at = ? WHERE id = ?",
            [utcnow(), pid],
        )
        db.execute(
            f"UPDATE procedure_versions SET {erased}, reason = NULL WHERE procedure_id = ?", [pid]
        )
        db.execute("UPDATE procedure_events SET info = NULL WHERE procedure_id = ?", [pid])
