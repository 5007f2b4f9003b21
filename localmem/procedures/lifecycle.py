"""Changing procedures: create (from a session or by hand), record a use, revise, retire, restore.

Every change is one transaction over the procedure tables and the trigger memory together. A
revision adds a version (the old one stays in ``procedure_versions``); retiring hides the trigger
memory (a soft delete, recorded in its history) and restoring brings it back.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from localmem import sessions, validate
from localmem.errors import InputError
from localmem.procedures import abstraction, rows, scoring
from localmem.procedures.model import LEVELS, Procedure, RecordResult
from localmem.store import memories
from localmem.store.db import utcnow

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel
    from localmem.types import Session

MAX_TRACE_ITEMS = 50
MAX_TRACE_CHARS = 2000


def from_session(
    kernel: Kernel,
    session: Session,
    *,
    outcome: str,
    level: str | None,
    on_write: Callable[[str], None] | None = None,
) -> Procedure:
    """Abstract a session that ended with ``outcome`` into a stored procedure."""
    if outcome != "success":
        raise InputError(
            f"session {session.id} ended in {outcome or 'no outcome'}; only a successful "
            "session is abstracted into a procedure (a failed use of a procedure is recorded "
            "with procedures.record)"
        )
    cfg = kernel.config.procedures
    level = check_level(level or cfg.default_level)
    thoughts = session_thoughts(kernel, session.id)
    if not thoughts:
        raise InputError(f"session {session.id} has no thoughts; there is nothing to abstract")
    try:
        draft = abstraction.draft_procedure(
            kernel, session.title, thoughts, level=level, max_steps=cfg.max_steps
        )
    except InputError as exc:
        raise InputError(f"session {session.id}: {exc}") from None
    return create(
        kernel,
        draft,
        session_id=session.id,
        user_id=session.user_id,
        agent_id=session.agent_id,
        on_write=on_write,
    )


def create(
    kernel: Kernel,
    draft: abstraction.Draft,
    *,
    session_id: str | None,
    user_id: str | None,
    agent_id: str | None,
    on_write: Callable[[str], None] | None = None,
) -> Procedure:
    """Store a draft: the trigger memory, the procedure, its first version and a CREATE event,
    in one transaction (``on_write(procedure_id)`` runs inside it)."""
    pid = "p_" + secrets.token_hex(6)
    prepared = memories.prepare(
        kernel,
        {"content": draft.trigger, "metadata": {"procedure_id": pid, "task_type": draft.task_type}},
        {"kind": "procedure", "level": "semantic", "user_id": user_id, "agent_id": agent_id},
    )
    db = kernel.db

    def write_rows(_, new_rows) -> None:
        now = utcnow()
        fields = rows.VersionFields(
            task_type=draft.task_type,
            trigger=draft.trigger,
            steps=draft.steps,
            level=draft.level,
            example=draft.example,
            served_by=draft.served_by,
            now=now,
        )
        rows.insert_procedure(db, pid, new_rows[0].id, session_id=session_id, **fields)
        rows.insert_version(db, pid, 1, caveats=(), reason="created", **fields)
        rows.insert_event(
            db, pid, "CREATE", 1, info={"session_id": session_id, "tokens": draft.tokens}
        )
        if on_write:
            on_write(pid)

    memories.add(kernel, [prepared], extra=write_rows)
    return rows.get(db, pid)


def record(
    kernel: Kernel,
    procedure_id: str,
    success: Any,
    trace: Any = None,
    *,
    task: str | None = None,
    session_id: str | None = None,
    note: str | None = None,
    reflect: bool = True,
) -> RecordResult:
    """Count one use; on failure revise by reflection; retire when the record is too poor."""
    if not isinstance(success, bool):
        raise InputError("success must be True or False")
    db = kernel.db
    proc = rows.get(db, procedure_id)
    if proc.retired:
        raise InputError(f"procedure {proc.id} is retired; restore it before using it")
    limit = kernel.config.store.max_content_chars
    task = validate.optional_text(task, max_chars=limit, what="task")
    note = validate.optional_text(note, max_chars=limit, what="note")
    attempt = check_trace(trace)
    if session_id is not None:
        session_id = sessions.get_session(kernel, session_id).id
        attempt = attempt or session_thoughts(kernel, session_id)
    # the engine call comes first: if it fails nothing is written and the caller can retry
    revision = None
    if not success and reflect:
        revision = abstraction.revise_procedure(kernel, proc, task or "", attempt, note)
    uses, wins = proc.use_count + 1, proc.success_count + int(success)
    cfg = kernel.config.procedures
    retire = scoring.should_retire(
        uses, wins, after_uses=cfg.retire_after_uses, below=cfg.retire_below
    )
    with kernel.writing():
        now = utcnow()
        rows.set_counts(db, proc.id, uses=uses, successes=wins, used_at=now)
        info = {
            "task": task,
            "session_id": session_id,
            "note": note,
            "trace": [t[:MAX_TRACE_CHARS] for t in attempt[:MAX_TRACE_ITEMS]],
        }
        rows.insert_event(db, proc.id, "USE", proc.version, success=success, info=info)
        version = revise(kernel, proc, revision) if revision else proc.version
        if retire:
            set_status(kernel, proc, "retired", version, {"uses": uses, "successes": wins})
    return RecordResult(
        procedure=rows.get(db, proc.id),
        revised=revision is not None,
        retired=retire,
        diagnosis=revision.diagnosis if revision else None,
        served_by=revision.served_by if revision else None,
    )


def revise(kernel: Kernel, proc: Procedure, revision: abstraction.Revision) -> int:
    """Inside a transaction: write the next version of ``proc``; returns its number."""
    db = kernel.db
    caveats = list(proc.caveats)
    if revision.caveat and revision.caveat not in caveats:
        caveats = [*caveats, revision.caveat][-abstraction.MAX_CAVEATS :]
    version = proc.version + 1
    now = utcnow()
    rows.insert_version(
        db,
        proc.id,
        version,
        task_type=proc.task_type,
        trigger=proc.trigger,
        steps=revision.steps,
        level=proc.level,
        example=proc.example,
        caveats=caveats,
        reason=revision.diagnosis,
        served_by=revision.served_by,
        now=now,
    )
    rows.set_version(
        db,
        proc.id,
        version,
        steps=revision.steps,
        caveats=caveats,
        served_by=revision.served_by,
        now=now,
    )
    info = {"reason": revision.diagnosis, "served_by": revision.served_by}
    rows.insert_event(db, proc.id, "REVISE", version, info={**info, "tokens": revision.tokens})
    return version


def retire(kernel: Kernel, procedure_id: str, *, reason: str | None = None) -> Procedure:
    """Take a procedure out of find(); a retired one stays and can be restored."""
    db = kernel.db
    proc = rows.get(db, procedure_id)
    if not proc.retired:
        with kernel.writing():
            set_status(kernel, proc, "retired", proc.version, {"reason": reason or "by hand"})
    return rows.get(db, proc.id)


def restore(kernel: Kernel, procedure_id: str, *, reset_counts: bool = False) -> Procedure:
    """Bring a retired procedure back (``reset_counts``: with a fresh record)."""
    db = kernel.db
    proc = rows.get(db, procedure_id)
    if not proc.retired and not reset_counts:
        return proc
    if memories.stored_vector(kernel, proc.memory_id) is None:
        raise InputError(
            f"the trigger memory of procedure {proc.id} was purged, so it cannot be found "
            "again; add the procedure anew"
        )
    with kernel.writing():
        if reset_counts:
            rows.set_counts(db, proc.id, uses=0, successes=0)
        set_status(kernel, proc, "active", proc.version, {"reset_counts": reset_counts})
    return rows.get(db, proc.id)


def set_status(kernel: Kernel, proc: Procedure, status: str, version: int, info: dict) -> None:
    """Inside a transaction: change the status, log it, hide or show the trigger memory."""
    db = kernel.db
    rows.set_status(db, proc.id, status, now=utcnow())
    event = "RETIRE" if status == "retired" else "RESTORE"
    rows.insert_event(db, proc.id, event, version, info=info)
    trigger = memories.lookup(kernel, proc.memory_id)
    # last: after the trigger memory changes nothing else can fail before the commit
    if status == "retired" and not trigger.deleted:
        memories.delete(kernel, trigger.id, actor="procedures")
    elif status == "active" and trigger.deleted:
        memories.restore(kernel, trigger.id, actor="procedures")


def session_thoughts(kernel: Kernel, session_id: str) -> list[str]:
    """A session's thoughts in order, each revision standing in for the thought it revises."""
    thoughts = sessions.thoughts(kernel, session_id)
    text = {t.number: t.memory.content for t in thoughts}
    revised_by = {t.revises: t.number for t in thoughts if t.revises in text}
    out = []
    for t in thoughts:
        if t.revises in text:
            continue  # it stands where the thought it revises was
        latest = t.number
        while latest in revised_by:
            latest = revised_by[latest]
        out.append(text[latest])
    return out


def check_level(level: Any) -> str:
    """One of the abstraction levels."""
    if level not in LEVELS:
        raise InputError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    return level


def check_trace(trace: Any) -> list[str]:
    """The thoughts of an attempt: a list of strings (blank ones dropped)."""
    if trace is None:
        return []
    if isinstance(trace, str) or not isinstance(trace, Sequence):
        raise InputError("trace must be a list of thoughts (strings)")
    if not all(isinstance(item, str) for item in trace):
        raise InputError("trace must be a list of thoughts (strings)")
    return [item.strip() for item in trace if item.strip()]
