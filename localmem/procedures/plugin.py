"""Mem^p procedural memory as a plugin: the ``procedure`` and ``reflection`` tasks and the
procedure tables (the facade offers :class:`~localmem.procedures.ProcedureStore`)."""

from __future__ import annotations

from localmem.plugin import Plugin
from localmem.procedures import rows

PLUGIN = Plugin(
    name="procedures",
    tasks=("localmem.procedures.tasks.procedure", "localmem.procedures.tasks.reflection"),
    migrations="localmem.procedures.migrations",
    on_purge=rows.erase_for_memory,
)
