"""MemInsight as a plugin: the ``attributes`` task, the ``mine`` job, the search stage, its
table, and the hooks that keep mined rows in step with their memories."""

from __future__ import annotations

from localmem.attributes import jobs
from localmem.attributes.stage import attributes_stage
from localmem.plugin import Plugin
from localmem.retrieval.stages import StageSpec

PLUGIN = Plugin(
    name="attributes",
    tasks=("localmem.attributes.task",),
    jobs={jobs.KIND: jobs.mine_job},
    add_options=("mine",),
    add_jobs=jobs.jobs_for_add,
    stages=(StageSpec("attributes", attributes_stage, "model-free", after="candidates"),),
    migrations="localmem.attributes.migrations",
    on_delete=jobs.forget,
    on_change=jobs.remine,
)
