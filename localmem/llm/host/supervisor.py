"""The parent's side of a model host: start it, send it requests, notice when it dies or hangs.

One :class:`Supervisor` per model and settings in a process (:func:`supervisor_for`), shared by
every engine that names them. The child is ``python -m localmem.llm.host --fd N`` (Popen), on a
socket pair wrapped in a :class:`multiprocessing.connection.Connection`. A death reaches the
socket as end-of-file, whatever killed the child: the call gets ``EngineCrashedError``; a call
past its timeout, or a child past its memory cap, is killed: ``EngineTimeoutError``. Restarts,
back-off and the unhealthy mark follow :class:`~localmem.llm.host.limits.Bounds`; before a start
without a remembered verdict the CPU probe (:mod:`localmem.llm.host.probe`) runs.
docs/architecture.md ("The model host") says why, and the bounds.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import shlex
import subprocess
import threading
import time
import weakref
from typing import Any

from localmem.errors import (
    EngineCrashedError,
    EngineTimeoutError,
    EngineUnavailableError,
    EngineUnhealthyError,
    LocalMemError,
)
from localmem.llm.host import probe
from localmem.llm.host.deaths import Death, explain
from localmem.llm.host.limits import (
    LOAD_TIMEOUT_S,
    Bounds,
    cleared_at,
    log_path,
    log_target,
    mark_cleared,
    rss_mb,
)

log = logging.getLogger("localmem.engine")

HOST_COMMAND_ENV = "LOCALMEM_ENGINE_HOST_COMMAND"
"""A command run instead of ``python -m localmem.llm.host`` (a debugger; the tests' crash host)."""


def clear_unhealthy() -> None:
    """Clear the unhealthy mark of every host, in every process of this LOCALMEM_HOME."""
    mark_cleared()
    for supervisor in list(_SUPERVISORS.values()):
        supervisor.reset()


class _Child:
    """A running host: the process and the parent's end of its socket."""

    def __init__(self, proc: subprocess.Popen, conn: Any) -> None:
        self.proc, self.conn = proc, conn

    def kill(self) -> int:
        """Stop it for good; its return code."""
        with contextlib.suppress(OSError):
            self.conn.close()
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()
        return self.proc.wait()


def _kill_children(children: list[_Child]) -> None:
    while children:
        children.pop().kill()


class Supervisor:
    """Starts, watches and restarts one model host (see the module docstring).

    Args:
        spec: The :class:`~localmem.llm.llama.LlamaEngine` arguments the host builds.
        name: The engine's name, in messages.
        memory_mb: Kill the host past this resident memory (None: no cap of our own).
        bounds: Back-off and health bounds.
        command: The host command (default: ``$LOCALMEM_ENGINE_HOST_COMMAND``, else
            ``python -m localmem.llm.host``); ``--fd N`` is appended.
        use_probe: Probe the CPU before a start (off: llama.cpp's defaults, always).
    """

    def __init__(
        self,
        spec: dict[str, Any],
        *,
        name: str,
        memory_mb: float | None = None,
        bounds: Bounds | None = None,
        command: list[str] | None = None,
        use_probe: bool = True,
    ) -> None:
        self.spec = dict(spec)
        self.name = name
        self.memory_mb = memory_mb
        self.bounds = bounds or Bounds()
        self.command = command
        self.use_probe = use_probe
        self.key = probe.fingerprint(str(spec["model_path"]), n_gpu_layers=spec["n_gpu_layers"])
        self.starts = self.crashes = self.timeouts = 0
        self.last_failure: str | None = None
        self.last_death: Death | None = None
        self.unhealthy: str | None = None
        self.verdict: probe.Verdict | None = None
        self.extra_buffer_types: bool | None = None
        self._failures: list[float] = []
        self._next_start = 0.0
        self._unhealthy_at = 0.0
        self._children: list[_Child] = []  # the running child, if any (a list for the finalizer)
        self._lock = threading.RLock()
        # a supervisor no engine uses any more stops its child (and at exit, every one does)
        self._finalizer = weakref.finalize(self, _kill_children, self._children)

    # -- calls ---------------------------------------------------------------------------
    def call(self, op: str, *, timeout: float, **kwargs: Any) -> Any:
        """Send one request to the host (started first if needed) and return its answer.

        Raises:
            EngineCrashedError: The host died during the call, or is waiting out a back-off.
            EngineTimeoutError: No answer within ``timeout`` seconds, or past the memory cap.
            EngineUnhealthyError: The host failed too often; ``localmem doctor`` clears it.
            LocalMemError: What the engine in the host raised (SchemaError, InputError...).
        """
        with self._lock:
            child = self._ensure(timeout)
            return self._exchange(child, (op, kwargs), timeout)

    def _ensure(self, timeout: float) -> _Child:
        self._check_health()
        if self._children:
            child = self._children[0]
            if child.proc.poll() is None:
                return child
            # it died between calls (the OOM killer, a kill from outside): counted, and a
            # fresh host serves this call unless a back-off or the health bound says no
            log.warning("%s", self._record_death(child, "between requests")[0])
            self._check_health()
        wait = self._next_start - time.monotonic()
        if wait > 0:
            raise EngineCrashedError(
                f"{self.last_failure}; it starts again in {wait:.1f} s",
                signal=self.last_death.signal if self.last_death else "",
                meaning=self.last_death.meaning if self.last_death else "",
                fix=self.last_death.fix if self.last_death else "",
                retry_after=wait,
                in_flight=False,
            )
        extra = self._settings(timeout)
        child = self._spawn()
        spec = {**self.spec, "extra_buffer_types": extra}
        try:
            self._exchange(child, ("init", spec), max(timeout, LOAD_TIMEOUT_S))
        except LocalMemError as exc:
            if not isinstance(exc, EngineUnavailableError):  # a load error, typed: the next
                _kill_children(self._children)  # call loads again and says the same
            raise
        self.extra_buffer_types = extra
        return child

    def _settings(self, timeout: float) -> bool:
        """Whether the host keeps llama.cpp's extra buffer types: the probe's verdict."""
        if not self.use_probe:
            return True
        verdict = probe.remembered(self.key)
        if verdict is None:
            verdict = probe.probe(
                str(self.spec["model_path"]),
                n_threads=self.spec.get("n_threads"),
                n_gpu_layers=self.spec["n_gpu_layers"],
                timeout_s=max(timeout, LOAD_TIMEOUT_S),
            )
            probe.remember(self.key, verdict)
            if verdict.status == "fixed-by-setting":
                log.warning("%s: %s", self.name, verdict.detail)  # said once: it is remembered
        self.verdict = verdict
        if verdict.status == "crashed":
            self._mark_unhealthy(f"the CPU probe found llama.cpp cannot run here: {verdict.detail}")
            raise EngineUnhealthyError(f"{self.name}: {self.unhealthy}")
        return verdict.extra_buffer_types

    def _spawn(self) -> _Child:
        ours, theirs = multiprocessing.Pipe(duplex=True)
        command = self.command or _env_command() or probe.host_command()
        env = probe.child_env()
        env["LOCALMEM_ENGINE_VERBOSE"] = "1" if os.environ.get("LOCALMEM_ENGINE_LOG") else "0"
        out = log_target()
        try:
            proc = subprocess.Popen(
                [*command, "--fd", str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                pass_fds=(theirs.fileno(),),
                env=env,
            )
        finally:
            theirs.close()
            if out is not None:
                out.close()
        child = _Child(proc, ours)
        self._children[:] = [child]
        self.starts += 1
        log.info("%s: model host started (pid %d)", self.name, proc.pid)
        return child

    def _exchange(self, child: _Child, message: tuple[str, Any], timeout: float) -> Any:
        try:
            child.conn.send(message)
        except OSError:
            self._died(child)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._stopped(child, f"gave no answer within {timeout:g} s (engine.timeout_s)")
            if child.conn.poll(min(left, self.bounds.poll_s)):
                try:
                    status, value = child.conn.recv()
                except (EOFError, OSError):
                    self._died(child)
                if status == "error":
                    raise value
                return value
            if self.memory_mb and rss_mb(child.proc.pid) > self.memory_mb:
                self._stopped(child, f"grew past engine.host_memory_mb = {self.memory_mb:g} MB")

    # -- failures ------------------------------------------------------------------------
    def _record_death(self, child: _Child, when: str) -> tuple[str, Death]:
        """Count a death: the message, and what it means."""
        code = child.kill()
        self._children.clear()
        death = explain(code, log_hint=str(log_path()))
        self.crashes += 1
        self.last_death = death
        probe.forget(self.key)  # whatever it was, the next start probes this CPU again
        reason = f"{self.name}: the model host died {when} with {death.signal}: {death.meaning}"
        return self._failed(f"{reason}; fix: {death.fix}"), death

    def _died(self, child: _Child) -> None:
        """The host died during a call: record it and raise the typed error."""
        message, death = self._record_death(child, "while serving a request")
        log.warning("%s", message)
        raise EngineCrashedError(
            message,
            signal=death.signal,
            meaning=death.meaning,
            fix=death.fix,
            retry_after=self.bounds.wait_after(len(self._failures)),
        )

    def _stopped(self, child: _Child, why: str) -> None:
        """The host hung or grew too big: kill it, record it and raise the typed error."""
        child.kill()
        self._children.clear()
        self.timeouts += 1
        self.last_death = None
        message = self._failed(
            f"{self.name}: the model host {why}; it was stopped, a fresh one serves the next call"
        )
        log.warning("%s", message)
        raise EngineTimeoutError(message)

    def _failed(self, reason: str) -> str:
        """Count a failure within the window; back off or mark unhealthy; the full message."""
        now = time.monotonic()
        self._failures = [t for t in self._failures if now - t < self.bounds.window_s] + [now]
        self.last_failure = reason
        n = len(self._failures)
        if n >= self.bounds.limit:
            self._mark_unhealthy(f"{n} failures in {self.bounds.window_s:g} s, the last: {reason}")
            return (
                f"{reason} ({n} failures in {self.bounds.window_s:g} s: the engine is now "
                "unhealthy until `localmem doctor` clears it)"
            )
        self._next_start = now + self.bounds.wait_after(n)
        return reason

    def _mark_unhealthy(self, why: str) -> None:
        self.unhealthy = why
        self._unhealthy_at = time.time()

    def _check_health(self) -> None:
        if self.unhealthy is None:
            return
        if cleared_at() > self._unhealthy_at:
            log.info("%s: cleared by `localmem doctor`; the model host may start again", self.name)
            self.reset()
            return
        raise EngineUnhealthyError(
            f"{self.name} is unhealthy ({self.unhealthy}); run `localmem doctor` to probe and "
            "clear it"
        )

    # -- state ---------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget past failures and the unhealthy mark (the next call starts a host at once)."""
        with self._lock:
            self._failures.clear()
            self._next_start = 0.0
            self.unhealthy = None
            self.verdict = None if self.verdict and not self.verdict.usable else self.verdict

    def stop(self) -> None:
        """Stop the host (the next call starts a new one)."""
        with self._lock:
            _kill_children(self._children)

    @property
    def pid(self) -> int | None:
        """The running host's process id, or None."""
        child = self._children[0] if self._children else None
        return child.proc.pid if child is not None and child.proc.poll() is None else None

    def state(self) -> str:
        """``unhealthy``, ``running``, ``crashed`` (restarts on the next call) or ``idle``."""
        if self.unhealthy is not None and cleared_at() <= self._unhealthy_at:
            return "unhealthy"
        if self.pid is not None:
            return "running"
        return "crashed" if self.last_failure else "idle"

    def status(self) -> dict[str, Any]:
        """What ``doctor``, the TUI and ``describe()`` show about the host."""
        state = self.state()
        reason = self.unhealthy if state == "unhealthy" else self.last_failure
        return {
            "state": state,
            "reason": reason,
            "pid": self.pid,
            "starts": self.starts,
            "crashes": self.crashes,
            "timeouts": self.timeouts,
            "probe": self.verdict.status if self.verdict else None,
            "extra_buffer_types": self.extra_buffer_types,
            "memory_mb": self.memory_mb,
            "log": str(log_path()),
        }


def _env_command() -> list[str] | None:
    value = os.environ.get(HOST_COMMAND_ENV, "").strip()
    return shlex.split(value) if value else None


_SUPERVISORS: weakref.WeakValueDictionary[tuple, Supervisor] = weakref.WeakValueDictionary()
_REGISTRY_LOCK = threading.Lock()


def supervisor_for(
    spec: dict[str, Any], *, name: str, memory_mb: float | None = None, **options: Any
) -> Supervisor:
    """The supervisor of ``spec`` in this process, made on first use, kept while used.

    Args:
        spec: The host's :class:`~localmem.llm.llama.LlamaEngine` arguments.
        name: The engine's name, in messages.
        memory_mb: The host's memory cap.
        options: :class:`Supervisor` options (``bounds``, ``command``, ``use_probe``).
    """
    command = options.get("command") or _env_command()
    key = (
        tuple(sorted((k, str(v)) for k, v in spec.items())),
        memory_mb,
        tuple(command or ()),
        repr(options.get("bounds")),
        options.get("use_probe", True),
    )
    with _REGISTRY_LOCK:
        found = _SUPERVISORS.get(key)
        if found is None:
            found = Supervisor(spec, name=name, memory_mb=memory_mb, **options)
            _SUPERVISORS[key] = found
        return found


def reset_all() -> None:
    """Forget the past failures of every host of this process (tests; a long-lived tool)."""
    for supervisor in list(_SUPERVISORS.values()):
        supervisor.reset()


def stop_all() -> None:
    """Stop every host of this process (at exit; tests that count processes)."""
    for supervisor in list(_SUPERVISORS.values()):
        supervisor.stop()


atexit.register(stop_all)
