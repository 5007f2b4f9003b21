"""``memory.procedures`` of a served store: the procedure calls a client may make."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localmem import wire
from localmem.procedures.model import (
    Procedure,
    ProcedureEvent,
    ProcedureMatch,
    ProcedureVersion,
    RecordResult,
    render,
)
from localmem.remote.transport import NeedsLocalStore

if TYPE_CHECKING:
    from localmem.remote import RemoteMemory


class RemoteProcedures:
    """``memory.procedures`` of a served store: find, record, render."""

    def __init__(self, remote: RemoteMemory) -> None:
        self._remote = remote

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NeedsLocalStore(f"procedures.{name}", self._remote.server)

    def retire(self, procedure_id: str, **options: Any) -> Procedure:
        """As :meth:`ProcedureStore.retire`."""
        data = self._remote.call("procedures.retire", procedure_id=procedure_id, **options)
        return wire.decode(Procedure, data)

    def restore(self, procedure_id: str, **options: Any) -> Procedure:
        """As :meth:`ProcedureStore.restore`."""
        data = self._remote.call("procedures.restore", procedure_id=procedure_id, **options)
        return wire.decode(Procedure, data)

    def find(self, task: str, **options: Any) -> ProcedureMatch | None:
        """As :meth:`ProcedureStore.find`."""
        data = self._remote.call("procedures.find", task=task, **options)
        return None if data is None else wire.decode(ProcedureMatch, data)

    def record(
        self, procedure_id: str, success: bool, trace: Any = None, **options: Any
    ) -> RecordResult:
        """As :meth:`ProcedureStore.record`."""
        data = self._remote.call(
            "procedures.record", procedure_id=procedure_id, success=success, trace=trace, **options
        )
        return wire.decode(RecordResult, data)

    def get(self, procedure_id: str) -> Procedure:
        """As :meth:`ProcedureStore.get`."""
        return wire.decode(
            Procedure, self._remote.call("procedures.get", procedure_id=procedure_id)
        )

    def list(self, **options: Any) -> list[Procedure]:
        """As :meth:`ProcedureStore.list`."""
        return wire.decode(list[Procedure], self._remote.call("procedures.list", **options))

    def matches(self, task: str, **options: Any) -> list[ProcedureMatch]:
        """As :meth:`ProcedureStore.matches`."""
        data = self._remote.call("procedures.matches", task=task, **options)
        return wire.decode(list[ProcedureMatch], data)

    def versions(self, procedure_id: str) -> list[ProcedureVersion]:
        """As :meth:`ProcedureStore.versions`."""
        data = self._remote.call("procedures.versions", procedure_id=procedure_id)
        return wire.decode(list[ProcedureVersion], data)

    def history(self, procedure_id: str) -> list[ProcedureEvent]:
        """As :meth:`ProcedureStore.history`."""
        data = self._remote.call("procedures.history", procedure_id=procedure_id)
        return wire.decode(list[ProcedureEvent], data)

    @staticmethod
    def render(procedure: Any) -> str:
        """The prompt block of a procedure (computed here: it needs no store)."""
        return render(procedure)
