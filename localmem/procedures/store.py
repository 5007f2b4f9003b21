"""``ProcedureStore``: the procedures of one store, as ``memory.procedures``.

The façade over :mod:`.rows` (reading), :mod:`.finding` (find, find_many) and :mod:`.lifecycle`
(create, record, revise, retire, restore).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from localmem import sessions, validate
from localmem.errors import InputError
from localmem.procedures import abstraction, finding, lifecycle, rows
from localmem.procedures.model import (
    Procedure,
    ProcedureEvent,
    ProcedureMatch,
    ProcedureVersion,
    RecordResult,
    render,
)
from localmem.procedures.tasktypes import check_task_type

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel
    from localmem.types import Session


class ProcedureStore:
    """Procedural memory (Mem^p): procedures abstracted from successful sessions.

    Example::

        mem.complete_session(sid, "success", abstract=True)
        match = mem.procedures.find("Debug: API returns 500 when the email field is missing")
        if match:
            system_prompt = mem.procedures.render(match)
            ...  # the agent works on the task
            mem.procedures.record(match.procedure.id, success=False, trace=thoughts)
    """

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel

    # -- reading -----------------------------------------------------------------------------
    @validate.arguments_checked
    def get(self, procedure_id: str) -> Procedure:
        """A procedure by id (or a unique prefix of it).

        Raises:
            NotFoundError: no such procedure.
        """
        return rows.get(self.kernel.db, procedure_id)

    @validate.arguments_checked
    def list(
        self,
        *,
        status: str | None = "active",
        task_type: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[Procedure]:
        """Procedures, newest first.

        Args:
            status: active, retired, or None for both.
            task_type: only this type.
            session_id: only those abstracted from this session.
            limit: at most this many.
        """
        return rows.listing(
            self.kernel.db,
            status=status,
            task_type=check_task_type(task_type) if task_type is not None else None,
            session_id=session_id,
            limit=limit,
        )

    @validate.arguments_checked
    def versions(self, procedure_id: str) -> builtins.list[ProcedureVersion]:
        """Every version of a procedure, oldest first (the last is the current one)."""
        proc = self.get(procedure_id)
        return rows.versions(self.kernel.db, proc.id)

    @validate.arguments_checked
    def history(self, procedure_id: str) -> builtins.list[ProcedureEvent]:
        """What happened to a procedure, oldest first: CREATE, USE, REVISE, RETIRE, RESTORE."""
        proc = self.get(procedure_id)
        return rows.events(self.kernel.db, proc.id)

    # -- finding -----------------------------------------------------------------------------
    @validate.arguments_checked
    def matches(
        self,
        task: str,
        *,
        k: int = 10,
        task_type: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> builtins.list[ProcedureMatch]:
        """Active procedures scored for ``task``, best first, with no threshold applied.

        The score is the cosine of task and trigger, plus ``type_weight`` when the task's type
        equals the procedure's, plus ``reliability_weight * (reliability - 0.5)``.

        Args:
            task: the task about to be solved, as a person would describe it.
            k: how many to return.
            task_type: the task's type if known ("any" ignores types; default: classified
                model-free).
            user_id: only the procedures of this user.
            agent_id: only the procedures of this agent.
        """
        return finding.matches(
            self.kernel, task, k=k, task_type=task_type, user_id=user_id, agent_id=agent_id
        )

    @validate.arguments_checked
    def find(
        self,
        task: str,
        *,
        threshold: float | None = None,
        task_type: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ProcedureMatch | None:
        """The best procedure for ``task`` if its score reaches the threshold, else None.

        Args:
            task: the task about to be solved.
            threshold: least score (default ``config.procedures.threshold``).
            task_type, user_id, agent_id: as in :meth:`matches`.
        """
        return finding.find(
            self.kernel,
            task,
            threshold=threshold,
            task_type=task_type,
            user_id=user_id,
            agent_id=agent_id,
        )

    def find_many(
        self, task: str, *, k: int = 3, threshold: float | None = None, **options: Any
    ) -> builtins.list[ProcedureMatch]:
        """Procedures for a task that needs several, in the order to apply them.

        The task is split into its parts ("...; then ...", sentences, lines); each part gets its
        best procedure over the threshold (each procedure once), in the order of the parts. A
        task of one part gets up to ``k`` procedures over the threshold, best first.
        """
        return finding.find_many(self.kernel, task, k=k, threshold=threshold, **options)

    @staticmethod
    def render(procedure: Procedure | ProcedureMatch) -> str:
        """The prompt block that puts a procedure in front of an agent (the seed's wording)."""
        return render(procedure)

    # -- writing -----------------------------------------------------------------------------
    def add(
        self,
        trigger: str,
        steps: Sequence[str],
        *,
        task_type: str,
        level: str = "abstract",
        example: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> Procedure:
        """Store a procedure written by hand (or by an agent), outside any session.

        Raises:
            InputError: an empty trigger, fewer than two non-empty steps, a bad level.
        """
        trigger = validate.content(trigger, max_chars=abstraction.MAX_TRIGGER_CHARS, what="trigger")
        if isinstance(steps, str) or not isinstance(steps, Sequence):
            raise InputError("steps must be a list of strings")
        cleaned = abstraction.clean_steps(steps, max_steps=self.kernel.config.procedures.max_steps)
        if len(cleaned) < abstraction.MIN_STEPS:
            raise InputError(f"a procedure needs at least {abstraction.MIN_STEPS} non-empty steps")
        example = validate.optional_text(
            example, max_chars=abstraction.MAX_EXAMPLE_CHARS, what="example"
        )
        draft = abstraction.Draft(
            task_type=check_task_type(task_type),
            trigger=" ".join(trigger.split()),
            steps=cleaned,
            level=lifecycle.check_level(level),
            example=example,
            served_by="user",
        )
        return lifecycle.create(
            self.kernel, draft, session_id=None, user_id=user_id, agent_id=agent_id
        )

    def abstract(self, session_id: str, *, level: str | None = None) -> Procedure:
        """Abstract an already completed, successful session into a new procedure.

        Raises:
            InputError: the session is open, failed, or has no usable thoughts.
            SchemaError: the engine's answer had no usable steps (nothing is stored).
        """
        session = sessions.get_session(self.kernel, session_id)
        if session.status == "open":
            raise InputError(
                f"session {session.id} is still open; complete it with abstract=True "
                "(`localmem session complete --abstract`)"
            )
        return lifecycle.from_session(
            self.kernel, session, outcome=session.outcome or "", level=level
        )

    def from_session(
        self,
        session: Session,
        *,
        outcome: str,
        level: str | None = None,
        on_write: Callable[[str], None] | None = None,
    ) -> Procedure:
        """Abstract ``session`` (ending with ``outcome``) into a procedure; ``on_write(id)``
        runs inside the storing transaction (completing a session closes it there).

        Raises:
            InputError: the outcome is not success, or the session has no usable thoughts.
            SchemaError: the engine's answer had no usable steps (nothing is stored).
        """
        return lifecycle.from_session(
            self.kernel, session, outcome=outcome, level=level, on_write=on_write
        )

    @validate.arguments_checked
    def record(
        self,
        procedure_id: str,
        success: bool,
        trace: Sequence[str] | None = None,
        *,
        task: str | None = None,
        session_id: str | None = None,
        note: str | None = None,
        reflect: bool = True,
    ) -> RecordResult:
        """Record one use of a procedure; a failure makes a new version by reflection.

        On failure the engine says what went wrong and revises the steps (model-free: the
        failure becomes a caveat, the steps stay, and the worse record demotes the procedure in
        find); either way a new version is written and the old one kept. A procedure with
        ``retire_after_uses`` uses or more and a success rate under ``retire_below`` is retired.

        Args:
            procedure_id: the procedure that was followed.
            success: whether the task succeeded.
            trace: the thoughts of the attempt (default: those of ``session_id``).
            task: the task it was used for.
            session_id: the session of the attempt.
            note: what went wrong, if someone knows.
            reflect: revise the procedure on failure (False only counts the use).

        Raises:
            InputError: bad arguments, or the procedure is retired.
            SchemaError: the engine's revision was unusable (nothing is recorded then).
        """
        return lifecycle.record(
            self.kernel,
            procedure_id,
            success,
            trace,
            task=task,
            session_id=session_id,
            note=note,
            reflect=reflect,
        )

    @validate.arguments_checked
    def retire(self, procedure_id: str, *, reason: str | None = None) -> Procedure:
        """Take a procedure out of find() (not deleted: :meth:`restore` brings it back)."""
        return lifecycle.retire(self.kernel, procedure_id, reason=reason)

    @validate.arguments_checked
    def restore(self, procedure_id: str, *, reset_counts: bool = False) -> Procedure:
        """Bring a retired procedure back; ``reset_counts`` gives it a fresh record."""
        return lifecycle.restore(self.kernel, procedure_id, reset_counts=reset_counts)
