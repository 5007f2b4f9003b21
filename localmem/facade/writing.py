"""The facade's writing half: adding memories (with the jobs the mechanisms ask for),
changing, deleting, restoring and purging them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import numpy as np

from localmem import validate
from localmem.errors import InputError
from localmem.plugin import Plugin, add_jobs
from localmem.store import duplicates, memories
from localmem.store.kernel import Kernel
from localmem.store.memories import JobRequest
from localmem.store.records import NewMemory
from localmem.types import MemoryItem


class Writing:
    """Adding and changing memories (mixed into :class:`localmem.Memory`)."""

    kernel: Kernel
    plugins: tuple[Plugin, ...]

    @property
    def add_options(self) -> tuple[str, ...]:
        """The options of :meth:`add` the composed mechanisms offer (``mine``, ``evolve``)."""
        return tuple(name for plugin in self.plugins for name in plugin.add_options)

    def add(
        self,
        content: str,
        *,
        kind: str = "thought",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        event_time: datetime | str | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        context: str | None = None,
        level: str = "episodic",
        mine: str | None = None,
        evolve: bool | None = None,
        dedupe: bool = False,
    ) -> MemoryItem:
        """Store one memory and return it.

        Args:
            content: the text (non-empty, at most ``store.max_content_chars``).
            kind: thought, message, chunk, fact, procedure, summary or note.
            user_id: scope: whose memory this is.
            agent_id: scope: which agent wrote it.
            session_id: scope: the session (conversation or reasoning episode) it belongs to.
            event_time: when it happened (aware datetime, ISO string with offset, epoch secs).
            metadata: any JSON-serialisable dict.
            context: a description of the memory's context (evolution rewrites it).
            level: episodic, semantic or meta.
            mine: attribute mining: "off", "inline" or "deferred" (default from config).
            evolve: evolve related memories (A-Mem), inline or deferred per config.
            dedupe: when a live memory with the same text, kind, scope (user, agent, session)
                and event time exists, store nothing and return that memory.

        Raises:
            InputError: anything about the input is invalid; nothing is stored then.
        """
        item = dict(
            content=content,
            kind=kind,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            event_time=event_time,
            metadata=metadata,
            context=context,
            level=level,
        )
        if dedupe:
            row = memories.prepare(self.kernel, item)
            found = duplicates.existing(self.kernel.db, [row]).get(duplicates.key(row))
            if found is not None:
                return memories.get(self.kernel, found)
        return self.add_many([item], mine=mine, evolve=evolve)[0]

    def add_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
        mine: str | None = None,
        evolve: bool | None = None,
        dedupe: bool = False,
        **defaults: Any,
    ) -> list[MemoryItem]:
        """Store many memories, embedding them in batches.

        Each item is a string or a dict with the keyword arguments of :meth:`add`; ``defaults``
        fill what an item leaves out (e.g. ``kind="message", user_id="u1"``). Every batch is
        one transaction: a bad item raises :class:`InputError` before anything of its batch is
        written (earlier batches stay). ``progress`` is called with the number stored so far.
        ``dedupe=True`` skips an item that duplicates a live memory or an earlier item (same
        text, kind, scope and event time; see :meth:`add`): the result holds only the memories
        stored, so ``len(items) - len(result)`` were duplicates.
        """
        if items is None or isinstance(items, (str, bytes, bytearray, Mapping)):
            what = "None" if items is None else type(items).__name__
            raise InputError(f"add_many takes a list of items (texts or dicts), not {what}")
        if not isinstance(items, Iterable):
            raise InputError(f"add_many takes a list of items, not {type(items).__name__}")
        validate.positive_int(batch_size, "batch_size", maximum=100_000)
        jobs = self.jobs_for_add(mine=mine, evolve=evolve)
        kernel = self.kernel
        stored: list[MemoryItem] = []
        batch: list[NewMemory] = []
        seen: set[duplicates.Key] = set()

        def flush() -> None:
            rows = batch
            if dedupe:
                have = duplicates.existing(kernel.db, rows)
                rows = [row for row in rows if duplicates.key(row) not in have]
            if rows:
                stored.extend(memories.add(kernel, rows, jobs=jobs))
            batch.clear()
            if progress:
                progress(len(stored))

        for raw in items:
            row = memories.prepare(kernel, raw, defaults)
            if dedupe:
                if duplicates.key(row) in seen:
                    continue
                seen.add(duplicates.key(row))
            batch.append(row)
            if len(batch) >= batch_size:
                flush()
        if batch:
            flush()
        return stored

    def jobs_for_add(
        self, *, mine: str | None = None, evolve: bool | None = None
    ) -> list[JobRequest]:
        """The background jobs an add with these options asks for (the mechanisms decide)."""
        return add_jobs(self.plugins, self.kernel, {"mine": mine, "evolve": evolve})

    # -- changing --------------------------------------------------------------------------------
    def update(
        self,
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
        """Change a memory; a new content or context is re-embedded and re-indexed.

        Every changed field is recorded in the history (``event``: UPDATE, or EVOLVE and REVERT
        for the evolution mechanism) with its old and new value. ``also`` runs inside the same
        transaction (even when nothing changes), so a mechanism's own rows (a link, a job's
        progress) commit together with the change or not at all. ``embedded`` maps texts to
        vectors this store's embedder already made (a caller that updates several memories
        embeds them in one batch); the text to embed is looked up there first.
        """
        if metadata is not None:
            validate.metadata(metadata)
        return memories.update(
            self.kernel,
            memory_id,
            content=content,
            context=context,
            metadata=metadata,
            event_time=event_time,
            actor=actor,
            event=event,
            info=info,
            also=also,
            embedded=embedded,
        )

    def delete(self, memory_id: str, *, actor: str = "user") -> MemoryItem:
        """Hide a memory from search (soft delete, recorded; :meth:`restore` undoes it)."""
        return memories.delete(self.kernel, memory_id, actor=actor)

    def restore(self, memory_id: str, *, actor: str = "user") -> MemoryItem:
        """Bring a soft-deleted memory back."""
        return memories.restore(self.kernel, memory_id, actor=actor)

    def purge(self, memory_id: str, *, actor: str = "user") -> None:
        """Remove a memory's text for real (privacy): content, context, vector, history values.

        A tombstone row and a PURGE history event remain, so links and counts stay explainable;
        the database is checkpointed so the removed text leaves the file.
        """
        memories.purge(self.kernel, memory_id, actor=actor)
