"""One unit of writing: everything a change does to a store, committed together or not at all.

A :class:`Write` is what :meth:`localmem.store.kernel.Kernel.writing` hands to the code inside
it. SQL statements run on ``write.db`` inside the transaction; the BM25 postings are written in
the same transaction (:meth:`index`, :meth:`unindex`); changes to the vector index are queued
(:meth:`add_vectors`, :meth:`drop_vectors`) and applied only after the commit, because the
hnswlib index cannot roll back (a crash between the two is repaired from DuckDB on open).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem.errors import StoreError
from localmem.store import history as history_rows
from localmem.store import records, repair, stated
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow
from localmem.store.records import NewMemory
from localmem.text import content_hash
from localmem.types import MemoryItem, embedding_text

if TYPE_CHECKING:
    from localmem.store.store import Store


class Write:
    """The open unit of writing (see :meth:`localmem.store.kernel.Kernel.writing`).

    Args:
        store: the store it writes.
        on_delete: the mechanisms' hooks ``(write, memory_id)`` that drop what was derived from
            a memory that is deleted or purged.
    """

    def __init__(
        self, store: Store, *, on_delete: Sequence[Callable[[Write, str], None]] = ()
    ) -> None:
        self.store = store
        self.db: StoreDatabase = store.db
        self._on_delete = list(on_delete)
        self._vector_ops: list[tuple[str, list[int], np.ndarray | None]] = []
        self._after: list[Callable[[], None]] = []
        #: whether the unit wrote postings (only then must a failed unit reload them: a change
        #: refused before it wrote any, a racing update of a deleted memory, costs nothing)
        self.indexed = False

    # -- memory rows ---------------------------------------------------------------------------
    def current(self, memory_id: str) -> MemoryItem | None:
        """The memory as this unit sees it, its row held until the commit (None: no such id).

        A change decides from this, never from a read made before the unit: another thread or
        process may have deleted, restored or rewritten the memory since, and a decision from
        the old state put a deleted memory's postings and vector back.
        """
        return records.fetch_locked(self.db, memory_id)

    def insert(self, rows: Sequence[NewMemory], vectors: np.ndarray) -> datetime:
        """Write new memories (labelled), their ADD history, postings and (after the commit)
        vectors; returns the time they were stored."""
        now = records.insert_memories(self.db, rows, vectors)
        labels = [r.label for r in rows]
        self.index(labels, [embedding_text(r.content, r.context) for r in rows])
        stated.state(
            self.db,
            labels,
            [r.content for r in rows],
            [r.content_hash for r in rows],
            [r.event_time for r in rows],
        )
        self.add_vectors(labels, vectors)
        return now

    def soft_delete(
        self, memory_id: str, label: int, *, actor: str, info: dict[str, Any] | None = None
    ) -> None:
        """Hide a memory: the row is marked deleted, its postings, mined data and pending jobs
        go, a DELETE event is recorded and its vector leaves the index after the commit."""
        self.db.execute(
            "UPDATE memories SET deleted = true, updated_at = ?, "
            "vec_seq = nextval('vec_seq') WHERE id = ?",
            [utcnow(), memory_id],
        )
        self.unindex([label])
        self.forget_derived(memory_id)
        self.record(memory_id, "DELETE", actor=actor, info=info)
        self.drop_vectors([label])

    def forget_derived(self, memory_id: str) -> None:
        """Data derived from a memory goes with it: each mechanism's (its delete hooks) and its
        pending background jobs."""
        for hook in self._on_delete:
            hook(self, memory_id)
        self.store.jobs.drop_for(memory_id, "memory deleted")

    def update_fields(
        self,
        item: MemoryItem,
        changes: dict[str, tuple[Any, Any]],
        vector: np.ndarray | None,
        text: str,
        *,
        actor: str,
        event: str,
        info: Mapping[str, Any] | None,
    ) -> None:
        """Change a memory's fields (``changes``: field -> (old, new)), one history row per
        field; a new ``vector`` (of ``text``) re-indexes it."""
        sets: list[str] = ["updated_at = ?"]
        params: list[Any] = [utcnow()]
        for name, (old, new) in changes.items():
            if name == "metadata":
                sets.append("metadata = ?::JSON")
                params.append(as_json(new))
            elif name == "event_time":
                sets.append("event_time = ?")
                params.append(records.to_db_time(new))
                # validity follows the event time it defaulted to (a set validity stays)
                sets.append(
                    "valid_from = CASE WHEN valid_from IS NOT DISTINCT FROM "
                    "coalesce(?::TIMESTAMP, created_at) THEN coalesce(?::TIMESTAMP, created_at) "
                    "ELSE valid_from END"
                )
                params += [records.to_db_time(old), records.to_db_time(new)]
            else:
                sets.append(f"{name} = ?")
                params.append(new)
            if name == "content":
                sets.append("content_hash = ?")
                params.append(content_hash(new))
            self.record(
                item.id,
                event,
                field=name,
                old=as_text(old),
                new=as_text(new),
                actor=actor,
                info=dict(info) if info else None,
            )
        if vector is not None:
            sets += ["embedding = ?::FLOAT[]", "embed_hash = ?", "vec_seq = nextval('vec_seq')"]
            params += [vector.tolist(), content_hash(text)]
        else:
            sets.append(records.REWRITE_ROW)  # metadata may go from NULL to a value
        self.db.execute(f"UPDATE memories SET {', '.join(sets)} WHERE id = ?", [*params, item.id])
        if "content" in changes or "event_time" in changes:  # the dates it states, anew
            content = changes["content"][1] if "content" in changes else item.content
            when = changes["event_time"][1] if "event_time" in changes else item.event_time
            stated.state(self.db, [item.label], [content], [content_hash(content)], [when])
        if vector is not None:
            self.unindex([item.label])
            self.index([item.label], [text])
            self.add_vectors([item.label], vector[None, :])

    def record(
        self,
        memory_id: str,
        event: str,
        *,
        field: str | None = None,
        old: str | None = None,
        new: str | None = None,
        actor: str = "user",
        info: dict[str, Any] | None = None,
    ) -> None:
        """Append one change to a memory's history."""
        history_rows.record_history(
            self.db, memory_id, event, field=field, old=old, new=new, actor=actor, info=info
        )

    def supersede(
        self,
        memory_id: str,
        successor_id: str,
        valid_to: datetime,
        *,
        actor: str,
        info: dict[str, Any] | None = None,
    ) -> None:
        """Mark a memory as no longer true from ``valid_to`` on, replaced by ``successor_id``
        (an INVALIDATE event). It stays stored and searchable for the time it was true.

        There is no way to end a memory's validity without naming the memory that replaces
        it: a contradiction never loses the old fact nor drops the new one.
        """
        if not successor_id:
            raise ValueError("a memory is superseded only by another memory")
        self.db.execute(
            "UPDATE memories SET valid_to = ?, superseded_by = ?, updated_at = ?, "
            f"{records.REWRITE_ROW} WHERE id = ?",
            [records.to_db_time(valid_to), successor_id, utcnow(), memory_id],
        )
        self.record(
            memory_id,
            "INVALIDATE",
            field="valid_to",
            new=valid_to.isoformat(),
            actor=actor,
            info={**(info or {}), "superseded_by": successor_id},
        )

    def mend(self, labels: Sequence[int]) -> int:
        """Make the indexes agree with the table for these labels (a search found them out of
        step, :meth:`localmem.store.store.Store.vectors_of`); returns the entries changed."""
        labels = [int(x) for x in labels]
        rows = self.db.fetchall(
            "SELECT label, NOT deleted AND embedding IS NOT NULL, embedding FROM memories "
            "WHERE label IN (SELECT unnest(?::BIGINT[])) ORDER BY label",
            [labels],
        )
        live = {int(r[0]): r[2] for r in rows if r[1]}
        dead = sorted(set(labels) - set(live))
        docs = self.db.fetchall(
            "SELECT label FROM lex_docs WHERE label IN (SELECT unnest(?::BIGINT[]))", [labels]
        )
        with_postings = {int(r[0]) for r in docs}
        unindexed = sorted(set(live) - with_postings)
        in_index = repair.vector_labels(self.store)
        vectorless = sorted(set(live) - in_index)
        self.unindex(dead + unindexed)  # a no-op for labels without postings
        for label, text in repair.texts(self.db, unindexed):
            self.index([label], [text])
        self.drop_vectors([x for x in dead if x in in_index])
        # counted as changed only where an index still held them: most suspects are a search
        # that raced a delete, and were out of both indexes by the time this runs
        still_held = [x for x in dead if x in in_index or x in with_postings]
        if vectorless:
            vectors = np.asarray([live[x] for x in vectorless], dtype=np.float32)
            self.add_vectors(vectorless, vectors)
        return len(still_held) + len(unindexed) + len(vectorless)

    def enqueue(
        self, kind: str, memory_id: str | None = None, payload: dict[str, Any] | None = None
    ) -> int:
        """Queue a background job that commits with this unit; returns its id."""
        return self.store.jobs.enqueue(kind, memory_id, payload)

    # -- side indexes ---------------------------------------------------------------------------
    def index(self, labels: Sequence[int], texts: Sequence[str]) -> None:
        """BM25 postings for these memories (in this transaction)."""
        self.indexed = True
        self.store.lexical.add(list(labels), list(texts))

    def unindex(self, labels: Sequence[int]) -> None:
        """Remove these memories' postings (in this transaction)."""
        self.indexed = True
        self.store.lexical.remove(list(labels))

    def add_vectors(self, labels: Sequence[int], vectors: np.ndarray) -> None:
        """Put vectors in the index once the unit has committed."""
        self._vector_ops.append(("add", [int(x) for x in labels], vectors))

    def drop_vectors(self, labels: Sequence[int]) -> None:
        """Take vectors out of the index once the unit has committed."""
        self._vector_ops.append(("drop", [int(x) for x in labels], None))

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` once the unit has committed (and its vectors are in the index)."""
        self._after.append(fn)

    # -- the end of the unit (called by the kernel) ---------------------------------------------
    def finish(self) -> None:
        """After the commit: apply the queued vector changes, count them, run the callbacks."""
        store = self.store
        changed = added = 0
        for op, labels, vectors in self._vector_ops:
            index = store.vectors
            if index is None:  # a store closed under an open unit: nothing to apply to
                raise StoreError("the store's vector index is closed")
            if op != "add":
                index.mark_deleted(labels)
            elif vectors is not None:  # add_vectors always queues them
                index.add(labels, vectors)
                added += len(labels)
            changed += len(labels)
        if changed:
            store.index_changed(changed, added=added)
        for fn in self._after:
            fn()


def as_text(value: Any) -> str | None:
    """A field value as history keeps it (ISO times, sorted JSON)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return as_json(value)
    return str(value)


def as_json(value: Any) -> str:
    """JSON with sorted keys (how metadata is compared and kept in history)."""
    return json.dumps(value, sort_keys=True)
