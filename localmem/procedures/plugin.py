"""Mem^p procedural memory as a plugin: the ``procedure`` and ``reflection`` tasks and the
procedure tables (the facade offers :class:`~localmem.procedures.ProcedureStore`)."""

from __future__ import annotations

from localmem.plugin import Plugin
from localmem.procedures import rows
from localmem.procedures.tasks import procedure, reflection

PLUGIN = Plugin(
    name="procedures",
    tasks=(procedure.SPEC, reflection.SPEC),
    migrations="localmem.procedures.migrations",
    on_purge=rows.erase_for_memory,
)
