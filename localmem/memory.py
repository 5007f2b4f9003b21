"""``Memory``: the Python API of localmem, a facade over a store's kernel and its mechanisms.

It opens a :class:`~localmem.store.kernel.Kernel`, composes the mechanisms of
:mod:`localmem.mechanisms` (their hooks, jobs, search stages and tables) and offers the public
API. The work itself happens below: memory rows in :mod:`localmem.store.memories`, search in
:mod:`localmem.retrieval`, each mechanism in its own package.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem import sessions, validate
from localmem.config import CONFIG_FILE, Config, default_store_path
from localmem.embed import Embedder, embedder_for_store, make_embedder
from localmem.mechanisms import BUILTIN
from localmem.plugin import Plugin, add_jobs, hooks_of, migrations_of, stages_of
from localmem.retrieval.pipeline import CORE_STAGES
from localmem.retrieval.pipeline import search as run_search
from localmem.retrieval.stages import compose
from localmem.store.kernel import JobsReport, Kernel
from localmem.store.links import Link, links_of
from localmem.store.memories import JobRequest
from localmem.store.records import NewMemory
from localmem.store.store import Store
from localmem.types import HistoryEvent, MemoryItem, SearchResult, Session, Thought

if TYPE_CHECKING:
    from localmem.consolidation import ConsolidationReport
    from localmem.procedures import ProcedureStore

__all__ = ["JobsReport", "Memory"]


class Memory:
    """A local memory store for agents.

    Build one with :meth:`open`; or pass the collaborators in (tests, custom embedders)::

        with Memory.open("~/notes") as mem:
            mem.add("The rate limiter should use a sliding window", kind="thought")
            for hit in mem.search("rate limiting"):
                print(hit.score, hit.memory.content)

    ``plugins`` chooses the mechanisms (default: :data:`localmem.mechanisms.BUILTIN`).
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        config: Config | None = None,
        engine: Any = None,
        plugins: Sequence[Plugin] | None = None,
    ) -> None:
        self.config = config or Config()
        self.plugins = tuple(BUILTIN if plugins is None else plugins)
        self.kernel = Kernel(
            store,
            embedder,
            self.config,
            engine=engine,
            make_engine=self._make_engine,
            hooks=hooks_of(self.plugins),
        )
        self.stages = compose(CORE_STAGES, stages_of(self.plugins))
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
        plugins: Sequence[Plugin] | None = None,
    ) -> Memory:
        """Open the store at ``path`` (default: ``$LOCALMEM_HOME/default``), creating it if new.

        Args:
            path: the store folder.
            config: overrides the store's own ``config.json`` for this session; a new store
                saves it.
            embedder: an embedder to use instead of the configured one (same model name).
            engine: a model engine for the model tasks (default: from the config, lazily).
            create: create the store if the folder holds none.
            plugins: the mechanisms to compose (default: every built-in one).

        Raises:
            StoreError: not a store, corrupt, or made with another embedding model.
            StoreLockedError: another process has the store open.
        """
        folder = Path(path).expanduser() if path is not None else default_store_path()
        file_config = Config.load(folder / CONFIG_FILE)
        config = config or file_config
        plugins = tuple(BUILTIN if plugins is None else plugins)
        given = embedder is not None
        embedder = embedder or make_embedder(config.embedder)
        store = Store.open(
            folder,
            config=config.store,
            model=embedder.name,  # what a new store records
            dim=embedder.dim,
            create=create,
            check_model=False,  # checked below, once the embedder is settled
            migrations=migrations_of(plugins),
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
        return cls(store, embedder, config=config, engine=engine, plugins=plugins)

    def close(self) -> None:
        """Save the index and release the store."""
        self.kernel.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _make_engine(self) -> Any:
        from localmem.llm import make_engine  # imported late: llama.cpp is heavy

        return make_engine(self.config.engine)

    @property
    def store(self) -> Store:
        """The open store (its files, DuckDB, indexes)."""
        return self.kernel.store

    @property
    def embedder(self) -> Embedder:
        """The embedder of this store's model."""
        return self.kernel.embedder

    @property
    def path(self) -> Path:
        """The store folder."""
        return self.kernel.folder

    @property
    def engine(self) -> Any:
        """The model engine for model tasks, or None when only model-free ones are available."""
        return self.kernel.engine

    @property
    def add_options(self) -> tuple[str, ...]:
        """The options of :meth:`add` the composed mechanisms offer (``mine``, ``evolve``)."""
        return tuple(name for plugin in self.plugins for name in plugin.add_options)

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The search stages of this composition, in the order they run."""
        return tuple(stage.name for stage in self.stages)

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
        jobs = self.jobs_for_add(mine=mine, evolve=evolve)
        memories = self.kernel.memories
        stored: list[MemoryItem] = []
        batch: list[NewMemory] = []
        for raw in items:
            batch.append(memories.prepare(raw, defaults))
            if len(batch) >= batch_size:
                stored += memories.add(batch, jobs=jobs)
                batch = []
                if progress:
                    progress(len(stored))
        if batch:
            stored += memories.add(batch, jobs=jobs)
            if progress:
                progress(len(stored))
        return stored

    def jobs_for_add(
        self, *, mine: str | None = None, evolve: bool | None = None
    ) -> list[JobRequest]:
        """The background jobs an add with these options asks for (the mechanisms decide)."""
        return add_jobs(self.plugins, self.kernel, {"mine": mine, "evolve": evolve})

    # -- reading ---------------------------------------------------------------------------------
    def get(self, memory_id: str, *, include_deleted: bool = False) -> MemoryItem:
        """The memory with this id (or a unique prefix of it).

        Raises:
            NotFoundError: no such memory (or it is deleted and ``include_deleted`` is False).
        """
        return self.kernel.memories.get(memory_id, include_deleted=include_deleted)

    def get_many(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Memories by exact id, in the order asked (unknown ids raise NotFoundError)."""
        return self.kernel.memories.get_many(ids)

    def list(
        self,
        *,
        kind: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
        include_deleted: bool = False,
        in_session: bool | None = None,
        oldest_first: bool = False,
    ) -> list[MemoryItem]:
        """Memories, newest first (``oldest_first``: in event-time order), optionally of one
        kind / session / user; ``in_session=False`` keeps memories outside any session."""
        return self.kernel.memories.list(
            kind=kind,
            session_id=session_id,
            user_id=user_id,
            limit=limit,
            offset=offset,
            include_deleted=include_deleted,
            in_session=in_session,
            oldest_first=oldest_first,
        )

    def users(self, *, limit: int = 200) -> list[tuple[str, int]]:
        """(user id, how many memories outside sessions) for every user scope, by id."""
        return self.kernel.memories.users(limit=limit)

    def links(self, memory_id: str) -> list[Link]:
        """Every link touching a memory (evolution, consolidation...), newest first."""
        item = self.get(memory_id, include_deleted=True)
        return links_of(self.kernel.db, item.id)

    def history(self, memory_id: str) -> list[HistoryEvent]:
        """Every change of a memory, oldest first (ADD, UPDATE, EVOLVE, DELETE, ...)."""
        return self.kernel.memories.history(memory_id)

    def count(self, *, include_deleted: bool = False, user_id: str | None = None) -> int:
        """How many memories the store holds (of one user)."""
        return self.kernel.memories.count(include_deleted=include_deleted, user_id=user_id)

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
        return self.kernel.memories.update(
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
        return self.kernel.memories.delete(memory_id, actor=actor)

    def restore(self, memory_id: str, *, actor: str = "user") -> MemoryItem:
        """Bring a soft-deleted memory back."""
        return self.kernel.memories.restore(memory_id, actor=actor)

    def purge(self, memory_id: str, *, actor: str = "user") -> None:
        """Remove a memory's text for real (privacy): content, context, vector, history values.

        A tombstone row and a PURGE history event remain, so links and counts stay explainable;
        the database is checkpointed so the removed text leaves the file.
        """
        self.kernel.memories.purge(memory_id, actor=actor)

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
        return run_search(self.kernel, query, stages=self.stages, k=k, **options)

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
            self.kernel,
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
        return sessions.start_session(self.kernel, title, **kwargs)

    def add_thought(
        self,
        session_id: str,
        content: str,
        *,
        mine: str | None = None,
        evolve: bool | None = None,
        **kwargs: Any,
    ) -> Thought:
        """Add the next numbered thought to an open session (``evolve``: A-Mem evolution)."""
        jobs = self.jobs_for_add(mine=mine, evolve=evolve)
        return sessions.add_thought(self.kernel, session_id, content, jobs=jobs, **kwargs)

    def complete_session(
        self,
        session_id: str,
        outcome: str = "success",
        *,
        notes: str | None = None,
        abstract: bool = False,
        level: str | None = None,
    ) -> Session:
        """Close a session with its outcome (success or failure).

        ``abstract=True`` (and ``level=``) also turns a successful session into a procedure
        (see :attr:`procedures`): the session is closed and the procedure stored in one
        transaction, so when abstraction fails the session stays open. The procedure's id is in
        the returned session's ``metadata["procedure_id"]``.
        """
        session, meta = sessions.closing(self.kernel, session_id, outcome, notes=notes)
        if abstract:
            self.procedures.from_session(
                session,
                outcome=outcome,
                level=level,
                on_write=lambda pid: sessions.close(
                    self.kernel, session.id, outcome, {**meta, "procedure_id": pid}
                ),
            )
        else:
            with self.kernel.writing():
                sessions.close(self.kernel, session.id, outcome, meta)
        return sessions.get_session(self.kernel, session.id)

    def thoughts(self, session_id: str) -> list[Thought]:
        """The thoughts of a session in order."""
        return sessions.thoughts(self.kernel, session_id)

    def get_session(self, session_id: str) -> Session:
        """One session."""
        return sessions.get_session(self.kernel, session_id)

    def sessions(self, *, status: str | None = None, limit: int = 100) -> list[Session]:
        """Sessions, newest first."""
        return sessions.list_sessions(self.kernel, status=status, limit=limit)

    @property
    def procedures(self) -> ProcedureStore:
        """Procedural memory (Mem^p): find, render, record, retire and restore procedures."""
        if self._procedures is None:
            from localmem.procedures import ProcedureStore

            self._procedures = ProcedureStore(self.kernel)
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
        return self.kernel.run_jobs(kinds=kinds, limit=limit, job_ids=job_ids)

    # -- facts -----------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Counts and sizes for `localmem stats` and the TUI status screen."""
        facts = self.store.stats()
        return {
            "path": str(self.path),
            "memories": facts["memories"],
            "deleted": facts["deleted"],
            "by_kind": facts["by_kind"],
            "sessions": sessions.count(self.kernel),
            "links": facts["links"],
            "jobs_pending": facts["jobs_pending"],
            "embedder": self.embedder.name,
            "dim": self.store.dim,
            "bytes_on_disk": facts["bytes_on_disk"],
        }
