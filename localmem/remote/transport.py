"""What a client of ``localmem serve`` shares: the error for in-process-only parts, and how
long a kept-alive connection may rest."""

from __future__ import annotations

from localmem.discovery import ServerInfo
from localmem.errors import ArgumentsError, StoreError

#: seconds a kept-alive connection may rest before it is replaced (the server's limit is 5)
IDLE_S = 2.0


class NeedsLocalStore(StoreError, AttributeError):
    """A part of ``Memory`` that only a store open in this process has (its kernel, embedder,
    reembed...), asked of a served store. An AttributeError too, so ``hasattr`` says False."""

    def __init__(self, name: str, server: ServerInfo | None) -> None:
        who = f" (pid {server.pid})" if server else ""
        #: the part asked for (``kernel``, ``reembed``...): for a developer, not in the message
        self.part = name
        super().__init__(
            f"this needs the store in this process, and a localmem server holds it{who}; "
            "stop the server first, or do it through the server's commands"
        )


class BadArguments(ArgumentsError):
    """Arguments a declared operation does not take, found before anything is sent (the
    :class:`~localmem.errors.ArgumentsError` that ``Memory`` raises too)."""


class ServerGone(StoreError):
    """The server of a store no longer answers: its connection was refused, so the request
    was never sent and nothing was applied (reconnect, or open the store directly)."""
