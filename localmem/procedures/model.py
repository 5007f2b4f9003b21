"""The values of procedural memory: procedures, their versions, events and matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: how much of the source session a procedure keeps
LEVELS: tuple[str, ...] = ("concrete", "abstract", "hybrid")
STATUSES: tuple[str, ...] = ("active", "retired")
#: what can happen to a procedure (rows of ``procedure_events``)
EVENTS: tuple[str, ...] = ("CREATE", "USE", "REVISE", "RETIRE", "RESTORE")


@dataclass(frozen=True)
class Procedure:
    """A reusable how-to abstracted from a successful session (Mem^p).

    Attributes:
        id: ``p_`` plus 12 hex characters.
        task_type: debugging, design, refactoring, ... (see ``TASK_TYPES``).
        trigger: when to use it, as a future task would be described; embedded and searchable
            as the memory ``memory_id`` (kind ``procedure``).
        steps: the steps, in order.
        level: concrete (the session's specifics kept), abstract (placeholders), or hybrid
            (abstract steps plus one concrete ``example``).
        example: how the steps played out in the source session (hybrid only).
        caveats: what went wrong when it was used before (newest last).
        version: bumped by every revision; older versions stay in ``versions()``.
        served_by: which implementation wrote this version (``model-free``, ``llama:<model>``).
    """

    id: str
    task_type: str
    trigger: str
    steps: tuple[str, ...]
    level: str
    example: str | None
    caveats: tuple[str, ...]
    source_session_id: str | None
    memory_id: str
    status: str
    version: int
    use_count: int
    success_count: int
    failure_count: int
    last_used: datetime | None
    created_at: datetime
    updated_at: datetime
    served_by: str

    @property
    def success_rate(self) -> float | None:
        """Successes over uses, or None before the first use."""
        return self.success_count / self.use_count if self.use_count else None

    @property
    def retired(self) -> bool:
        """Whether find() leaves it out (restore() brings it back)."""
        return self.status == "retired"


@dataclass(frozen=True)
class ProcedureVersion:
    """One version of a procedure as it was written, with why it changed."""

    procedure_id: str
    version: int
    task_type: str
    trigger: str
    steps: tuple[str, ...]
    level: str
    example: str | None
    caveats: tuple[str, ...]
    reason: str | None
    served_by: str
    created_at: datetime


@dataclass(frozen=True)
class ProcedureEvent:
    """Something that happened to a procedure: CREATE, USE, REVISE, RETIRE or RESTORE."""

    id: int
    procedure_id: str
    event: str
    version: int
    success: bool | None
    info: dict[str, Any]
    at: datetime


@dataclass(frozen=True)
class ProcedureMatch:
    """A procedure found for a task, with the parts of its score.

    Attributes:
        score: similarity + type term + reliability term (what the threshold applies to).
        similarity: cosine of the task and the trigger (embedder vectors).
        task_type: the task's type (given, or classified model-free; None when unclear).
        type_match: whether it equals the procedure's type (None when the task's is unknown).
        reliability: smoothed success rate, (successes + 1) / (uses + 2).
    """

    procedure: Procedure
    score: float
    similarity: float
    task_type: str | None
    type_match: bool | None
    reliability: float


@dataclass(frozen=True)
class RecordResult:
    """What recording one use did."""

    procedure: Procedure
    revised: bool
    retired: bool
    diagnosis: str | None = None
    served_by: str | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)


def render(procedure: Procedure | ProcedureMatch) -> str:
    """The prompt block of the seed: the procedure as guidance for a similar task."""
    p = procedure.procedure if isinstance(procedure, ProcedureMatch) else procedure
    lines = [
        "You have a procedure from a similar past task that may help:",
        "",
        f"PROCEDURE ({p.task_type}):",
        *(f"{i}. {s}" for i, s in enumerate(p.steps, 1)),
    ]
    if p.example:
        lines += ["", f"EXAMPLE: {p.example}"]
    if p.caveats:
        lines += ["", "CAUTION (from earlier uses that failed):"]
        lines += [f"- {c}" for c in p.caveats]
    lines += ["", "Use this as guidance, but adapt to the specific task."]
    return "\n".join(lines)
