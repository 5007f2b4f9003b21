"""A-Mem memory evolution (seed 001): new memories re-contextualise and link older ones.

When a memory is added with ``evolve=True`` (``Memory.add`` / ``add_thought``), a job of kind
``evolve`` finds its most similar older memories and, for each, decides (with the model, or the
model-free rules) whether to link them and whether the older one's context should change.
Changes land in ``memories.context`` (re-embedded), ``history`` (EVOLVE), ``links`` and
``evolution_steps``. :func:`revert` undoes an evolution (REVERT).

Modules: ``job`` (the job, step by step), ``neighbours``, ``decide`` (model or model-free),
``modelfree`` and ``keyphrases`` (pure rules), ``links`` and ``steps`` (tables), ``undo``,
``stage`` (the search stage ``links``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localmem.errors import LocalMemError
from localmem.evolution.job import KIND
from localmem.evolution.links import Link, links_of
from localmem.evolution.steps import Step, steps_of, steps_on
from localmem.evolution.undo import ContextVersion, context_versions, revert

if TYPE_CHECKING:
    from localmem.memory import JobsReport, Memory


def evolve(memory: Memory, memory_id: str) -> list[Step]:
    """Evolve the older neighbours of an existing memory now; returns the steps.

    A memory that has evolved others before is not evolved again (its steps are returned).
    """
    item = memory.get(memory_id)
    db = memory.store.db
    if not steps_of(db, item.id):
        with db.transaction():
            job_id = memory.store.jobs.enqueue(KIND, item.id, {})
        memory.run_jobs(job_ids=[job_id])
        status, error = db.fetchone("SELECT status, error FROM jobs WHERE id = ?", [job_id])
        if status == "failed":
            raise LocalMemError(
                f"evolution of {item.id} failed: {error} (kept; `localmem jobs retry` resumes it)"
            )
    return steps_of(db, item.id)


def run_pending(memory: Memory, *, limit: int | None = None) -> JobsReport:
    """Run the queued evolution jobs (``localmem evolve --pending``)."""
    return memory.run_jobs(kinds=[KIND], limit=limit)


def links(memory: Memory, memory_id: str) -> list[Link]:
    """Every link touching a memory (either end), newest first."""
    return links_of(memory.store.db, memory.get(memory_id, include_deleted=True).id)


__all__ = [
    "KIND",
    "ContextVersion",
    "Link",
    "Step",
    "context_versions",
    "evolve",
    "links",
    "revert",
    "run_pending",
    "steps_of",
    "steps_on",
]
