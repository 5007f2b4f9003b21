"""Mem^p procedural memory: sessions abstracted into reusable procedures.

- :class:`ProcedureStore` (``memory.procedures``): find, find_many, render, record, retire,
  restore, versions, history; ``Memory.complete_session(..., abstract=True)`` creates them.
- :mod:`.abstraction`: the engine's ``procedure`` / ``reflection`` tasks or the model-free
  implementations (:mod:`.extract` for steps and placeholders, :mod:`.tasktypes` for types).
- :mod:`.scoring`: the pure match score and retirement rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localmem.lazy import lazy_exports

if TYPE_CHECKING:
    from localmem.procedures.lifecycle import session_thoughts
    from localmem.procedures.model import (
        EVENTS,
        LEVELS,
        Procedure,
        ProcedureEvent,
        ProcedureMatch,
        ProcedureVersion,
        RecordResult,
        render,
    )
    from localmem.procedures.store import ProcedureStore
    from localmem.procedures.tasktypes import TASK_TYPES, TaskType, classify

# imported on first use: the plugin (localmem.procedures.plugin) is imported with every
# store, and most processes never touch a procedure
_LAZY = {
    "session_thoughts": "localmem.procedures.lifecycle",
    "EVENTS": "localmem.procedures.model",
    "LEVELS": "localmem.procedures.model",
    "Procedure": "localmem.procedures.model",
    "ProcedureEvent": "localmem.procedures.model",
    "ProcedureMatch": "localmem.procedures.model",
    "ProcedureVersion": "localmem.procedures.model",
    "RecordResult": "localmem.procedures.model",
    "render": "localmem.procedures.model",
    "ProcedureStore": "localmem.procedures.store",
    "TASK_TYPES": "localmem.procedures.tasktypes",
    "TaskType": "localmem.procedures.tasktypes",
    "classify": "localmem.procedures.tasktypes",
}

__getattr__ = lazy_exports(__name__, _LAZY, globals())

__all__ = [
    "EVENTS",
    "LEVELS",
    "TASK_TYPES",
    "Procedure",
    "ProcedureEvent",
    "ProcedureMatch",
    "ProcedureStore",
    "ProcedureVersion",
    "RecordResult",
    "TaskType",
    "classify",
    "render",
    "session_thoughts",
]
