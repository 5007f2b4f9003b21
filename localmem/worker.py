"""A background thread that runs queued jobs (attribute mining, evolution) while a program goes on.

Deferred jobs (``add(..., mine="deferred")``) wait in the store's ``jobs`` table until something
runs them. Three ways, from least to most automatic:

- ``localmem jobs run`` (or ``Memory.run_jobs()``) runs every pending job now and returns;
- ``localmem mine`` queues mining for memories that lack it and runs those jobs;
- :class:`JobWorker` runs them in a thread of the same process, in small batches, until stopped
  (on a PostgreSQL store it also puts pending vectors in the HNSW index between batches,
  ``Store.drain_vectors``: `localmem serve` runs one)::

      with Memory.open(path) as mem, JobWorker(mem, kinds=["mine"]):
          mem.add_many(texts, mine="deferred")   # returns as soon as the texts are stored
          ...                                    # the worker mines in the background

The worker shares the Memory (its DuckDB connection is serialised by a lock, and each job
commits its results with its completion), so a crash or a stop at any point loses at most the
job in progress, which runs again next time (``running`` jobs return to ``pending`` on open).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from localmem.memory import Memory

log = logging.getLogger("localmem")


class JobWorker:
    """Runs a Memory's queued jobs in a daemon thread.

    Args:
        memory: the store whose jobs to run.
        kinds: only jobs of these kinds (default: all).
        batch: jobs per call of :meth:`Memory.run_jobs` (the stop flag is checked in between).
        idle_s: seconds to sleep when the queue is empty (:meth:`wake` cuts it short).
        vectors: also index a PostgreSQL store's pending vectors (``batch * 8`` a round).
    """

    def __init__(
        self,
        memory: Memory,
        *,
        kinds: Sequence[str] | None = None,
        batch: int = 16,
        idle_s: float = 0.5,
        vectors: bool = True,
    ) -> None:
        self.memory = memory
        self.kinds = list(kinds) if kinds else None
        self.batch = batch
        self.idle_s = idle_s
        self.vectors = vectors
        self.done = self.failed = self.dropped = self.indexed = 0
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> JobWorker:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="localmem-jobs", daemon=True)
            self._thread.start()
        return self

    def wake(self) -> None:
        """Look at the queue now instead of after the idle pause."""
        self._idle.clear()
        self._wake.set()

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until the queue (of this worker's kinds) is empty; False on timeout."""
        self.wake()
        return self._idle.wait(timeout)

    def stop(self, *, timeout: float | None = 30.0) -> None:
        """Stop after the batch in progress and wait for the thread."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> JobWorker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                report = self.memory.run_jobs(kinds=self.kinds, limit=self.batch)
            except Exception as exc:  # the store went away (closed): stop, keep the reason
                log.warning("job worker stopped: %s", exc)
                self.error = exc
                self._idle.set()
                return
            self.done += report.done
            self.failed += report.failed
            self.dropped += report.dropped
            try:
                indexed = self.memory.store.drain_vectors(self.batch * 8) if self.vectors else 0
            except Exception as exc:  # the rows stay pending and found; try again next round
                log.warning("indexing pending vectors failed: %s", exc)
                indexed = 0
            self.indexed += indexed
            if report.done + report.failed + report.dropped + indexed == 0:
                self._idle.set()
                self._wake.wait(self.idle_s)
                self._wake.clear()
