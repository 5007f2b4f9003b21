"""``Memory``: the Python API of localmem (add, get, update, delete, search, sessions)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem import validate
from localmem.config import CONFIG_FILE, Config, default_store_path
from localmem.embed import Embedder, embedder_for_store, make_embedder
from localmem.errors import InputError, NotFoundError
from localmem.store import records
from localmem.store.db import utcnow
from localmem.store.jobs import Job
from localmem.store.records import NewMemory
from localmem.store.store import Store
from localmem.text import content_hash
from localmem.types import HistoryEvent, MemoryItem, SearchResult, Session, Thought, embedding_text

if TYPE_CHECKING:
    from localmem.consolidation import ConsolidationReport
    from localmem.procedures import ProcedureStore

log = logging.getLogger("localmem")

#: what a background job of some kind runs: handler(memory, job); it must write its results and
#: call ``memory.store.jobs.done(job.id)`` inside one ``memory.store.db.transaction()``
JobHandler = Callable[["Memory", Job], None]


def job_handlers() -> dict[str, JobHandler]:
    """Kinds of background job and the function that does each (mechanisms add theirs here)."""
    from localmem.attributes.jobs import mine_job
    from localmem.evolution.job import handle_evolve_job

    return {"mine": mine_job, "evolve": handle_evolve_job}


@dataclass(frozen=True)
class JobsReport:
    """What a run of background jobs did."""

    done: int
    failed: int
    dropped: int
    remaining: int


class Memory:
    """A local memory store for agents.

    Build one with :meth:`open`; or pass the collaborators in (tests, custom embedders)::

        with Memory.open("~/notes") as mem:
            mem.add("The rate limiter should use a sliding window", kind="thought")
            for hit in mem.search("rate limiting"):
                print(hit.score, hit.memory.content)
    """

    def __init__(
        self, store: Store, embedder: Embedder, *, config: Config | None = None, engine: Any = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config or Config()
        self._engine = engine
        self._procedures: ProcedureStore | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        config: Config | None = None,
        embedder: Embedder | None = None,
        engine: Any = None,
        create: bool = True,
    ) -> Memory:
        """Open the store at ``path`` (default: ``$LOCALMEM_HOME/default``), creating it if new.

        Args:
            path: the store folder.
            config: overrides the store's own ``config.json`` for this session; a new store
                saves it.
            embedder: an embedder to use instead of the configured one (same model name).
            engine: a model engine for the model tasks (default: from the config, lazily).
            create: create the store if the folder holds none.

        Raises:
            StoreError: not a store, corrupt, or made with another embedding model.
            StoreLockedError: another process has the store open.
        """
        folder = Path(path).expanduser() if path is not None else default_store_path()
        file_config = Config.load(folder / CONFIG_FILE)
        config = config or file_config
        given = embedder is not None
        embedder = embedder or make_embedder(config.embedder)
        store = Store.open(
            folder,
            config=config.store,
            model=embedder.name,  # what a new store records
            dim=embedder.dim,
            create=create,
            check_model=False,  # checked below, once the embedder is settled
        )
        try:
            if not given and store.model != embedder.name:  # built with another variant
                embedder = embedder_for_store(config.embedder, store.model)
            store.check_model(embedder.name, embedder.dim)
        except BaseException:
            store.close(save=False)
            raise
        if not (folder / CONFIG_FILE).exists() and config != Config():
            config.save(folder / CONFIG_FILE)
        return cls(store, embedder, config=config, engine=engine)

    def close(self) -> None:
        """Save the index and release the store."""
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        """The store folder."""
        return self.store.folder

    @property
    def engine(self) -> Any:
        """The model engine for model tasks, or None when only model-free ones are available."""
        if self._engine is None:
            from localmem.llm import make_engine  # imported late: llama.cpp is heavy

            self._engine = make_engine(self.config.engine) or False
        return self._engine or None

    # -- writing ---------------------------------------------------------------------------------
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
        return self.add_many([item], mine=mine, evolve=evolve)[0]

    def add_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
        mine: str | None = None,
        evolve: bool | None = None,
        **defaults: Any,
    ) -> list[MemoryItem]:
        """Store many memories, embedding them in batches.

        Each item is a string or a dict with the keyword arguments of :meth:`add`; ``defaults``
        fill what an item leaves out (e.g. ``kind="message", user_id="u1"``). Every batch is
        one transaction: a bad item raises :class:`InputError` before anything of its batch is
        written (earlier batches stay). ``progress`` is called with the number stored so far.
        """
        validate.positive_int(batch_size, "batch_size", maximum=100_000)
        stored: list[MemoryItem] = []
        batch: list[NewMemory] = []
        for raw in items:
            batch.append(self._prepare(raw, defaults))
            if len(batch) >= batch_size:
                stored += self._write(batch, mine=mine, evolve=evolve)
                batch = []
                if progress:
                    progress(len(stored))
        if batch:
            stored += self._write(batch, mine=mine, evolve=evolve)
            if progress:
                progress(len(stored))
        return stored

    def _prepare(self, raw: str | Mapping[str, Any], defaults: Mapping[str, Any]) -> NewMemory:
        fields = dict(defaults)
        if isinstance(raw, Mapping):
            fields.update(raw)
        else:
            fields["content"] = raw
        unknown = set(fields) - _ADD_FIELDS
        if unknown:
            raise InputError(f"unknown field(s) for a memory: {', '.join(sorted(unknown))}")
        limit = self.config.store.max_content_chars
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

    def _write(
        self,
        batch: list[NewMemory],
        *,
        mine: str | None,
        evolve: bool | None,
        extra: Callable[[list[NewMemory]], None] | None = None,
        vectors: np.ndarray | None = None,
    ) -> list[MemoryItem]:
        """Embed (unless the caller did: ``vectors``, one row per memory), then write rows,
        postings and jobs in one transaction, then the vectors."""
        if vectors is None:
            vectors = self._embed_rows(batch)
        store = self.store
        jobs = self._jobs_for(mine=mine, evolve=evolve)
        with store._write_lock:
            labels = records.next_labels(store.db, len(batch))
            batch = [_with_label(row, label) for row, label in zip(batch, labels, strict=True)]
            try:
                with store.db.transaction():
                    now = records.insert_memories(store.db, batch, vectors)
                    store.lexical.add(labels, [embedding_text(r.content, r.context) for r in batch])
                    if extra:
                        extra(batch)
                    job_ids = [
                        store.jobs.enqueue(kind, row.id, payload)
                        for row in batch
                        for kind, payload, _ in jobs
                    ]
            except BaseException:
                store.lexical.rollback()
                raise
            store.vectors.add(labels, vectors)
            store.index_changed(len(batch))
        items = [_item_from_new(row, now) for row in batch]
        modes = [mode for _ in batch for _, _, mode in jobs]  # the order jobs were queued in
        inline = [jid for jid, mode in zip(job_ids, modes, strict=True) if mode == "inline"]
        if inline:
            self.run_jobs(job_ids=inline)
        return items

    def _jobs_for(self, *, mine: str | None, evolve: bool | None) -> list[tuple[str, dict, str]]:
        """The background jobs an add asks for: (kind, payload, inline|deferred)."""
        out = []
        mine = mine if mine is not None else self.config.attributes.mine_on_add
        if mine not in ("off", "inline", "deferred"):
            raise InputError(f"mine must be off, inline or deferred, not {mine!r}")
        if mine != "off":
            out.append(("mine", {}, mine))
        if evolve:
            out.append(("evolve", {}, self.config.evolution.mode))
        handlers = job_handlers()
        for kind, _, _ in out:
            if kind not in handlers:
                raise InputError(f"{kind!r} is not available in this version of localmem")
        return out

    def _embed_rows(self, rows: Sequence[NewMemory]) -> np.ndarray:
        """Vectors for new rows; a text embedded before (same model) is not embedded again."""
        hashes = [r.embed_hash for r in rows]
        known = self._cached_vectors(hashes)
        todo: dict[str, int] = {}  # hash -> first row with that text
        for i, h in enumerate(hashes):
            if h not in known:
                todo.setdefault(h, i)
        if todo:
            texts = [embedding_text(rows[i].content, rows[i].context) for i in todo.values()]
            known.update(zip(todo, self.embedder.embed_batch(texts), strict=True))
        return np.stack([known[h] for h in hashes]).astype(np.float32, copy=False)

    def _cached_vectors(self, hashes: list[str]) -> dict[str, np.ndarray]:
        db = self.store.db
        # two steps: matching the hash column alone is cheap, while a filter on the embedding
        # column reads every stored vector (1.5 GB at 1M memories) on each batch
        labels = db.fetchall(
            "SELECT label FROM memories WHERE embed_hash IN (SELECT unnest(?::VARCHAR[]))",
            [list(set(hashes))],
        )
        if not labels:
            return {}
        rows = db.fetchall(
            "SELECT embed_hash, any_value(embedding) FROM memories WHERE label IN "
            "(SELECT unnest(?::BIGINT[])) AND embedding IS NOT NULL GROUP BY 1",
            [[int(r[0]) for r in labels]],
        )
        return {h: np.asarray(v, dtype=np.float32) for h, v in rows}

    # -- reading ---------------------------------------------------------------------------------
    def get(self, memory_id: str, *, include_deleted: bool = False) -> MemoryItem:
        """The memory with this id (or a unique prefix of it).

        Raises:
            NotFoundError: no such memory (or it is deleted and ``include_deleted`` is False).
        """
        item = self._lookup(memory_id)
        if item.deleted and not include_deleted:
            raise NotFoundError(f"memory {item.id} is deleted (restore it or pass include_deleted)")
        return item

    def _lookup(self, memory_id: str) -> MemoryItem:
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InputError("a memory id must be a non-empty string")
        memory_id = memory_id.strip()
        found = records.fetch(self.store.db, "id = ?", [memory_id])
        if not found and len(memory_id) >= 4:
            found = records.fetch(self.store.db, "starts_with(id, ?)", [memory_id], order="LIMIT 2")
            if len(found) > 1:
                raise InputError(f"id prefix {memory_id!r} matches more than one memory")
        if not found:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        return found[0]

    def get_many(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Memories by exact id, in the order asked (unknown ids raise NotFoundError)."""
        found = records.fetch_by_ids(self.store.db, list(ids))
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFoundError(f"no memory with id {missing[0]!r}")
        return [found[i] for i in ids]

    def list(
        self,
        *,
        kind: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
        include_deleted: bool = False,
    ) -> list[MemoryItem]:
        """Memories, newest first, optionally of one kind / session / user."""
        where, params = ["TRUE"], []
        if not include_deleted:
            where.append("NOT deleted")
        for col, val in (("kind", kind), ("session_id", session_id), ("user_id", user_id)):
            if val is not None:
                where.append(f"{col} = ?")
                params.append(val)
        return records.fetch(
            self.store.db,
            " AND ".join(where),
            params,
            order=f"ORDER BY created_at DESC, label DESC LIMIT {int(limit)} OFFSET {int(offset)}",
        )

    def history(self, memory_id: str) -> list[HistoryEvent]:
        """Every change of a memory, oldest first (ADD, UPDATE, EVOLVE, DELETE, ...)."""
        item = self._lookup(memory_id)
        return records.history(self.store.db, item.id)

    def count(self, *, include_deleted: bool = False) -> int:
        """How many memories the store holds."""
        where = "" if include_deleted else " WHERE NOT deleted"
        return int(self.store.db.scalar(f"SELECT count(*) FROM memories{where}"))

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
        item = self.get(memory_id)
        limit = self.config.store.max_content_chars
        changes: dict[str, tuple[Any, Any]] = {}
        if content is not None:
            new = validate.content(content, max_chars=limit)
            if new != item.content:
                changes["content"] = (item.content, new)
        if context is not None:
            new_ctx = validate.optional_text(context, max_chars=limit, what="context")
            if new_ctx != item.context:
                changes["context"] = (item.context, new_ctx)
        if metadata is not None:
            meta = validate.metadata(dict(metadata))
            if meta != item.metadata:
                changes["metadata"] = (item.metadata, meta)
        if event_time is not None:
            when = validate.timestamp(event_time)
            if when != item.event_time:
                changes["event_time"] = (item.event_time, when)
        if not changes:
            if also is not None:
                with self.store.db.transaction():
                    also()
            return item
        new_content = changes.get("content", (None, item.content))[1]
        new_context = changes.get("context", (None, item.context))[1]
        reembed = "content" in changes or "context" in changes
        text = embedding_text(new_content, new_context)
        vector = None
        if reembed:
            known = embedded.get(text) if embedded else None
            vector = known if known is not None else self.embedder.embed_batch([text])[0]
        store = self.store
        with store._write_lock:
            try:
                with store.db.transaction():
                    self._apply_update(item, changes, vector, text, actor, event, info)
                    if also is not None:
                        also()
            except BaseException:
                store.lexical.rollback()
                raise
            if vector is not None:
                store.vectors.add([item.label], vector[None, :])
                store.index_changed(1)
        if "content" in changes:
            self._remine(item.id)
        return self.get(item.id)

    def _remine(self, memory_id: str) -> None:
        """Mine a changed or restored memory again when mining is on (stale rows otherwise)."""
        mode = self.config.attributes.mine_on_add
        if mode != "off":
            job = self.store.jobs.enqueue("mine", memory_id, {})
            if mode == "inline":
                self.run_jobs(job_ids=[job])

    def _apply_update(self, item, changes, vector, text, actor, event, info) -> None:
        db = self.store.db
        sets, params = ["updated_at = ?"], [utcnow()]
        for name, (old, new) in changes.items():
            if name == "metadata":
                sets.append("metadata = ?::JSON")
                params.append(_json(new))
            elif name == "event_time":
                sets.append("event_time = ?")
                params.append(records.to_db_time(new))
            else:
                sets.append(f"{name} = ?")
                params.append(new)
            if name == "content":
                sets.append("content_hash = ?")
                params.append(content_hash(new))
            records.record_history(
                db,
                item.id,
                event,
                field=name,
                old=_as_text(old),
                new=_as_text(new),
                actor=actor,
                info=dict(info) if info else None,
            )
        if vector is not None:
            sets += ["embedding = ?::FLOAT[]", "embed_hash = ?", "vec_seq = nextval('vec_seq')"]
            params += [vector.tolist(), content_hash(text)]
        db.execute(f"UPDATE memories SET {', '.join(sets)} WHERE id = ?", [*params, item.id])
        if vector is not None:
            self.store.lexical.remove([item.label])
            self.store.lexical.add([item.label], [text])

    def delete(self, memory_id: str, *, actor: str = "user") -> MemoryItem:
        """Hide a memory from search (soft delete, recorded; :meth:`restore` undoes it)."""
        item = self.get(memory_id)
        store = self.store
        with store._write_lock:
            try:
                with store.db.transaction():
                    soft_delete_row(store, item.id, item.label, actor=actor)
            except BaseException:
                store.lexical.rollback()
                raise
            store.vectors.mark_deleted([item.label])
            store.index_changed(1)
        return self.get(item.id, include_deleted=True)

    def restore(self, memory_id: str, *, actor: str = "user") -> MemoryItem:
        """Bring a soft-deleted memory back."""
        item = self._lookup(memory_id)
        if not item.deleted:
            return item
        row = self.store.db.fetchone("SELECT embedding FROM memories WHERE id = ?", [item.id])
        if row is None or row[0] is None:
            raise NotFoundError(f"memory {item.id} was purged and cannot be restored")
        store = self.store
        with store._write_lock:
            try:
                with store.db.transaction():
                    store.db.execute(
                        "UPDATE memories SET deleted = false, updated_at = ?, "
                        "vec_seq = nextval('vec_seq') WHERE id = ?",
                        [utcnow(), item.id],
                    )
                    store.lexical.add([item.label], [item.text_for_embedding])
                    records.record_history(store.db, item.id, "RESTORE", actor=actor)
            except BaseException:
                store.lexical.rollback()
                raise
            store.vectors.add([item.label], np.asarray(row[0], dtype=np.float32)[None, :])
            store.index_changed(1)
        self._remine(item.id)  # its attributes went with the delete
        return self.get(item.id)

    def purge(self, memory_id: str, *, actor: str = "user") -> None:
        """Remove a memory's text for real (privacy): content, context, vector, history values.

        A tombstone row and a PURGE history event remain, so links and counts stay explainable;
        the database is checkpointed so the removed text leaves the file.
        """
        item = self._lookup(memory_id)
        from localmem.evolution.undo import forget_source

        for other in forget_source(self, item.id):  # contexts it evolved lose its words
            log.warning("purge: the context of %s changed since %s evolved it", other, item.id)
        store = self.store
        with store._write_lock:
            try:
                with store.db.transaction():
                    db = store.db
                    db.execute(
                        "UPDATE memories SET content = '', context = NULL, metadata = NULL, "
                        "embedding = NULL, embed_hash = NULL, deleted = true, updated_at = ?, "
                        "vec_seq = nextval('vec_seq') WHERE id = ?",
                        [utcnow(), item.id],
                    )
                    db.execute(
                        "UPDATE history SET old_value = NULL, new_value = NULL WHERE memory_id = ?",
                        [item.id],
                    )
                    store.lexical.remove([item.label])
                    _remove_derived(db, item.id)
                    db.execute("DELETE FROM links WHERE src = ? OR dst = ?", [item.id, item.id])
                    db.execute(
                        "DELETE FROM evolution_steps WHERE source = ? OR neighbour = ?",
                        [item.id, item.id],
                    )
                    records.record_history(db, item.id, "PURGE", actor=actor)
            except BaseException:
                store.lexical.rollback()
                raise
            store.vectors.mark_deleted([item.label])
            store.save_index()  # the old vector must not linger in the index file either
            store.db.checkpoint()

    # -- searching -------------------------------------------------------------------------------
    def search(self, query: str, *, k: int = 5, **options: Any) -> SearchResult:
        """Find memories for a query; see :class:`localmem.retrieval.SearchOptions`.

        Args:
            query: what to look for.
            k: how many hits to return.
            **options: ``mode`` (hybrid|dense|lexical), filters (``user_id``, ``agent_id``,
                ``session_id``, ``kinds``, ``levels``, ``since``, ``until``, ``metadata``) and
                the switches of the later stages.

        Returns:
            The hits, best first, each with its score and per-stage evidence, plus a report of
            every stage (candidates in/out, milliseconds, implementation).
        """
        from localmem.retrieval import search as run_search

        return run_search(self, query, k=k, **options)

    def consolidate(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        within: str | None = None,
        window_days: float | None = None,
        threshold: float | None = None,
        implementation: str | None = None,
        meta: bool = True,
        dry_run: bool = False,
    ) -> ConsolidationReport:
        """Consolidate a scope's episodic memories into semantic facts and meta patterns.

        Seed 004's hierarchy; see :func:`localmem.consolidation.consolidate` for the options.
        Running it again only adds what is new (nothing, when nothing changed).
        """
        from localmem.consolidation import consolidate

        return consolidate(
            self,
            user_id=user_id,
            agent_id=agent_id,
            within=within,
            window_days=window_days,
            threshold=threshold,
            implementation=implementation,
            meta=meta,
            dry_run=dry_run,
        )

    # -- sessions of thoughts --------------------------------------------------------------------
    def start_session(self, title: str, **kwargs: Any) -> Session:
        """Open a session of thoughts (a reasoning episode); see :mod:`localmem.sessions`."""
        from localmem import sessions

        return sessions.start_session(self, title, **kwargs)

    def add_thought(self, session_id: str, content: str, **kwargs: Any) -> Thought:
        """Add the next numbered thought to an open session."""
        from localmem import sessions

        return sessions.add_thought(self, session_id, content, **kwargs)

    def complete_session(self, session_id: str, outcome: str = "success", **kwargs: Any) -> Session:
        """Close a session with its outcome (success or failure); ``abstract=True`` (and
        ``level=``) also turns a successful one into a procedure (see :attr:`procedures`)."""
        from localmem import sessions

        return sessions.complete_session(self, session_id, outcome, **kwargs)

    def thoughts(self, session_id: str) -> list[Thought]:
        """The thoughts of a session in order."""
        from localmem import sessions

        return sessions.thoughts(self, session_id)

    def get_session(self, session_id: str) -> Session:
        """One session."""
        from localmem import sessions

        return sessions.get_session(self, session_id)

    def sessions(self, *, status: str | None = None, limit: int = 100) -> list[Session]:
        """Sessions, newest first."""
        from localmem import sessions

        return sessions.list_sessions(self, status=status, limit=limit)

    @property
    def procedures(self) -> ProcedureStore:
        """Procedural memory (Mem^p): find, render, record, retire and restore procedures."""
        if self._procedures is None:
            from localmem.procedures import ProcedureStore

            self._procedures = ProcedureStore(self)
        return self._procedures

    # -- background jobs -------------------------------------------------------------------------
    def run_jobs(
        self,
        *,
        kinds: Sequence[str] | None = None,
        limit: int | None = None,
        job_ids: Sequence[int] | None = None,
    ) -> JobsReport:
        """Run queued background jobs (mining, evolution); a failure leaves its job retryable."""
        handlers = job_handlers()
        queue = self.store.jobs
        done = failed = dropped = 0
        wanted = set(job_ids) if job_ids is not None else None
        kinds = list(kinds) if kinds else None
        while limit is None or done + failed + dropped < limit:
            job = queue.claim(kinds) if wanted is None else queue.claim_ids(sorted(wanted))
            if job is None:
                break
            if wanted is not None:
                wanted.discard(job.id)
            handler = handlers.get(job.kind)
            if handler is None:
                queue.fail(job.id, f"no handler for jobs of kind {job.kind!r}")
                failed += 1
                continue
            try:
                handler(self, job)
            except Exception as exc:  # a job failing must not lose the others; it stays retryable
                log.warning("job %s (%s) failed: %s", job.id, job.kind, exc)
                queue.fail(job.id, f"{type(exc).__name__}: {exc}")
                failed += 1
                continue
            status = self.store.db.scalar("SELECT status FROM jobs WHERE id = ?", [job.id])
            if status == "running":  # the handler forgot to close it: it did its work
                queue.done(job.id)
            if status == "dropped":
                dropped += 1
            else:
                done += 1
        return JobsReport(done, failed, dropped, queue.pending(kinds))

    # -- facts -----------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Counts and sizes for `localmem stats` and the TUI status screen."""
        db = self.store.db
        by_kind = dict(
            db.fetchall(
                "SELECT kind, count(*) FROM memories WHERE NOT deleted GROUP BY 1 ORDER BY 1"
            )
        )
        size = sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())
        return {
            "path": str(self.path),
            "memories": sum(by_kind.values()),
            "deleted": int(db.scalar("SELECT count(*) FROM memories WHERE deleted")),
            "by_kind": by_kind,
            "sessions": int(db.scalar("SELECT count(*) FROM sessions")),
            "links": int(db.scalar("SELECT count(*) FROM links")),
            "jobs_pending": self.store.jobs.pending(),
            "embedder": self.embedder.name,
            "dim": self.store.dim,
            "bytes_on_disk": size,
        }


_ADD_FIELDS = {
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


def new_id() -> str:
    """A fresh memory id: 16 hex characters (64 random bits)."""
    return secrets.token_hex(8)


def _with_label(row: NewMemory, label: int) -> NewMemory:
    from dataclasses import replace

    return replace(row, label=label)


def _item_from_new(row: NewMemory, now: datetime) -> MemoryItem:
    created = records.aware(now)
    return MemoryItem(
        id=row.id,
        label=row.label,
        kind=row.kind,
        content=row.content,
        context=row.context,
        level=row.level,
        user_id=row.user_id,
        agent_id=row.agent_id,
        session_id=row.session_id,
        created_at=created,
        event_time=row.event_time,
        updated_at=created,
        metadata=dict(row.metadata or {}),
        content_hash=row.content_hash,
    )


def soft_delete_row(
    store: Store, memory_id: str, label: int, *, actor: str, info: dict | None = None
) -> None:
    """Mark a memory deleted, with its postings, mined data and a DELETE event (call inside the
    store's transaction; the caller takes the vector out of the index after the commit)."""
    store.db.execute(
        "UPDATE memories SET deleted = true, updated_at = ?, "
        "vec_seq = nextval('vec_seq') WHERE id = ?",
        [utcnow(), memory_id],
    )
    store.lexical.remove([label])
    _remove_derived(store.db, memory_id)
    records.record_history(store.db, memory_id, "DELETE", actor=actor, info=info)


def _remove_derived(db, memory_id: str) -> None:
    """Data mined from a memory goes with it (attributes; pending jobs are dropped)."""
    db.execute("DELETE FROM attributes WHERE memory_id = ?", [memory_id])
    db.execute(
        "UPDATE jobs SET status = 'dropped', error = 'memory deleted' "
        "WHERE memory_id = ? AND status IN ('pending', 'failed')",
        [memory_id],
    )


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return _json(value)
    return str(value)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True)
