"""Mem^p procedural memory: sessions abstracted into reusable procedures.

- :class:`ProcedureStore` (``memory.procedures``): find, find_many, render, record, retire,
  restore, versions, history; ``Memory.complete_session(..., abstract=True)`` creates them.
- :mod:`.abstraction`: the engine's ``procedure`` / ``reflection`` tasks or the model-free
  implementations (:mod:`.extract` for steps and placeholders, :mod:`.tasktypes` for types).
- :mod:`.scoring`: the pure match score and retirement rule.
"""

from __future__ import annotations

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
