"""Hierarchical consolidation as a plugin: the ``consolidate`` task and its tables (runs and
which episodic memory went into which fact)."""

from __future__ import annotations

from localmem.plugin import Plugin

PLUGIN = Plugin(
    name="consolidation",
    tasks=("localmem.consolidation.task",),
    migrations="localmem.consolidation.migrations",
)
