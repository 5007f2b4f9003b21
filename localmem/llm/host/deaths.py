"""Why a model host died, in words a person can act on: the signal, its likely meaning, the fix.

A child process that ends by a signal has a negative return code (``-4`` is SIGILL). What each
signal most likely means is specific to a llama.cpp host: SIGILL is an instruction the CPU (or
the VM around it) does not allow, SIGKILL is nearly always the out-of-memory killer, SIGABRT is a
``GGML_ASSERT`` that failed. The text is written once, here, so the error, ``localmem doctor``
and the TUI say the same thing.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

BUILD_FIX = (
    "run `localmem doctor` (it probes this CPU and turns llama.cpp's extra buffer types off when "
    "that fixes it), or rebuild llama-cpp-python with GGML_NATIVE=OFF (models/README.md)"
)

_MEANINGS: dict[str, tuple[str, str]] = {
    "SIGILL": (
        "an instruction this CPU, or the VM around it, does not allow (llama.cpp was built for "
        "another CPU, or uses AMX/AVX-512 that the hypervisor does not grant)",
        BUILD_FIX,
    ),
    "SIGSEGV": (
        "llama.cpp read memory it does not own (a truncated or corrupt GGUF, or a bug in this "
        "llama.cpp build)",
        "check the GGUF (`localmem models verify FILE --load`) or update llama-cpp-python",
    ),
    "SIGBUS": (
        "the GGUF file changed or vanished under the mapped model (a truncated or replaced file)",
        "leave the GGUF in place while localmem runs, or download it again",
    ),
    "SIGABRT": (
        "llama.cpp stopped on a failed check (GGML_ASSERT): a model or quantisation this build "
        "does not support, or a context too small for the request",
        "read the assertion in the engine log, then update llama-cpp-python or use another GGUF",
    ),
    "SIGKILL": (
        "killed from outside, most likely by the out-of-memory killer (the model and its "
        "context did not fit in memory)",
        "use a smaller GGUF or a smaller engine.n_ctx, or free memory",
    ),
    "SIGFPE": (
        "an arithmetic fault in llama.cpp (a bug in this build, or an unsupported model)",
        "update llama-cpp-python or use another GGUF",
    ),
}


@dataclass(frozen=True)
class Death:
    """How a host process ended, explained.

    Attributes:
        signal: ``SIGILL``, ``SIGSEGV``..., or ``exit N`` when it exited by itself.
        meaning: What that most likely means for a llama.cpp host.
        fix: The one thing to do about it.
    """

    signal: str
    meaning: str
    fix: str


def signal_name(returncode: int) -> str:
    """``SIGILL`` for -4, ``exit 3`` for 3 (a process that ended by itself)."""
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit {returncode}"


def explain(returncode: int, *, log_hint: str = "") -> Death:
    """The :class:`Death` of a process that ended with ``returncode``.

    Args:
        returncode: As :class:`subprocess.Popen` reports it (negative: killed by that signal).
        log_hint: Where the host's own log is, named in the fix of an unexplained death.
    """
    name = signal_name(returncode)
    if name in _MEANINGS:
        meaning, fix = _MEANINGS[name]
        return Death(name, meaning, fix)
    where = f" ({log_hint})" if log_hint else ""
    if returncode >= 0:
        return Death(
            name,
            "the model host ended on its own, which it never does while serving",
            f"read the engine log{where}, then run `localmem doctor`",
        )
    return Death(name, "an unexpected signal", f"read the engine log{where}")
