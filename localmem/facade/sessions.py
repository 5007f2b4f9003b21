"""The facade's mechanisms of sessions: sessions of thoughts, procedures made from them, and
consolidation of a scope."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from localmem import sessions, validate
from localmem.plugin import Plugin, add_jobs
from localmem.store.kernel import Kernel
from localmem.types import Session, Thought

if TYPE_CHECKING:
    from localmem.consolidation import ConsolidationReport
    from localmem.procedures import ProcedureStore


class Sessions:
    """Sessions, procedures and consolidation (mixed into :class:`localmem.Memory`)."""

    kernel: Kernel
    plugins: tuple[Plugin, ...]
    _procedures: ProcedureStore | None

    @validate.arguments_checked
    def consolidate(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        within: str | None = None,
        window_days: float | None = None,
        threshold: float | None = None,
        implementation: str | None = None,
        meta: bool = True,
        dry_run: bool = False,
    ) -> ConsolidationReport:
        """Consolidate a scope's episodic memories into semantic facts and meta patterns.

        The consolidation hierarchy; see :func:`localmem.consolidation.consolidate` for the options.
        Running it again only adds what is new (nothing, when nothing changed).
        """
        from localmem.consolidation import consolidate

        return consolidate(
            self.kernel,
            user_id=user_id,
            agent_id=agent_id,
            within=within,
            window_days=window_days,
            threshold=threshold,
            implementation=implementation,
            meta=meta,
            dry_run=dry_run,
        )

    @validate.arguments_checked
    def start_session(
        self,
        title: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Session:
        """Open a session of thoughts (a reasoning episode); see :mod:`localmem.sessions`."""
        return sessions.start_session(
            self.kernel,
            title,
            user_id=user_id,
            agent_id=agent_id,
            metadata=metadata,
        )

    @validate.arguments_checked
    def add_thought(
        self,
        session_id: str,
        content: str,
        *,
        mine: str | None = None,
        evolve: bool | None = None,
        branch_id: str | None = None,
        branch_from: int | None = None,
        revises: int | None = None,
        event_time: datetime | str | float | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Thought:
        """Add the next numbered thought to an open session (``evolve``: A-Mem evolution)."""
        jobs = add_jobs(self.plugins, self.kernel, {"mine": mine, "evolve": evolve})
        return sessions.add_thought(
            self.kernel,
            session_id,
            content,
            jobs=jobs,
            branch_id=branch_id,
            branch_from=branch_from,
            revises=revises,
            event_time=event_time,
            metadata=metadata,
        )

    @validate.arguments_checked
    def complete_session(
        self,
        session_id: str,
        outcome: str = "success",
        *,
        notes: str | None = None,
        abstract: bool = False,
        level: str | None = None,
    ) -> Session:
        """Close a session with its outcome (success or failure).

        ``abstract=True`` (and ``level=``) also turns a successful session into a procedure
        (see :attr:`procedures`): the session is closed and the procedure stored in one
        transaction, so when abstraction fails the session stays open. The procedure's id is in
        the returned session's ``metadata["procedure_id"]``.
        """
        session, meta = sessions.closing(self.kernel, session_id, outcome, notes=notes)
        if abstract:
            self.procedures.from_session(
                session,
                outcome=outcome,
                level=level,
                on_write=lambda pid: sessions.close(
                    self.kernel, session.id, outcome, {**meta, "procedure_id": pid}
                ),
            )
        else:
            with self.kernel.writing():
                sessions.close(self.kernel, session.id, outcome, meta)
        return sessions.get_session(self.kernel, session.id)

    @validate.arguments_checked
    def thoughts(self, session_id: str) -> list[Thought]:
        """The thoughts of a session in order."""
        return sessions.thoughts(self.kernel, session_id)

    @validate.arguments_checked
    def get_session(self, session_id: str) -> Session:
        """One session."""
        return sessions.get_session(self.kernel, session_id)

    @validate.arguments_checked
    def sessions(self, *, status: str | None = None, limit: int = 100) -> list[Session]:
        """Sessions, newest first."""
        return sessions.list_sessions(self.kernel, status=status, limit=limit)

    @property
    def procedures(self) -> ProcedureStore:
        """Procedural memory (Mem^p): find, render, record, retire and restore procedures."""
        if self._procedures is None:
            from localmem.procedures import ProcedureStore

            self._procedures = ProcedureStore(self.kernel)
        return self._procedures
