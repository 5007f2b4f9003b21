"""Memory rows through a kernel: validate, add, read, update, delete, restore, purge.

Every function takes the open store's :class:`~localmem.store.kernel.Kernel`. Every change runs
inside :meth:`Kernel.writing`, so each one is a single unit: the row, its history, its postings
and its mechanisms' rows commit together, and its vector reaches the index after the commit.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np

from localmem import validate
from localmem.errors import InputError, NotFoundError
from localmem.store import embedcache, prefix, records
from localmem.store import history as history_rows
from localmem.store.db import utcnow
from localmem.store.fields import changed_fields, text_after, wanted_fields
from localmem.store.forget import erase
from localmem.store.kernel import Kernel
from localmem.store.records import NewMemory
from localmem.store.unit import Write
from localmem.text import content_hash
from localmem.types import HistoryEvent, MemoryItem, embedding_text

log = logging.getLogger("localmem")

#: the fields a memory is added with
ADD_FIELDS = frozenset(
    {
        "content",
        "kind",
        "user_id",
        "agent_id",
        "session_id",
        "event_time",
        "metadata",
        "context",
        "level",
    }
)

#: a background job an add asks for: (kind, payload, "inline" | "deferred")
JobRequest = tuple[str, dict[str, Any], str]


def new_id() -> str:
    """A fresh memory id: 16 hex characters (64 random bits)."""
    return secrets.token_hex(8)


# -- adding ---------------------------------------------------------------------------------
def prepare(
    kernel: Kernel, raw: str | Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> NewMemory:
    """Validate one memory to add (a text, or a dict of :data:`ADD_FIELDS`).

    Raises:
        InputError: anything about it is invalid.
    """
    fields = dict(defaults or {})
    if isinstance(raw, Mapping):
        fields.update(raw)
    else:
        fields["content"] = raw
    unknown = set(fields) - ADD_FIELDS
    if unknown:
        raise InputError(f"unknown field(s) for a memory: {', '.join(sorted(map(repr, unknown)))}")
    limit = kernel.config.store.max_content_chars
    text = validate.content(fields.get("content"), max_chars=limit)
    ctx = validate.optional_text(fields.get("context"), max_chars=limit, what="context")
    return NewMemory(
        id=new_id(),
        label=-1,
        kind=validate.kind(fields.get("kind", "thought")),
        content=text,
        content_hash=content_hash(text),
        embed_hash=content_hash(embedding_text(text, ctx)),
        user_id=validate.scope_id(fields.get("user_id"), "user_id"),
        agent_id=validate.scope_id(fields.get("agent_id"), "agent_id"),
        session_id=validate.scope_id(fields.get("session_id"), "session_id"),
        context=ctx,
        level=validate.level(fields.get("level", "episodic")),
        event_time=validate.timestamp(fields.get("event_time")),
        metadata=validate.metadata(fields.get("metadata")),
    )


def embed(kernel: Kernel, rows: Sequence[NewMemory]) -> np.ndarray:
    """Vectors for rows about to be added (texts stored before are not embedded again)."""
    return embedcache.embed_rows(kernel.db, kernel.embedder, rows)


def add(
    kernel: Kernel,
    rows: Sequence[NewMemory],
    *,
    jobs: Sequence[JobRequest] = (),
    vectors: np.ndarray | None = None,
    extra: Callable[[Write, list[NewMemory]], None] | None = None,
) -> list[MemoryItem]:
    """Embed (unless ``vectors`` are given, one row per memory) and store prepared rows.

    The rows, their history, postings and jobs commit in one unit (``extra(write, rows)``
    writes a mechanism's own rows inside it); inline jobs run after the commit.
    """
    if vectors is None:
        vectors = embed(kernel, rows)
    with kernel.writing() as write:
        labels = records.next_labels(write.db, len(rows))
        labelled = [replace(row, label=label) for row, label in zip(rows, labels, strict=True)]
        now = write.insert(labelled, vectors)
        if extra:
            extra(write, labelled)
        job_ids = [
            write.enqueue(kind, row.id, payload) for row in labelled for kind, payload, _ in jobs
        ]
    items = [records.item_from_new(row, now) for row in labelled]
    modes = [mode for _ in labelled for _, _, mode in jobs]  # the order jobs were queued in
    inline = [jid for jid, mode in zip(job_ids, modes, strict=True) if mode == "inline"]
    if inline:
        kernel.run_jobs(job_ids=inline)
    return items


# -- reading --------------------------------------------------------------------------------
def lookup(kernel: Kernel, memory_id: str) -> MemoryItem:
    """The memory with this id or unique prefix, deleted or not.

    Raises:
        InputError: not a usable id, or a prefix of several.
        NotFoundError: no such memory.
    """
    memory_id = validate.identifier(memory_id, "a memory id")
    found = prefix.find_rows(
        kernel.db, f"SELECT {records.MEMORY_COLUMNS} FROM memories", memory_id, what="memory"
    )
    return records.row_to_item(found[0])


def get(kernel: Kernel, memory_id: str, *, include_deleted: bool = False) -> MemoryItem:
    """A memory by id or unique prefix (a deleted one only with ``include_deleted``)."""
    item = lookup(kernel, memory_id)
    if item.deleted and not include_deleted:
        raise NotFoundError(f"memory {item.id} is deleted (restore it or pass include_deleted)")
    return item


def get_many(kernel: Kernel, ids: Sequence[str]) -> list[MemoryItem]:
    """Memories by exact id, in the order asked (unknown ids raise NotFoundError)."""
    found = records.fetch_by_ids(kernel.db, list(ids))
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFoundError(f"no memory with id {missing[0]!r}")
    return [found[i] for i in ids]


def by_ids(kernel: Kernel, ids: Sequence[str]) -> dict[str, MemoryItem]:
    """Memories by id, live or deleted; unknown ids are left out."""
    return records.fetch_by_ids(kernel.db, list(ids))


def by_labels(kernel: Kernel, labels: Sequence[int]) -> dict[int, MemoryItem]:
    """Memories by index label, live or deleted; unknown labels are left out."""
    return records.fetch_by_labels(kernel.db, labels)


def by_labels_with_placement(
    kernel: Kernel, labels: Sequence[int], placed: Sequence[int]
) -> tuple[dict[int, MemoryItem], dict[int, records.Placement]]:
    """Memories by label and, in the same round trip, where other memories sit
    (``(session_id, user_id, agent_id, when, deleted)`` by label); unknown labels are left out."""
    return records.fetch_with_placement(kernel.db, labels, placed)


def select(
    kernel: Kernel,
    *,
    kind: str | None = None,
    session_id: str | None = None,
    user_id: str | None = None,
    limit: int = 100,
    offset: int = 0,
    include_deleted: bool = False,
    in_session: bool | None = None,
    oldest_first: bool = False,
    agent_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> list[MemoryItem]:
    """Memories, newest first (or in time order), optionally of one kind / session / user /
    agent, with some metadata values, in a session or outside any (``in_session``)."""
    where, params = ["TRUE"], []
    if not include_deleted:
        where.append("NOT deleted")
    for col, val in (
        ("kind", kind),
        ("session_id", session_id),
        ("user_id", user_id),
        ("agent_id", agent_id),
    ):
        if val is not None:
            where.append(f"{col} = ?")
            params.append(val)
    more, more_params = records.metadata_conditions(metadata)
    where += more
    params += more_params
    if in_session is not None:
        where.append("session_id IS NOT NULL" if in_session else "session_id IS NULL")
    order = (
        "ORDER BY coalesce(event_time, created_at), label"
        if oldest_first
        else "ORDER BY created_at DESC, label DESC"
    )
    return records.fetch(
        kernel.db,
        " AND ".join(where),
        params,
        order=f"{order} LIMIT {int(limit)} OFFSET {int(offset)}",
    )


def users(kernel: Kernel, *, limit: int = 200) -> list[tuple[str, int]]:
    """(user id, live memories outside sessions) for every user that has some, by id."""
    rows = kernel.db.fetchall(
        "SELECT user_id, count(*) FROM memories WHERE NOT deleted AND user_id IS NOT NULL "
        "AND session_id IS NULL GROUP BY 1 ORDER BY 1 LIMIT ?",
        [int(limit)],
    )
    return [(user, int(n)) for user, n in rows]


def history(kernel: Kernel, memory_id: str) -> list[HistoryEvent]:
    """Every change of a memory, oldest first."""
    return history_rows.history(kernel.db, lookup(kernel, memory_id).id)


def count(kernel: Kernel, *, include_deleted: bool = False, user_id: str | None = None) -> int:
    """How many memories the store holds (of one user)."""
    where, params = ["TRUE" if include_deleted else "NOT deleted"], []
    if user_id is not None:
        where.append("user_id = ?")
        params.append(user_id)
    sql = f"SELECT count(*) FROM memories WHERE {' AND '.join(where)}"
    return int(kernel.db.scalar(sql, params))


def stored_vector(kernel: Kernel, memory_id: str) -> np.ndarray | None:
    """A memory's stored vector (None when purged)."""
    return embedcache.stored_vector(kernel.db, memory_id)


# -- changing -------------------------------------------------------------------------------
# Each change reads the memory again inside its unit (``Write.current``) and decides from that:
# a read from before the unit may be stale (a delete, restore or purge committed meanwhile by
# another thread, or another process on PostgreSQL), and deciding from it used to put a deleted
# memory's postings and vector back, or a purged memory's text.


def update(
    kernel: Kernel,
    memory_id: str,
    *,
    content: str | None = None,
    context: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    event_time: datetime | str | float | None = None,
    actor: str = "user",
    event: str = "UPDATE",
    info: Mapping[str, Any] | None = None,
    also: Callable[[], None] | None = None,
    embedded: Mapping[str, np.ndarray] | None = None,
) -> MemoryItem:
    """Change a memory; see :meth:`localmem.Memory.update` (``also`` runs in the unit).

    Raises:
        NotFoundError: no such memory, or it is deleted (also when a delete commits while
            this update is being prepared: the update then changes nothing).
    """
    item = get(kernel, memory_id)
    asked = {"content": content, "context": context, "metadata": metadata}
    wanted = wanted_fields(kernel, {**asked, "event_time": event_time})
    changes = changed_fields(item, wanted)
    if not changes and also is None:
        return item
    # embedded before the unit (the lock is not held for the model), checked again inside it
    vectors = dict(embedded or {})
    text = text_after(item, changes)
    if text is not None and text not in vectors:
        vectors[text] = kernel.embedder.embed_batch([text])[0]
    with kernel.writing() as write:
        current = write.current(item.id)
        if current is None or current.deleted:
            raise NotFoundError(f"memory {item.id} was deleted before this update committed")
        changes = changed_fields(current, wanted)
        text = text_after(current, changes)
        if text is not None and text not in vectors:  # another update changed it meanwhile
            vectors[text] = kernel.embedder.embed_batch([text])[0]
        if changes:
            vector = vectors[text] if text is not None else None
            write.update_fields(
                current, changes, vector, text or "", actor=actor, event=event, info=info
            )
        if also is not None:
            also()
    if "content" in changes:
        kernel.changed(item.id, "content")
    return get(kernel, item.id)


def delete(kernel: Kernel, memory_id: str, *, actor: str = "user") -> MemoryItem:
    """Hide a memory from search (soft delete, recorded; :meth:`restore` undoes it).

    Raises:
        NotFoundError: no such memory, or it is deleted already (also by a delete that
            committed meanwhile).
    """
    item = get(kernel, memory_id)
    with kernel.writing() as write:
        current = write.current(item.id)
        if current is None or current.deleted:
            raise NotFoundError(f"memory {item.id} is deleted (restore it or pass include_deleted)")
        write.soft_delete(current.id, current.label, actor=actor)
    return get(kernel, item.id, include_deleted=True)


def restore(kernel: Kernel, memory_id: str, *, actor: str = "user") -> MemoryItem:
    """Bring a soft-deleted memory back (a live one is returned as it is).

    Raises:
        NotFoundError: no such memory, or it was purged (also by a purge that committed
            meanwhile).
    """
    item = lookup(kernel, memory_id)
    if not item.deleted:
        return item
    with kernel.writing() as write:
        current = write.current(item.id)
        if current is None:
            raise NotFoundError(f"no memory with id {item.id!r}")
        vector = stored_vector(kernel, item.id)  # read in the unit: a purge clears it
        if current.deleted:
            if vector is None:
                raise NotFoundError(f"memory {item.id} was purged and cannot be restored")
            write.db.execute(
                "UPDATE memories SET deleted = false, updated_at = ?, "
                "vec_seq = nextval('vec_seq') WHERE id = ?",
                [utcnow(), item.id],
            )
            write.index([current.label], [current.text_for_embedding])
            write.record(item.id, "RESTORE", actor=actor)
            write.add_vectors([current.label], vector[None, :])
    if current.deleted:
        kernel.changed(item.id, "restore")  # what was derived from it went with the delete
    return get(kernel, item.id)


def purge(kernel: Kernel, memory_id: str, *, actor: str = "user") -> None:
    """Remove a memory's text for real: content, context, vector, history values.

    A tombstone row and a PURGE history event remain; the database is checkpointed so the
    removed text leaves the file, and the index is saved so the vector leaves it too.
    """
    item = lookup(kernel, memory_id)
    for hook in kernel.hooks.before_purge:
        hook(kernel, item.id)
    with kernel.writing() as write:
        erase(kernel, write, [(item.id, item.label)], actor=actor)
        write.after_commit(kernel.store.save_index)  # the vector must leave the file too
        write.after_commit(write.db.checkpoint)
