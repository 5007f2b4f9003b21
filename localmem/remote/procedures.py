"""``memory.procedures`` of a served store: the procedure calls a client may make."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localmem.api import ProceduresAPI
from localmem.remote.calls import install
from localmem.remote.transport import NeedsLocalStore

if TYPE_CHECKING:
    from localmem.procedures.model import Procedure, ProcedureMatch
    from localmem.remote import RemoteMemory


class RemoteProcedures(ProceduresAPI):
    """``memory.procedures`` of a served store: its methods are made from the declaration
    (:class:`localmem.api.ProceduresAPI`); ``render`` needs no store and runs here."""

    def __init__(self, remote: RemoteMemory) -> None:
        self._remote = remote

    def call(self, method: str, **args: Any) -> Any:
        """One request to the server (see :meth:`RemoteMemory.call`)."""
        return self._remote.call(method, **args)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NeedsLocalStore(f"procedures.{name}", self._remote.server)

    @staticmethod
    def render(procedure: Procedure | ProcedureMatch) -> str:
        """The prompt block of a procedure (computed here: it needs no store)."""
        # imported here: localmem.procedures brings the store's modules (DuckDB, numpy)
        from localmem.procedures.model import render

        return render(procedure)


install(RemoteProcedures, ("procedures",))
