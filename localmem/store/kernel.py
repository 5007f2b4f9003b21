"""The kernel of a store: the one place that writes, and what every mechanism works through.

A :class:`Kernel` owns an open :class:`~localmem.store.store.Store`, its embedder and its config.
It gives the layers above it:

- :meth:`Kernel.writing`: the write rule, written once. Inside it, one lock and one DuckDB
  transaction; BM25 postings in the same transaction; vectors into hnswlib after the commit;
  on failure the in-memory postings reload. Units nest: an inner ``writing()`` joins the outer
  one, so a mechanism's rows and the memories they touch commit together.
- :mod:`localmem.store.memories`: memory rows through a kernel (add, update, delete, restore,
  purge, reads), embedding through the cache of stored vectors.
- :meth:`Kernel.run_jobs`: the durable job queue, run by the handlers the mechanisms register.
- :class:`Hooks`: what mechanisms register to keep their own tables in step (a deleted
  memory's mined data goes, a purge also clears what it evolved, a changed text is mined again).

The facade (:class:`localmem.Memory`) builds a kernel and fills its hooks from the plugins it
composes; the kernel itself knows no mechanism.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from localmem.config import Config
from localmem.errors import StoreReadOnlyError
from localmem.store import mirror
from localmem.store.backend import StoreDatabase
from localmem.store.jobs import Job
from localmem.store.mirror import RowMirror
from localmem.store.unit import Write

if TYPE_CHECKING:
    from localmem.embed.base import Embedder
    from localmem.llm.base import Engine
    from localmem.store.store import Store

log = logging.getLogger("localmem")

#: what a background job of some kind runs: ``handler(kernel, job)``; it writes its results and
#: marks the job done (``kernel.store.jobs.done``) inside one ``kernel.writing()`` unit
JobHandler = Callable[["Kernel", Job], None]


@dataclass
class Hooks:
    """What the mechanisms of a store ask the kernel to call.

    Attributes:
        on_delete: ``(write, memory_id)`` inside the unit that deletes or purges a memory: drop
            the data derived from it.
        before_purge: ``(kernel, memory_id)`` before a purge's unit: undo what the memory
            changed elsewhere (in units of its own).
        on_purge: ``(write, memory_id)`` inside a purge's unit, after ``on_delete``.
        on_change: ``(kernel, memory_id, what)`` after a committed change a mechanism may want
            to redo work for: ``what`` is ``"content"`` (its text changed) or ``"restore"``.
        jobs: job kind -> handler.
    """

    on_delete: list[Callable[[Write, str], None]] = field(default_factory=list)
    before_purge: list[Callable[[Kernel, str], None]] = field(default_factory=list)
    on_purge: list[Callable[[Write, str], None]] = field(default_factory=list)
    on_change: list[Callable[[Kernel, str, str], None]] = field(default_factory=list)
    jobs: dict[str, JobHandler] = field(default_factory=dict)


class HasKernel(Protocol):
    """Anything that carries an open store's kernel (the facade :class:`localmem.Memory`)."""

    kernel: Kernel


def kernel_of(store: Kernel | HasKernel) -> Kernel:
    """The kernel itself, or the kernel a facade carries (so a mechanism's public functions
    take either ``memory`` or ``memory.kernel``)."""
    return store if isinstance(store, Kernel) else store.kernel


@dataclass(frozen=True)
class JobsReport:
    """What a run of background jobs did."""

    done: int
    failed: int
    dropped: int
    remaining: int


class Kernel:
    """An open store with its embedder, config, model engine and mechanism hooks.

    Args:
        store: the open store.
        embedder: embeds memories and queries (the store's model).
        config: the store's configuration.
        engine: a model engine; None to make one on first use with ``make_engine``; False for
            none at all (model-free only, nothing made later).
        make_engine: ``() -> engine or None``, called once when the engine is first needed.
        hooks: the mechanisms' hooks and job handlers.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: Config,
        *,
        engine: Engine | Literal[False] | None = None,
        make_engine: Callable[[], Engine | None] | None = None,
        hooks: Hooks | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.hooks = hooks or Hooks()
        self._engine = engine or None
        self._engine_asked = engine is False  # make_engine is called once at most
        self._make_engine = make_engine
        self._unit: Write | None = None
        self._unit_owner: int | None = None
        self._state: dict[str, Any] = {}
        #: units of writing committed by this kernel: a value read at one generation stays true
        #: until the next, where this process is the store's only writer (``db.one_writer``)
        self.generation = 0
        self._kept: dict[str, tuple[int, Any]] = {}  # see kept()
        self._mirror: RowMirror | None = None  # see rows()
        #: searches started on this kernel (the read pipeline counts them; see rows())
        self.searches = 0
        self._turns = [threading.Lock() for _ in range(64)]  # see serialised()

    def kept(self, name: str, read: Callable[[], Any]) -> Any:
        """A value ``read`` from the store, kept until this kernel's next committed unit of
        writing (:attr:`generation`). Kept only where this process alone writes the store
        (``db.one_writer``): elsewhere another writer's change would go unseen, so ``read``
        runs every time. Two threads may both read it once; either answer is current."""
        if not self.db.one_writer:
            return read()
        known = self._kept.get(name)
        if known is None or known[0] != self.generation:
            known = self._kept[name] = (self.generation, read())
        return known[1]

    def rows(self) -> RowMirror | None:
        """The memory rows held in memory (:mod:`localmem.store.mirror`), brought up to this
        kernel's last committed unit of writing; None where searches must ask the database:
        another process may write (``db.one_writer`` false), the calling thread is inside its
        own unit (the mirror would hold rows that may roll back), ``search.rows_in_memory``
        is off, or this kernel has served fewer than ``mirror.WARM_AFTER`` searches (a process
        that searches once, as ``localmem search`` does, never pays the whole read)."""
        if not (self.db.one_writer and self.config.search.rows_in_memory):
            return None
        if self._mirror is None and self.searches <= mirror.WARM_AFTER:
            return None
        if self._unit is not None and self._unit_owner == threading.get_ident():
            return None
        if self._mirror is None:
            self._mirror = RowMirror(self.db)
        return self._mirror.follow(self.generation)

    @property
    def db(self) -> StoreDatabase:
        """The store's database, either backend (for the mechanisms' own data modules)."""
        return self.store.db

    @property
    def folder(self) -> Path:
        """The store folder."""
        return self.store.folder

    @property
    def engine(self) -> Engine | None:
        """The model engine for model tasks, or None when only model-free ones are available."""
        if self._engine is None and not self._engine_asked:
            self._engine = self._make_engine() if self._make_engine else None
            self._engine_asked = True
        return self._engine

    def state(self, key: str, make: Callable[[], Any]) -> Any:
        """A value a mechanism keeps for this open store (a miner with its caches), made once."""
        with self.store.write_lock:
            if key not in self._state:
                self._state[key] = make()
            return self._state[key]

    @contextmanager
    def serialised(self, name: str) -> Iterator[None]:
        """Take turns with every caller of the same ``name``, in this process and, where other
        processes write the store (PostgreSQL), in those too (an advisory lock).

        For work that reads the store, decides, then writes (inference reconciling one
        scope's facts): two such callers at once both decided from a store without the
        other's write (racing ``infer`` left several current homes). Names share 64
        locks by hash, so unrelated names may wait for each other, never deadlock (a caller
        holds one at a time)."""
        digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
        with self._turns[digest[0] % len(self._turns)]:
            if self.db.one_writer:
                yield
                return
            with self.db.advisory_lock(int.from_bytes(digest, "big", signed=True)):
                yield

    # -- the write rule ---------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[Write]:
        """One unit of writing: lock, transaction, postings, then vectors after the commit.

        Everything written inside commits together or not at all. A ``writing()`` inside
        another (same thread) joins it: its vectors wait for the outer commit.
        """
        if self._unit is not None and self._unit_owner == threading.get_ident():
            yield self._unit
            return
        if self.store.read_only:
            raise StoreReadOnlyError(
                f"store {self.folder} is open read-only (its folder or filesystem is not "
                "writable): it cannot be changed"
            )
        with self.store.write_lock:
            if self.store.suspects:
                self._repair_suspects()
            unit = Write(self.store, on_delete=self.hooks.on_delete)
            self._unit, self._unit_owner = unit, threading.get_ident()
            try:
                try:
                    with self.db.transaction():
                        yield unit
                except BaseException:
                    if unit.indexed:  # its in-memory rows saw uncommitted postings
                        self.store.lexical.rollback()
                    raise
                self._unit = self._unit_owner = None
                self.generation += 1  # after the commit: a read from before it is stale now
                unit.finish()
            finally:
                self._unit = self._unit_owner = None

    def _repair_suspects(self) -> None:
        """The labels a search found out of step with the table, mended in a unit of their
        own before the next one (:meth:`Write.mend`)."""
        labels = sorted(self.store.suspects)
        self.store.suspects.clear()
        with self.writing() as write:
            fixed = write.mend(labels)
        if fixed:
            log.warning("repaired %d index entries a search found out of step", fixed)

    # -- background jobs --------------------------------------------------------------------
    def run_jobs(
        self,
        *,
        kinds: Sequence[str] | None = None,
        limit: int | None = None,
        job_ids: Sequence[int] | None = None,
    ) -> JobsReport:
        """Run queued background jobs; a failure leaves its job retryable."""
        handlers = self.hooks.jobs
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
            status = queue.status(job.id)
            if status == "running":  # the handler forgot to close it: it did its work
                queue.done(job.id)
            if status == "dropped":
                dropped += 1
            else:
                done += 1
        return JobsReport(done, failed, dropped, queue.pending(kinds))

    def changed(self, memory_id: str, what: str) -> None:
        """Tell the mechanisms a committed change happened (``content`` or ``restore``)."""
        for hook in self.hooks.on_change:
            hook(self, memory_id, what)

    # -- closing ----------------------------------------------------------------------------
    def close(self) -> None:
        """Save the index and release the store."""
        self.store.close()
