"""The facade's writing half: adding memories (with the jobs the mechanisms ask for),
changing, deleting, restoring and purging them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from localmem import sessions, validate
from localmem.errors import InputError
from localmem.plugin import Plugin, add_jobs
from localmem.store import duplicates, forget, memories
from localmem.store.kernel import Kernel
from localmem.store.memories import JobRequest
from localmem.store.records import NewMemory
from localmem.types import Kind, Level, MemoryItem

if TYPE_CHECKING:
    from localmem.infer.apply import Applied


class Writing:
    """Adding and changing memories (mixed into :class:`localmem.Memory`)."""

    kernel: Kernel
    plugins: tuple[Plugin, ...]
    #: who the history names for the changes made through this object: the process's
    #: identity ("user" by default; "mcp" for `localmem mcp`, "server" for `localmem serve`)
    actor: str

    @property
    def add_options(self) -> tuple[str, ...]:
        """The options of :meth:`add` the composed mechanisms offer (``mine``, ``evolve``)."""
        return tuple(name for plugin in self.plugins for name in plugin.add_options)

    @validate.arguments_checked
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
        infer: bool | None = None,
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
            infer: extract the facts of ``content`` and reconcile each with the memories of
                the same scope (see :meth:`infer`; default: the store's ``infer.on_add``,
                off unless set); returns the memory that holds the first fact then.

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
        if self.infers(infer):
            return self.infer(content, mine=mine, evolve=evolve, **_fields(item))[0].memory
        if dedupe:
            row = memories.prepare(self.kernel, item)
            found = duplicates.existing(self.kernel.db, [row]).get(duplicates.key(row))
            if found is not None:
                return memories.get(self.kernel, found)
        return self.add_many([item], mine=mine, evolve=evolve, infer=False)[0]

    @validate.arguments_checked
    def add_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
        mine: str | None = None,
        evolve: bool | None = None,
        dedupe: bool = False,
        infer: bool | None = None,
        **defaults: Any,
    ) -> list[MemoryItem]:
        """Store many memories, embedding them in batches.

        Each item is a string or a dict with the keyword arguments of :meth:`add`; ``defaults``
        fill what an item leaves out (e.g. ``kind="message", user_id="u1"``). Every batch is
        one transaction: a bad item raises :class:`InputError` before anything of its batch is
        written (earlier batches stay). ``progress`` is called with the number stored so far.
        ``dedupe=True`` skips an item that duplicates a live memory or an earlier item (same
        text, kind, scope and event time; see :meth:`add`): the result holds only the memories
        stored, so ``len(items) - len(result)`` were duplicates. ``infer=True`` reconciles
        item after item (each one :meth:`infer`, one unit each, so a later item sees the
        earlier ones) and returns the memory holding each item's first fact.
        """
        if items is None or isinstance(items, (str, bytes, bytearray, Mapping)):
            what = "None" if items is None else type(items).__name__
            raise InputError(f"add_many takes a list of items (texts or dicts), not {what}")
        if not isinstance(items, Iterable):
            raise InputError(f"add_many takes a list of items, not {type(items).__name__}")
        validate.positive_int(batch_size, "batch_size", maximum=100_000)
        if self.infers(infer):
            out = []
            for raw in items:
                fields = {**defaults, **(raw if isinstance(raw, Mapping) else {"content": raw})}
                memories.prepare(self.kernel, fields)  # refuse a bad item before inferring
                content = fields.pop("content")
                out.append(self.infer(content, mine=mine, evolve=evolve, **fields)[0].memory)
                if progress:
                    progress(len(out))
            return out
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

    @validate.arguments_checked
    def infers(self, infer: bool | None) -> bool:
        """Whether an add infers: as asked, else the store's ``infer.on_add``."""
        if infer is None:
            return self.kernel.config.infer.on_add
        if not isinstance(infer, bool):
            raise InputError(f"infer must be true or false, not {infer!r}")
        return infer

    @validate.arguments_checked
    def infer(
        self,
        content: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        speaker: str | None = None,
        kind: Kind = "thought",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        event_time: datetime | str | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        context: str | None = None,
        level: Level = "episodic",
        mine: str | None = None,
        evolve: bool | None = None,
    ) -> list[Applied]:
        """Add with inference: extract the facts of ``content`` and reconcile each with what
        the same scope already holds, all in one unit.

        ``content`` is a text, one chat message or a list of them (dicts with ``content`` and
        optionally ``name`` / ``role``): each message's facts are read with its ``name`` as the
        speaker ("I" becomes the name). A text "Name: ..." is read as said by Name. Each fact is
        ADDed, UPDATEs a memory that says the same with less detail, INVALIDATEs a memory it makes
        untrue (that memory gets ``valid_to`` and ``superseded_by`` and stays findable with
        ``search(..., as_of=...)``), or is NONE (already stored). The decisions are made by the
        engine when one is configured (``infer.extractor`` / ``infer.decider``), else by rules; each
        is recorded in the history with its reason and decider. The other parameters are those of
        :meth:`add` (scope, kind, event time, metadata) and apply to every stored fact.

        Returns:
            One :class:`~localmem.infer.apply.Applied` per fact (at least one: a text with no
            fact in it, or a model whose output stayed malformed, stores the text as given).
        """
        fields = _fields(
            {
                "kind": kind,
                "user_id": user_id,
                "agent_id": agent_id,
                "session_id": session_id,
                "event_time": event_time,
                "metadata": metadata,
                "context": context,
                "level": level,
            }
        )
        texts = conversation_texts(
            content, speaker, max_chars=self.kernel.config.store.max_content_chars
        )
        base = memories.prepare(self.kernel, {**fields, "content": texts[0][0]})
        when = base.event_time.date().isoformat() if base.event_time else None
        jobs = self.jobs_for_add(mine=mine, evolve=evolve)
        # inference (its extraction task and rules) is imported only by an add that infers
        from localmem.infer import apply as infer_apply
        from localmem.infer import plan as infer_plan

        # decided and written in turn with the other inferences of the scope: two at once both
        # decided from a store without the other's fact (several current homes, duplicates)
        with self.kernel.serialised(infer_plan.scope_key(fields)):
            decisions = infer_plan.plan(
                self.kernel, texts, scope=fields, when=when, at=base.event_time
            )
            return infer_apply.apply(self.kernel, decisions, base, jobs=jobs)

    def jobs_for_add(
        self, *, mine: str | None = None, evolve: bool | None = None
    ) -> list[JobRequest]:
        """The background jobs an add with these options asks for (the mechanisms decide)."""
        return add_jobs(self.plugins, self.kernel, {"mine": mine, "evolve": evolve})

    # -- changing --------------------------------------------------------------------------------
    @validate.arguments_checked
    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        context: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        event_time: datetime | str | float | None = None,
    ) -> MemoryItem:
        """Change a memory; a new content or context is re-embedded and re-indexed.

        Every changed field is recorded in the history as an UPDATE by :attr:`actor`, with its
        old and new value. Who and what the history records is not the caller's to say (issue
        30: a client could forge a PURGE by "system:admin"); code inside localmem that writes
        other events (evolution, an importer carrying another system's history) goes through
        the kernel: :func:`localmem.store.memories.update` or ``kernel.writing()``'s
        ``write.record``.
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
            actor=self.actor,
        )

    @validate.arguments_checked
    def delete(self, memory_id: str) -> MemoryItem:
        """Hide a memory from search (soft delete, recorded; :meth:`restore` undoes it)."""
        return memories.delete(self.kernel, memory_id, actor=self.actor)

    @validate.arguments_checked
    def restore(self, memory_id: str) -> MemoryItem:
        """Bring a soft-deleted memory back."""
        return memories.restore(self.kernel, memory_id, actor=self.actor)

    @validate.arguments_checked
    def purge(self, memory_id: str) -> None:
        """Remove a memory's text for real (privacy): content, context, vector, history values.

        A tombstone row and a PURGE history event remain, so links and counts stay explainable;
        the database is checkpointed so the removed text leaves the file.
        """
        memories.purge(self.kernel, memory_id, actor=self.actor)

    @validate.arguments_checked
    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        everything: bool = False,
    ) -> int:
        """Hide every live memory of a scope in one unit; returns how many (see
        :meth:`localmem.api.MemoryAPI.delete_all`)."""
        return forget.delete_scope(
            self.kernel,
            user_id=user_id,
            agent_id=agent_id,
            session_id=session_id,
            everything=everything,
            actor=self.actor,
        )

    @validate.arguments_checked
    def purge_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        everything: bool = False,
    ) -> int:
        """Erase every memory of a scope for good in one unit, with what the scope's sessions
        say (their titles and outcomes) and the procedures of its purged memories; returns how
        many memories (see :meth:`localmem.api.MemoryAPI.purge_all`)."""
        with self.kernel.writing() as write:  # the memories and the sessions: one unit
            purged = forget.purge_scope(
                self.kernel,
                user_id=user_id,
                agent_id=agent_id,
                session_id=session_id,
                everything=everything,
                actor=self.actor,
            )
            sessions.erase_titles(
                write.db,
                user_id=user_id,
                agent_id=agent_id,
                session_id=session_id,
                everything=everything,
            )
        return purged


def _fields(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "content" and v is not None}


_SAID_BY = re.compile(r"^\s*([A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?):\s+(\S.*)$", re.DOTALL)


def conversation_texts(
    content: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
    speaker: str | None,
    *,
    max_chars: int,
) -> list[tuple[str, str | None]]:
    """``(text, speaker)`` pairs of what an inferring add was given (a text, one message or a
    list of messages).

    Raises:
        InputError: not a non-empty text, a message with text, nor a non-empty list of them.
    """
    if speaker is not None:
        validate.scope_id(speaker, "speaker")
    if isinstance(content, Mapping):  # one chat message
        content = [content]
    if isinstance(content, str):
        validate.content(content, max_chars=max_chars)
        said = _SAID_BY.match(content) if speaker is None else None
        return [(said.group(2), said.group(1))] if said else [(content, speaker)]
    if not isinstance(content, Sequence) or not content:
        raise InputError("content must be a text or a non-empty list of messages")
    out = []
    for i, msg in enumerate(content):
        if not isinstance(msg, Mapping) or not isinstance(msg.get("content"), str):
            raise InputError(f"message {i} must be a dict with a 'content' text")
        validate.content(msg["content"], max_chars=max_chars, what=f"message {i}")
        name = msg.get("name", speaker)
        if name is not None:
            validate.scope_id(name, "name")
        out.append((msg["content"], name))
    return out
