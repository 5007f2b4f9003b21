"""Mining as background work: the ``mine`` job handler and mining many memories at once.

``add(..., mine="inline")`` queues a ``mine`` job and runs it before ``add`` returns;
``mine="deferred"`` leaves it queued for ``localmem jobs run`` (or :class:`localmem.worker.
JobWorker`, a thread that runs queued jobs while the program goes on). A job that fails (the
model broke its schema twice, no engine) is marked ``failed`` and keeps its memory stored;
``localmem jobs retry`` runs it again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from localmem.attributes import store
from localmem.attributes.mining import Mined, miner_for

if TYPE_CHECKING:
    from localmem.memory import Memory
    from localmem.store.jobs import Job

#: mine jobs looked ahead at, so a model-free miner embeds their phrases in one batch
PREFETCH = 64


def _prefetch(memory: Memory, miner) -> None:
    """Let the miner batch the texts of the next queued mine jobs (phrase embeddings)."""
    rows = memory.store.db.fetchall(
        "SELECT m.content FROM jobs j JOIN memories m ON m.id = j.memory_id "
        "WHERE j.kind = 'mine' AND j.status IN ('pending', 'running') AND NOT m.deleted "
        "ORDER BY j.id LIMIT ?",
        [PREFETCH],
    )
    miner.prepare([r[0] for r in rows])


def mine_job(memory: Memory, job: Job) -> None:
    """The ``mine`` job: mine one memory's attributes and store them with the job's completion.

    The payload may name a miner (``{"miner": "model-free"}``); otherwise the config decides.
    A memory deleted in the meantime drops the job.
    """
    db = memory.store.db
    row = db.fetchone(
        "SELECT content, context, content_hash, embedding, deleted FROM memories WHERE id = ?",
        [job.memory_id],
    )
    if row is None or row[4]:
        with db.transaction():
            memory.store.jobs.drop(job.id, "memory deleted")
        return
    content, context, chash, embedding, _ = row
    miner = miner_for(memory, job.payload.get("miner"))
    if not miner.prepared(content):
        _prefetch(memory, miner)
    # the stored vector is the content's own when there is no evolved context
    vector = np.asarray(embedding, np.float32) if embedding is not None and not context else None
    mined = miner.mine(content, vector=vector)
    with db.transaction():
        live = db.scalar("SELECT NOT deleted FROM memories WHERE id = ?", [job.memory_id])
        if not live:
            memory.store.jobs.drop(job.id, "memory deleted")
            return
        store.write(db, job.memory_id, mined, chash)
        memory.store.jobs.done(job.id)


def mine_now(memory: Memory, memory_id: str, *, miner: str | None = None) -> Mined:
    """Mine one memory right away (no job) and store the result; returns it."""
    item = memory.get(memory_id)
    row = memory.store.db.fetchone("SELECT embedding FROM memories WHERE id = ?", [item.id])
    vector = (
        np.asarray(row[0], np.float32) if row and row[0] is not None and not item.context else None
    )
    mined = miner_for(memory, miner).mine(item.content, vector=vector)
    with memory.store.db.transaction():
        store.write(memory.store.db, item.id, mined, item.content_hash)
    return mined


def queue_mining(
    memory: Memory,
    *,
    which: str = "missing",
    miner: str | None = None,
    limit: int | None = None,
) -> list[int]:
    """Queue a ``mine`` job for memories that need one; returns the job ids.

    Args:
        which: ``missing`` (never mined), ``stale`` (text changed since), ``outdated`` (both)
            or ``all``.
        miner: force a miner for these jobs (default: the config's).
        limit: at most this many memories.
    """
    if which not in ("missing", "stale", "outdated", "all"):
        from localmem.errors import InputError

        raise InputError(f"which must be missing, stale, outdated or all, not {which!r}")
    if miner is not None:
        miner_for(memory, miner)  # fail now on an unknown or unavailable miner
    db = memory.store.db
    ids = store.to_mine(db, which=which, limit=limit)
    pending = {
        r[0]
        for r in db.fetchall(
            "SELECT memory_id FROM jobs WHERE kind = 'mine' AND status IN ('pending', 'running')"
        )
    }
    payload = {"miner": miner} if miner else {}
    with db.transaction():
        return [
            memory.store.jobs.enqueue("mine", mid, payload) for mid in ids if mid not in pending
        ]


def mine_pending(
    memory: Memory, job_ids: list[int], *, progress: Callable[[int, int], None] | None = None
) -> dict[str, int]:
    """Run the given mine jobs, reporting progress; returns done / failed / dropped counts."""
    totals = {"done": 0, "failed": 0, "dropped": 0}
    step = 64
    for start in range(0, len(job_ids), step):
        report = memory.run_jobs(job_ids=job_ids[start : start + step])
        totals["done"] += report.done
        totals["failed"] += report.failed
        totals["dropped"] += report.dropped
        if progress:
            progress(min(start + step, len(job_ids)), len(job_ids))
    return totals
