"""Sessions of thoughts, as in the Thoughtbox reasoning server the seeds were written for.

A session is a reasoning episode: numbered thoughts (optionally on branches, or revising an
earlier thought), closed with an outcome. Thoughts are ordinary memories of kind ``thought``
scoped to the session, so search finds them like anything else.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from localmem import validate
from localmem.errors import InputError
from localmem.store import memories, records
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow
from localmem.store.kernel import HasKernel, Kernel, kernel_of
from localmem.store.prefix import find_rows
from localmem.types import Session, Thought

if TYPE_CHECKING:
    from localmem.store.memories import JobRequest

OUTCOMES = ("success", "failure")
STATUSES = ("open", "completed")
_SESSION_COLUMNS = (
    "s.id, s.title, s.status, s.outcome, s.created_at, s.completed_at, s.user_id, s.agent_id, "
    "s.metadata, (SELECT count(*) FROM thoughts t WHERE t.session_id = s.id) AS n"
)


def _row_to_session(row) -> Session:
    return Session(
        id=row[0],
        title=row[1],
        status=row[2],
        outcome=row[3],
        created_at=records.aware(row[4]),
        completed_at=records.aware(row[5]),
        user_id=row[6],
        agent_id=row[7],
        metadata=json.loads(row[8]) if row[8] else {},
        thought_count=int(row[9]),
    )


def start_session(
    memory: Kernel | HasKernel,
    title: str,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Session:
    """Open a new session of thoughts."""
    title = validate.content(title, max_chars=500, what="session title")
    meta = validate.metadata(metadata)
    sid = "s_" + secrets.token_hex(6)
    user_id = validate.scope_id(user_id, "user_id")
    agent_id = validate.scope_id(agent_id, "agent_id")
    kernel = kernel_of(memory)
    with kernel.writing() as write:
        write.db.execute(
            "INSERT INTO sessions VALUES (?, ?, 'open', NULL, ?, NULL, ?, ?, ?)",
            [sid, title.strip(), utcnow(), user_id, agent_id, json.dumps(meta) if meta else None],
        )
    return get_session(kernel, sid)


def get_session(memory: Kernel | HasKernel, session_id: str) -> Session:
    """One session by id (or unique prefix)."""
    session_id = validate.identifier(session_id, "a session id")
    rows = find_rows(
        kernel_of(memory).db,
        f"SELECT {_SESSION_COLUMNS} FROM sessions s",
        session_id,
        what="session",
        column="s.id",
    )
    return _row_to_session(rows[0])


def list_sessions(
    memory: Kernel | HasKernel, *, status: str | None = None, limit: int = 100
) -> list[Session]:
    """Sessions, newest first."""
    validate.positive_int(limit, "limit", maximum=validate.MAX_LIMIT)
    where, params = "", []
    if status is not None:
        if status not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        where, params = "WHERE s.status = ?", [status]
    rows = kernel_of(memory).db.fetchall(
        f"SELECT {_SESSION_COLUMNS} FROM sessions s {where} ORDER BY s.created_at DESC "
        f"LIMIT {int(limit)}",
        params,
    )
    return [_row_to_session(r) for r in rows]


def add_thought(
    memory: Kernel | HasKernel,
    session_id: str,
    content: str,
    *,
    branch_id: str | None = None,
    branch_from: int | None = None,
    revises: int | None = None,
    event_time: Any = None,
    metadata: Mapping[str, Any] | None = None,
    jobs: Sequence[JobRequest] = (),
) -> Thought:
    """Add the next thought to an open session.

    Args:
        session_id: the session.
        content: the thought.
        branch_id: name of the branch this thought is on (None: the main line).
        branch_from: the thought number the branch starts from.
        revises: the number of an earlier thought this one revises.
        jobs: the background jobs the add asks for (mining, evolution; see
            :meth:`localmem.Memory.jobs_for_add`).
    """
    kernel = kernel_of(memory)
    session = get_session(kernel, session_id)
    if session.status != "open":
        raise InputError(f"session {session.id} is {session.status}; start a new one")
    for name, value in (("branch_from", branch_from), ("revises", revises)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise InputError(f"{name} must be a thought number (1 or more)")
    if branch_id is not None:
        validate.scope_id(branch_id, "branch_id")
    db = kernel.db
    count = int(db.scalar("SELECT count(*) FROM thoughts WHERE session_id = ?", [session.id]))
    for name, value in (("branch_from", branch_from), ("revises", revises)):
        if value is not None and value > count:
            raise InputError(f"{name}={value} but session {session.id} has {count} thought(s)")
    prepared = memories.prepare(
        kernel,
        {"content": content, "event_time": event_time, "metadata": metadata},
        {
            "kind": "thought",
            "session_id": session.id,
            "user_id": session.user_id,
            "agent_id": session.agent_id,
        },
    )
    numbered: list[int] = []

    def insert_thought_row(_, rows) -> None:
        # numbered inside the write transaction, so two writers never share a number
        number = 1 + int(
            db.scalar("SELECT count(*) FROM thoughts WHERE session_id = ?", [session.id])
        )
        db.execute(
            "INSERT INTO thoughts VALUES (?, ?, ?, ?, ?, ?)",
            [rows[0].id, session.id, number, branch_id, branch_from, revises],
        )
        numbered.append(number)

    item = memories.add(kernel, [prepared], jobs=jobs, extra=insert_thought_row)[0]
    return Thought(item, numbered[0], branch_id, branch_from, revises)


def closing(
    memory: Kernel | HasKernel, session_id: str, outcome: str, *, notes: str | None = None
) -> tuple[Session, dict[str, Any]]:
    """Check that a session can close with ``outcome``; returns it and its metadata to keep.

    Raises:
        InputError: an unknown outcome, or the session is not open.
    """
    if outcome not in OUTCOMES:
        raise InputError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    notes = validate.optional_text(notes, max_chars=100_000, what="notes")
    session = get_session(memory, session_id)
    if session.status != "open":
        raise InputError(f"session {session.id} is already {session.status}")
    meta = dict(session.metadata)
    if notes:
        meta["notes"] = notes
    return session, meta


def close(memory: Kernel | HasKernel, session_id: str, outcome: str, meta: dict[str, Any]) -> None:
    """Mark a session completed (inside the caller's ``kernel.writing()`` unit)."""
    kernel_of(memory).db.execute(
        "UPDATE sessions SET status = 'completed', outcome = ?, completed_at = ?, metadata = ? "
        "WHERE id = ?",
        [outcome, utcnow(), json.dumps(meta) if meta else None, session_id],
    )


def thought_of(memory: Kernel | HasKernel, memory_id: str) -> dict[str, Any] | None:
    """Where a memory stands in its session (number, branch_id, branch_from, revises), or None
    when it is not a thought."""
    row = kernel_of(memory).db.fetchone(
        "SELECT number, branch_id, branch_from, revises FROM thoughts WHERE memory_id = ?",
        [memory_id],
    )
    if row is None:
        return None
    return dict(zip(("number", "branch_id", "branch_from", "revises"), row, strict=True))


def count(memory: Kernel | HasKernel) -> int:
    """How many sessions the store holds."""
    return int(kernel_of(memory).db.scalar("SELECT count(*) FROM sessions"))


def thoughts(memory: Kernel | HasKernel, session_id: str) -> list[Thought]:
    """The thoughts of a session, in order (deleted ones left out)."""
    kernel = kernel_of(memory)
    session = get_session(kernel, session_id)
    rows = kernel.db.fetchall(
        "SELECT memory_id, number, branch_id, branch_from, revises FROM thoughts "
        "WHERE session_id = ? ORDER BY number",
        [session.id],
    )
    items = memories.by_ids(kernel, [r[0] for r in rows])
    return [
        Thought(items[r[0]], r[1], r[2], r[3], r[4])
        for r in rows
        if r[0] in items and not items[r[0]].deleted
    ]


def erase_titles(
    db: StoreDatabase,
    *,
    user_id: str | None,
    agent_id: str | None,
    session_id: str | None,
    everything: bool,
) -> int:
    """Erase what the sessions of a scope say (title, outcome, metadata) for a purge of that
    scope, inside the caller's unit; returns how many sessions. Their ids and times stay."""
    given = {"user_id": user_id, "agent_id": agent_id, "id": session_id}
    conditions = [f"{column} = ?" for column, value in given.items() if value is not None]
    if not conditions and not everything:
        return 0
    params = [value for value in given.values() if value is not None]
    where = " AND ".join(conditions) or "TRUE"
    found = db.scalar(f"SELECT count(*) FROM sessions WHERE {where}", params)
    db.execute(
        f"UPDATE sessions SET title = '', outcome = NULL, metadata = NULL WHERE {where}", params
    )
    return int(found or 0)
