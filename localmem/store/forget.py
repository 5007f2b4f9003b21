"""Forgetting a whole scope at once: every memory of a user, an agent or a session hidden
(:func:`delete_scope`) or erased for good (:func:`purge_scope`), in one unit of writing.

A person must be able to make a store forget them entirely; doing it memory by memory costs a
transaction and a checkpoint each, and a crash half-way leaves half of them. Here the memories
of the scope are chosen and changed inside one unit: all of them or none.
"""

from __future__ import annotations

from collections.abc import Sequence

from localmem import validate
from localmem.errors import InputError
from localmem.store import stated
from localmem.store.db import utcnow
from localmem.store.kernel import Kernel
from localmem.store.unit import Write


def _where(
    user_id: str | None, agent_id: str | None, session_id: str | None, everything: bool
) -> tuple[str, list[str]]:
    given = {
        "user_id": validate.scope_id(user_id, "user_id"),
        "agent_id": validate.scope_id(agent_id, "agent_id"),
        "session_id": validate.scope_id(session_id, "session_id"),
    }
    given = {k: v for k, v in given.items() if v is not None}
    if not given and not everything:
        raise InputError(
            "name a scope (user_id, agent_id or session_id), or pass everything=true to "
            "forget every memory of the store"
        )
    if given and everything:
        raise InputError("everything=true forgets the whole store: name no scope with it")
    where = " AND ".join(f"{col} = ?" for col in given) or "TRUE"
    return where, [value for value in given.values() if value is not None]


def delete_scope(
    kernel: Kernel,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    everything: bool = False,
    actor: str = "user",
) -> int:
    """Soft-delete every live memory of a scope (all the scopes given must match), in one
    unit; returns how many were deleted.

    Raises:
        InputError: no scope named (and not ``everything``), or an invalid id.
    """
    where, params = _where(user_id, agent_id, session_id, everything)
    with kernel.writing() as write:
        rows = write.db.fetchall(
            f"SELECT id, label FROM memories WHERE NOT deleted AND {where} ORDER BY label",
            params,
        )
        for memory_id, label in rows:
            write.soft_delete(memory_id, int(label), actor=actor, info={"bulk": True})
    return len(rows)


def purge_scope(
    kernel: Kernel,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    everything: bool = False,
    actor: str = "user",
) -> int:
    """Erase for good every memory of a scope, deleted ones included (content, context,
    metadata, vector, the values in their history), in one unit; returns how many were purged.
    A tombstone and a PURGE event stay for each, as :func:`localmem.store.memories.purge`
    leaves them.

    Raises:
        InputError: no scope named (and not ``everything``), or an invalid id.
    """
    where, params = _where(user_id, agent_id, session_id, everything)
    # a purged memory is a deleted tombstone without a vector: not purged twice
    sql = (
        f"SELECT id, label FROM memories WHERE {where} "
        "AND NOT (deleted AND embedding IS NULL AND content = '') ORDER BY label"
    )
    chosen = kernel.db.fetchall(sql, params)
    for memory_id, _ in chosen:
        for hook in kernel.hooks.before_purge:
            hook(kernel, memory_id)
    with kernel.writing() as write:
        rows = write.db.fetchall(sql, params)  # again inside the unit: what is true now
        erase(
            kernel,
            write,
            [(memory_id, int(label)) for memory_id, label in rows],
            actor=actor,
            bulk=True,
        )
        if rows:
            write.after_commit(kernel.store.save_index)  # the vectors must leave the file too
            write.after_commit(write.db.checkpoint)
    return len(rows)


def erase(
    kernel: Kernel,
    write: Write,
    rows: Sequence[tuple[str, int]],
    *,
    actor: str = "user",
    bulk: bool = False,
) -> None:
    """Erase for good, inside ``write``, the memories ``rows`` (id, label): their content,
    context, metadata, vector, kept dates, postings, links, derived data and the values in their
    history. A tombstone and a PURGE event stay for each (one purge or a scope's: the same
    erasure; ``bulk`` marks a scope's events)."""
    db = write.db
    labels = [label for _, label in rows]
    stated.forget(db, labels)  # a kept date holds the words it was read from
    info = {"bulk": True} if bulk else None
    for memory_id, _ in rows:
        db.execute(
            "UPDATE memories SET content = '', context = NULL, metadata = NULL, "
            "embedding = NULL, embed_hash = NULL, deleted = true, updated_at = ?, "
            "vec_seq = nextval('vec_seq') WHERE id = ?",
            [utcnow(), memory_id],
        )
        db.execute(
            "UPDATE history SET old_value = NULL, new_value = NULL WHERE memory_id = ?",
            [memory_id],
        )
        write.forget_derived(memory_id)
        db.execute("DELETE FROM links WHERE src = ? OR dst = ?", [memory_id, memory_id])
        for forget in kernel.hooks.on_purge:
            forget(write, memory_id)
        write.record(memory_id, "PURGE", actor=actor, info=info)
    write.unindex(labels)  # a deleted memory has none left: a no-op then
    write.drop_vectors(labels)
