"""Mining as background work: the ``mine`` job handler and mining many memories at once.

``add(..., mine="inline")`` queues a ``mine`` job and runs it before ``add`` returns;
``mine="deferred"`` leaves it queued for ``localmem jobs run`` (or :class:`localmem.worker.
JobWorker`, a thread that runs queued jobs while the program goes on). A job that fails (the
model broke its schema twice, no engine) is marked ``failed`` and keeps its memory stored;
``localmem jobs retry`` runs it again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem.attributes import rows
from localmem.attributes.mined import Mined
from localmem.attributes.mining import miner_for
from localmem.errors import InputError
from localmem.store import memories
from localmem.store.kernel import HasKernel, Kernel, kernel_of

if TYPE_CHECKING:
    from localmem.store.jobs import Job
    from localmem.store.memories import JobRequest

KIND = "mine"
MODES = ("off", "inline", "deferred")
#: mine jobs looked ahead at, so a model-free miner embeds their phrases in one batch
PREFETCH = 64


def jobs_for_add(kernel: Kernel, options: Mapping[str, Any]) -> list[JobRequest]:
    """The ``mine`` job an add asks for (``mine=`` or else ``attributes.mine_on_add``)."""
    mine = options.get("mine")
    mine = mine if mine is not None else kernel.config.attributes.mine_on_add
    if mine not in MODES:
        raise InputError(f"mine must be off, inline or deferred, not {mine!r}")
    return [] if mine == "off" else [(KIND, {}, mine)]


def remine(kernel: Kernel, memory_id: str, what: str) -> None:
    """Mine a changed or restored memory again when mining is on (stale rows otherwise)."""
    mode = kernel.config.attributes.mine_on_add
    if mode == "off":
        return
    with kernel.writing() as write:
        job = write.enqueue(KIND, memory_id, {})
    if mode == "inline":
        kernel.run_jobs(job_ids=[job])


def forget(write, memory_id: str) -> None:
    """A deleted or purged memory's attributes go with it."""
    rows.delete(write.db, memory_id)


def mine_job(kernel: Kernel, job: Job) -> None:
    """The ``mine`` job: mine one memory's attributes and store them with the job's completion.

    The payload may name a miner (``{"miner": "model-free"}``); otherwise the config decides.
    A memory deleted in the meantime drops the job.
    """
    db = kernel.db
    memory_id = job.memory_id
    source = None if memory_id is None else rows.source_of(db, memory_id)
    if memory_id is None or source is None or source[4]:  # a job naming no memory: as deleted
        with kernel.writing():
            kernel.store.jobs.drop(job.id, "memory deleted")
        return
    content, context, chash, embedding, _ = source
    miner = miner_for(kernel, job.payload.get("miner"))
    if not miner.prepared(content):  # let the miner batch the texts of the next queued jobs
        miner.prepare(rows.queued_texts(db, PREFETCH))
    # the stored vector is the content's own when there is no evolved context
    vector = np.asarray(embedding, np.float32) if embedding is not None and not context else None
    mined = miner.mine(content, vector=vector)
    with kernel.writing() as write:
        if not rows.is_live(write.db, memory_id):
            kernel.store.jobs.drop(job.id, "memory deleted")
            return
        rows.write(write.db, memory_id, mined, chash)
        kernel.store.jobs.done(job.id)


def mine_now(memory: Kernel | HasKernel, memory_id: str, *, miner: str | None = None) -> Mined:
    """Mine one memory right away (no job) and store the result; returns it."""
    kernel = kernel_of(memory)
    item = memories.get(kernel, memory_id)
    stored = memories.stored_vector(kernel, item.id)
    vector = stored if stored is not None and not item.context else None
    mined = miner_for(kernel, miner).mine(item.content, vector=vector)
    with kernel.writing() as write:
        rows.write(write.db, item.id, mined, item.content_hash)
    return mined


def queue_mining(
    memory: Kernel | HasKernel,
    *,
    which: str = "missing",
    miner: str | None = None,
    limit: int | None = None,
) -> list[int]:
    """Queue a ``mine`` job for memories that need one; returns the ids of every job that
    will mine them: the new ones, and those already waiting (queued when the memory was added,
    or left pending by a crash), so running the ids mines every memory asked for.

    Args:
        which: ``missing`` (never mined), ``stale`` (text changed since), ``outdated`` (both)
            or ``all``.
        miner: force a miner for these jobs (default: the config's).
        limit: at most this many memories.
    """
    kernel = kernel_of(memory)
    if which not in ("missing", "stale", "outdated", "all"):
        raise InputError(f"which must be missing, stale, outdated or all, not {which!r}")
    if miner is not None:
        miner_for(kernel, miner)  # fail now on an unknown or unavailable miner
    ids = rows.to_mine(kernel.db, which=which, limit=limit)
    waiting = rows.pending_mining(kernel.db)
    payload = {"miner": miner} if miner else {}
    jobs: list[int] = []
    with kernel.writing() as write:
        for mid in ids:
            job = waiting.get(mid)
            if job is not None and job[1].get("miner") == payload.get("miner"):
                jobs.append(job[0])  # already queued as asked: run that one
                continue
            if job is not None:  # queued with another miner: this run's choice replaces it
                kernel.store.jobs.drop(job[0], f"replaced by a mine job with miner {miner}")
            jobs.append(write.enqueue(KIND, mid, payload))
    return jobs


def mine_pending(
    memory: Kernel | HasKernel,
    job_ids: list[int],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, int]:
    """Run the given mine jobs, reporting progress; returns done / failed / dropped counts."""
    kernel = kernel_of(memory)
    totals = {"done": 0, "failed": 0, "dropped": 0}
    step = 64
    for start in range(0, len(job_ids), step):
        report = kernel.run_jobs(job_ids=job_ids[start : start + step])
        totals["done"] += report.done
        totals["failed"] += report.failed
        totals["dropped"] += report.dropped
        if progress:
            progress(min(start + step, len(job_ids)), len(job_ids))
    return totals
