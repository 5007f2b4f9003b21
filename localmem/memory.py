"""``Memory``: the Python API of localmem, a facade over a store's kernel and its mechanisms.

It opens a :class:`~localmem.store.kernel.Kernel`, composes the mechanisms of
:mod:`localmem.mechanisms` (their hooks, jobs, search stages and tables) and offers the public
API. The work itself happens below: memory rows in :mod:`localmem.store.memories`, search in
:mod:`localmem.retrieval`, each mechanism in its own package.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from localmem import sessions, validate
from localmem.api import MemoryAPI
from localmem.config import CONFIG_FILE, Config, default_store_path
from localmem.embed import Embedder, embedder_for_store, make_embedder
from localmem.errors import InputError
from localmem.facade.reading import Reading
from localmem.facade.sessions import Sessions
from localmem.facade.writing import Writing
from localmem.mechanisms import BUILTIN
from localmem.plugin import Plugin, hooks_of, migrations_of, stages_of
from localmem.retrieval.pipeline import CORE_STAGES
from localmem.retrieval.stages import compose
from localmem.store.address import StoreAddress
from localmem.store.files import peek_count
from localmem.store.kernel import JobsReport, Kernel
from localmem.store.opening import open_store
from localmem.store.store import Store

if TYPE_CHECKING:
    from localmem.llm.base import Engine
    from localmem.procedures import ProcedureStore
    from localmem.remote import RemoteMemory

__all__ = ["JobsReport", "Memory"]


class Memory(Writing, Reading, Sessions, MemoryAPI):
    """A local memory store for agents.

    Build one with :meth:`open`; or pass the collaborators in (tests, custom embedders)::

        with Memory.open("~/notes") as mem:
            mem.add("The rate limiter should use a sliding window", kind="thought")
            for hit in mem.search("rate limiting"):
                print(hit.score, hit.memory.content)

    ``plugins`` chooses the mechanisms (default: :data:`localmem.mechanisms.BUILTIN`). Its public
    API is declared in :class:`localmem.api.MemoryAPI` (which ``Memory.connect`` clients share);
    what only a store open in this process has (``kernel``, ``store``, ``config``...) is outside.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        config: Config | None = None,
        engine: Engine | Literal[False] | None = None,
        plugins: Sequence[Plugin] | None = None,
        actor: str = "user",
    ) -> None:
        self.plugins = tuple(BUILTIN if plugins is None else plugins)
        self.actor = validate.identifier(actor, "actor")
        self.kernel = Kernel(
            store,
            embedder,
            config or Config(),
            engine=engine,
            make_engine=self._make_engine,
            hooks=hooks_of(self.plugins),
        )
        self.stages = compose(CORE_STAGES, stages_of(self.plugins))
        self._procedures: ProcedureStore | None = None

    @property
    def config(self) -> Config:
        """The store's configuration: the kernel's, which every stage and mechanism reads."""
        return self.kernel.config

    @config.setter
    def config(self, value: Config) -> None:
        # one configuration, not two copies: a change here (the LoCoMo bench swapping reranker
        # weights) must reach the search, which reads the kernel's
        self.kernel.config = value

    # -- lifecycle -------------------------------------------------------------------------------
    @staticmethod
    def connect(
        target: str | Path | None = None, *, token: str | None = None, timeout: float = 120.0
    ) -> RemoteMemory:
        """A client of the ``localmem serve`` that holds a store (or of a server's URL), with
        this class's methods, return types and errors; see :func:`localmem.remote.connect`."""
        from localmem.remote import connect  # http.client and ssl: only for a client

        return connect(target, token=token, timeout=timeout)

    @classmethod
    def open(
        cls,
        path: str | Path | StoreAddress | None = None,
        *,
        config: Config | None = None,
        embedder: Embedder | None = None,
        engine: Engine | Literal[False] | None = None,
        create: bool = True,
        plugins: Sequence[Plugin] | None = None,
        read_only: bool | None = None,
        actor: str = "user",
    ) -> Memory:
        """Open the store at ``path`` (default: ``$LOCALMEM_HOME/default``), creating it if new.

        Args:
            path: the store folder, or the address of a PostgreSQL database
                (``postgresql://user@host/db``: the same store on PostgreSQL with pgvector).
            config: overrides the store's own ``config.json`` for this session; a new store
                saves it.
            embedder: an embedder to use instead of the configured one (same model name).
            engine: a model engine for the model tasks (default: from the config, lazily).
            create: create the store if the folder holds none.
            plugins: the mechanisms to compose (default: every built-in one).
            read_only: open without writing anything (search, show, stats work; a change
                raises :class:`StoreReadOnlyError`). Default: when the folder is not writable.
            actor: who the history names for this process's changes (a server says
                "server": its clients cannot choose).

        Raises:
            StoreError: not a store, corrupt, or made with another embedding model.
            StoreLockedError: another process has the store open.
            InputError: the path is empty, not a path, or not valid Unicode.
        """
        address = StoreAddress.parse(default_store_path() if path is None else path)
        folder = address.folder
        # DuckDB opens paths as UTF-8: a name with undecodable bytes fails deep inside it
        validate.no_surrogates(str(path if folder is None else folder), "the store path")
        # a PostgreSQL store's settings on this machine live in its local folder
        # ($LOCALMEM_HOME/postgres/<hash>/config.json, beside serve's discovery file)
        if folder is None:
            from localmem.store.postgres.store import local_folder

            settings = local_folder(address)
        else:
            settings = folder
        file_config = Config.load(settings / CONFIG_FILE)
        config = config or file_config
        plugins = tuple(BUILTIN if plugins is None else plugins)
        given = embedder is not None
        embedder = embedder or make_embedder(config.embedder)
        store = open_store(
            address,
            config=config.store,
            model=embedder.name,  # what a new store records
            dim=embedder.dim,
            create=create,
            check_model=False,  # checked below, once the embedder is settled
            migrations=migrations_of(plugins),
            read_only=read_only,
        )
        try:
            if not given and store.model != embedder.name:  # built with another variant
                embedder = embedder_for_store(config.embedder, store.model)
            store.check_model(embedder.name, embedder.dim)
        except BaseException:
            store.close(save=False)
            raise
        if (
            folder is not None
            and not store.read_only
            and not (folder / CONFIG_FILE).exists()
            and config != Config()
        ):
            config.save(folder / CONFIG_FILE)
        return cls(store, embedder, config=config, engine=engine, plugins=plugins, actor=actor)

    @staticmethod
    def peek_count(path: str | Path) -> int | None:
        """How many memories the store at ``path`` holds, read without opening it (no lock):
        0 when there is no store, None when it cannot be read now (another process holds it)."""
        return peek_count(path)

    def close(self) -> None:
        """Save the index and release the store."""
        self.kernel.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _make_engine(self) -> Engine | None:
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
    def engine(self) -> Engine | None:
        """The model engine for model tasks, or None when only model-free ones are available."""
        return self.kernel.engine

    # -- background jobs -------------------------------------------------------------------------
    @validate.arguments_checked
    def run_jobs(
        self,
        *,
        kinds: Sequence[str] | None = None,
        limit: int | None = None,
        job_ids: Sequence[int] | None = None,
    ) -> JobsReport:
        """Run queued background jobs (mining, evolution); a failure leaves its job retryable.

        Raises:
            InputError: kinds that are not names, a limit that is not a positive integer, job
                ids that are not integers.
        """
        if kinds is not None:
            if isinstance(kinds, str) or not isinstance(kinds, Sequence):
                raise InputError("kinds must be a list of job kinds")
            kinds = [validate.identifier(kind, "a job kind") for kind in kinds]
        if limit is not None:
            validate.positive_int(limit, "limit", maximum=validate.MAX_LIMIT)
        if job_ids is not None:
            if isinstance(job_ids, str) or not isinstance(job_ids, Sequence):
                raise InputError("job_ids must be a list of job ids")
            for job_id in job_ids:
                validate.non_negative_int(job_id, "a job id", maximum=2**63 - 1)
        return self.kernel.run_jobs(kinds=kinds, limit=limit, job_ids=job_ids)

    # -- facts -----------------------------------------------------------------------------------
    @validate.arguments_checked
    def stats(self) -> dict[str, Any]:
        """Counts and sizes for `localmem stats` and the TUI status screen."""
        facts = self.store.stats()
        return {
            "path": self.store.location,
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

    @validate.arguments_checked
    def describe(self) -> dict[str, Any]:
        """What the store is, for a client of a server: its path, configuration, add options
        and search stages."""
        return {
            "path": str(self.path),
            "add_options": list(self.add_options),
            "stage_names": list(self.stage_names),
            "config": self.config.model_dump(mode="json"),
        }

    @validate.arguments_checked
    def status(self) -> dict[str, Any]:
        """Everything the TUI's status screen shows: counts, index health, the embedder, the
        search stages, which engine serves each model task, and the store's notices."""
        from localmem.llm import describe_engines

        embedder = dict(self.embedder.describe())
        embedder["loaded"] = getattr(self.embedder, "loaded", None)
        embedder["path"] = str(getattr(self.embedder, "path", "") or "")
        return {
            "stats": self.stats(),
            "check": self.store.check(),
            "embedder": embedder,
            "stages": [(stage.name, stage.implementation) for stage in self.stages],
            "engines": list(describe_engines(self.config)),
            "notices": list(self.store.notices),
        }
