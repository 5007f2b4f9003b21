"""Hierarchical consolidation as a plugin: the ``consolidate`` task and its tables (runs and
which episodic memory went into which fact)."""

from __future__ import annotations

from localmem.consolidation import task
from localmem.plugin import Plugin

PLUGIN = Plugin(
    name="consolidation",
    tasks=(task.SPEC,),
    migrations="localmem.consolidation.migrations",
)
