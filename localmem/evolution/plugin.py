"""A-Mem evolution as a plugin: the ``evolution`` task, the ``evolve`` job, the ``links``
search stage, its table, and the purge hooks that take a forgotten memory's words back out of
the contexts it rewrote."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localmem.evolution import job, undo
from localmem.evolution.stage import links_stage
from localmem.plugin import Plugin
from localmem.retrieval.stages import StageSpec
from localmem.store.kernel import Kernel
from localmem.store.memories import JobRequest


def jobs_for_add(kernel: Kernel, options: Mapping[str, Any]) -> list[JobRequest]:
    """The ``evolve`` job an add with ``evolve=True`` asks for (inline or deferred per config)."""
    return [(job.KIND, {}, kernel.config.evolution.mode)] if options.get("evolve") else []


PLUGIN = Plugin(
    name="evolution",
    tasks=("localmem.evolution.task",),
    jobs={job.KIND: job.handle_evolve_job},
    add_options=("evolve",),
    add_jobs=jobs_for_add,
    stages=(StageSpec("links", links_stage, "evolution-links", after="temporal"),),
    migrations="localmem.evolution.migrations",
    before_purge=undo.before_purge,
    on_purge=undo.on_purge,
)
