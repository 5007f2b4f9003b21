"""The errors localmem raises.

Every error the library raises on purpose is a :class:`LocalMemError`; the CLI and the TUI turn
them into one clear line for a person. Anything else escaping the library is a bug.
"""

from __future__ import annotations

from typing import Any


class LocalMemError(Exception):
    """Base of every error localmem raises on purpose."""


class InputError(LocalMemError, ValueError):
    """The caller passed something localmem cannot accept (empty text, bad filter, bad time)."""


class ArgumentsError(InputError, TypeError):
    """A call that does not fit an operation's declared signature (an unknown option, a missing
    argument): an InputError like any bad argument, and a TypeError as Python's own for a
    wrong call, so either ``except`` catches it. ``Memory`` and ``RemoteMemory`` raise it alike.
    """


class NotFoundError(LocalMemError, KeyError):
    """An id, session or procedure that does not exist (or was purged)."""

    def __str__(self) -> str:  # KeyError quotes its message; a person should not see the quotes
        return str(self.args[0]) if self.args else "not found"


class StoreError(LocalMemError):
    """The store folder is missing, not a store, corrupt, or made with another embedding model."""


class StoreLockedError(StoreError):
    """Another process holds the store open for writing."""

    def __init__(self, path: str, pid: int | None) -> None:
        who = f"process {pid}" if pid else "another process"
        super().__init__(f"store {path} is locked by {who}; close it or wait, then try again")
        self.path = path
        self.pid = pid


class StoreReadOnlyError(StoreError):
    """The store was opened read-only (its folder or filesystem is not writable): no change."""


class StoreConnectionError(StoreError):
    """A store on a database server cannot be reached, refused the login, or the connection
    was lost (what was not committed is not stored; trying again reconnects)."""


class ModelError(LocalMemError):
    """A model (embedder or GGUF) is missing, corrupt, or failed while running."""


class SchemaError(ModelError):
    """A model's output did not match the JSON schema of its task, even after a retry."""


class MissingExtraError(ModelError):
    """A feature needs an optional part of localmem that is not installed (its message names
    the extra: ``pip install 'localmem[EXTRA]'``; see :mod:`localmem.extras`)."""

    def __init__(self, message: str, *, extra: str) -> None:
        super().__init__(message)
        self.extra = extra


class EngineUnavailableError(ModelError):
    """The configured engine cannot serve (server down, model not found)."""


class EngineCrashedError(EngineUnavailableError):
    """The model host (the child process that runs llama.cpp) died while serving a call.

    The message names the signal (or exit code), what it most likely means on this machine and
    the fix, in one line. The host starts again on a later call, after ``retry_after`` seconds.

    Attributes:
        signal: ``SIGILL``, ``SIGSEGV``, ``SIGABRT``, ``SIGKILL``..., or ``exit N``.
        meaning: What that most likely means here.
        fix: The one thing to do about it.
        retry_after: Seconds before the host may be started again (its back-off).
        in_flight: True when the call was running in the host when it died; False when the
            call was refused before it reached a host (a back-off still running).
    """

    def __init__(
        self,
        message: str,
        *,
        signal: str = "",
        meaning: str = "",
        fix: str = "",
        retry_after: float = 0.0,
        in_flight: bool = True,
    ) -> None:
        super().__init__(message)
        self.signal, self.meaning, self.fix = signal, meaning, fix
        self.retry_after, self.in_flight = retry_after, in_flight

    # keyword fields survive a pickle (errors cross process boundaries)
    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_crash, (str(self), self.__dict__))


class EngineTimeoutError(EngineUnavailableError):
    """The model host did not answer within ``engine.timeout_s``, or grew past
    ``engine.host_memory_mb``: it was stopped, and a later call starts a fresh one."""


class EngineUnhealthyError(EngineUnavailableError):
    """The model host crashed too often in a short time (or its probe found it cannot run on
    this CPU): it is not started again until ``localmem doctor`` clears it or the process
    restarts."""


def _rebuild_crash(message: str, fields: dict[str, Any]) -> EngineCrashedError:
    error = EngineCrashedError(message)
    error.__dict__.update(fields)
    return error
