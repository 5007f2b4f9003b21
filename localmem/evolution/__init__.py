"""A-Mem memory evolution: new memories re-contextualise and link older ones.

When a memory is added with ``evolve=True`` (``Memory.add`` / ``add_thought``), a job of kind
``evolve`` finds its most similar older memories and, for each, decides (with the model, or the
model-free rules) whether to link them and whether the older one's context should change.
Changes land in ``memories.context`` (re-embedded), ``history`` (EVOLVE), ``links`` and
``evolution_steps``. :func:`revert` undoes an evolution (REVERT).

Modules: ``job`` (the job, step by step), ``neighbours``, ``decide`` (model or model-free),
``task`` (the ``evolution`` model task), ``modelfree`` and ``keyphrases`` (pure rules),
``steps`` (its table), ``undo``, ``stage`` (the search stage ``links``), ``plugin``.
"""

from __future__ import annotations

from localmem.errors import LocalMemError
from localmem.evolution.job import KIND
from localmem.evolution.steps import Step, Totals, steps_of, steps_on
from localmem.evolution.steps import totals as steps_totals
from localmem.evolution.undo import ContextVersion, context_versions, revert
from localmem.store import memories
from localmem.store.kernel import HasKernel, JobsReport, Kernel, kernel_of
from localmem.store.links import EVOLUTION, links_of, pairs
from localmem.types import Link


def evolve(memory: Kernel | HasKernel, memory_id: str) -> list[Step]:
    """Evolve the older neighbours of an existing memory now; returns the steps.

    A memory that has evolved others before is not evolved again (its steps are returned).
    """
    kernel = kernel_of(memory)
    item = memories.get(kernel, memory_id)
    if not steps_of(kernel.db, item.id):
        with kernel.writing() as write:
            job_id = write.enqueue(KIND, item.id, {})
        kernel.run_jobs(job_ids=[job_id])
        job = kernel.store.jobs.get(job_id)
        if job is not None and job.status == "failed":
            raise LocalMemError(
                f"evolution of {item.id} failed: {job.error} (kept; `localmem jobs retry` "
                "resumes it)"
            )
    return steps_of(kernel.db, item.id)


def queue(memory: Kernel | HasKernel, memory_ids: list[str]) -> list[int]:
    """Queue an ``evolve`` job for each memory (as ``add(..., evolve=True)`` does in deferred
    mode); returns the job ids."""
    kernel = kernel_of(memory)
    with kernel.writing() as write:
        return [write.enqueue(KIND, mid, {}) for mid in memory_ids]


def totals(memory: Kernel | HasKernel, *, rewrites: int = 3) -> Totals:
    """What evolution did in the store: steps by status, tokens, implementations, and the first
    ``rewrites`` contexts it wrote."""
    return steps_totals(kernel_of(memory).db, rewrites=rewrites)


def links_between(memory: Kernel | HasKernel) -> list[tuple[str, str]]:
    """(new memory, older memory) of every link evolution made."""
    return pairs(kernel_of(memory).db, kind=EVOLUTION)


def run_pending(memory: Kernel | HasKernel, *, limit: int | None = None) -> JobsReport:
    """Run the queued evolution jobs (``localmem evolve --pending``)."""
    return kernel_of(memory).run_jobs(kinds=[KIND], limit=limit)


def links(memory: Kernel | HasKernel, memory_id: str) -> list[Link]:
    """Every link touching a memory (either end), newest first."""
    kernel = kernel_of(memory)
    return links_of(kernel.db, memories.get(kernel, memory_id, include_deleted=True).id)


__all__ = [
    "KIND",
    "ContextVersion",
    "Link",
    "Step",
    "Totals",
    "context_versions",
    "evolve",
    "links",
    "links_between",
    "queue",
    "revert",
    "run_pending",
    "steps_of",
    "steps_on",
    "totals",
]
