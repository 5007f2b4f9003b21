"""The CPU probe: does llama.cpp run this GGUF on this machine, and with which setting?

A CPU can advertise an instruction that its VM does not grant (AMX on some cloud VMs: the kernel
even grants the permission, and ``tilezero`` still faults). Asking the OS is not enough, and a
CPU's name is no key (such a VM calls itself "Intel(R) Xeon(R) Processor"): what tells the truth
is trying. The probe runs ``python -m localmem.llm.host --probe GGUF`` in a child (load, decode
one token) and reads how it ended:

- it answered: ``ok``;
- it died with SIGILL: it runs again with llama.cpp's extra buffer types off (the weight
  repacking that picks the AMX kernels); if that answers: ``fixed-by-setting``;
- it died otherwise, or died again: ``crashed``, with the signal and what it means;
- it failed without dying (a file llama.cpp refuses): ``error``, not remembered (the host's
  own load reports it, typed).

The verdict is remembered in ``$LOCALMEM_HOME/engine/probe.json`` under a fingerprint of the
GGUF (path, size, time), the llama.cpp build (its version and library files), the CPU's flags
and this boot, so it is not probed on every start; the supervisor forgets it after any crash of
the host, so the next start probes again. ``localmem doctor`` always probes afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from localmem.atomic import write_private
from localmem.config import localmem_home
from localmem.llm.host.deaths import explain

log = logging.getLogger("localmem.engine")

Status = Literal["ok", "fixed-by-setting", "crashed", "error"]
SETTING = "use_extra_bufts=False"
"""The llama.cpp model parameter the probe turns off when the default dies with SIGILL."""


@dataclass(frozen=True)
class Outcome:
    """How one probe child ended: ``ok``, or the signal it died of, or its error."""

    ok: bool
    signal: str | None = None
    detail: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class Verdict:
    """What the probe found for one GGUF on this machine.

    Attributes:
        status: ``ok``, ``fixed-by-setting``, ``crashed`` or ``error``.
        extra_buffer_types: The setting the host loads the model with.
        signal: What the default build died of (None when it answered).
        detail: One line for a person: what happened and, when it crashed, the fix.
        seconds: How long the probe took.
    """

    status: Status
    extra_buffer_types: bool
    signal: str | None
    detail: str
    seconds: float = 0.0

    @property
    def usable(self) -> bool:
        """Whether the host can run the model (with :attr:`extra_buffer_types`)."""
        return self.status in ("ok", "fixed-by-setting")


def decide(default: Outcome, with_setting) -> Verdict:
    """The verdict from the default run, running ``with_setting()`` only after a SIGILL.

    Args:
        default: How the probe with llama.cpp's defaults ended.
        with_setting: ``() -> Outcome`` of a probe with the extra buffer types off.
    """
    if default.ok:
        return Verdict("ok", True, None, "llama.cpp runs this model here", default.seconds)
    if default.signal is None:
        return Verdict("error", True, None, default.detail, default.seconds)
    death = explain_outcome(default)
    if default.signal == "SIGILL":
        fixed = with_setting()
        seconds = default.seconds + fixed.seconds
        if fixed.ok:
            return Verdict(
                "fixed-by-setting",
                False,
                "SIGILL",
                f"llama.cpp died with SIGILL with its defaults ({death}); it runs with "
                f"{SETTING}, which localmem now uses",
                seconds,
            )
        again = explain_outcome(fixed) if fixed.signal else fixed.detail
        return Verdict(
            "crashed",
            False,
            fixed.signal or "SIGILL",
            f"llama.cpp died with SIGILL, and with {SETTING} too: {again}",
            seconds,
        )
    return Verdict("crashed", True, default.signal, death, default.seconds)


def explain_outcome(outcome: Outcome) -> str:
    """``SIGILL: meaning; fix: ...`` for a probe that died."""
    if outcome.signal == "timeout":
        return f"no answer: {outcome.detail}"
    rc = _returncode(outcome.signal or "")
    death = explain(rc)
    return f"{death.signal}: {death.meaning}; fix: {death.fix}"


def _returncode(name: str) -> int:
    import signal

    try:
        return -int(signal.Signals[name])
    except KeyError:
        return 1


def host_command() -> list[str]:
    """The command that runs the real host module (the probe always uses this one)."""
    return [sys.executable, "-m", "localmem.llm.host"]


def child_env() -> dict[str, str]:
    """The environment of a host child: this one, with localmem importable from where it is."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])  # the folder holding the localmem package
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def run_once(
    model_path: str,
    *,
    extra_buffer_types: bool,
    n_threads: int | None = None,
    n_gpu_layers: int = 0,
    timeout_s: float = 300.0,
    command: Sequence[str] | None = None,
) -> Outcome:
    """One probe child: load ``model_path``, decode one token; how it ended."""
    args = [*(command or host_command()), "--probe", str(model_path)]
    if not extra_buffer_types:
        args.append("--no-extra-buffer-types")
    if n_threads:
        args += ["--n-threads", str(n_threads)]
    if n_gpu_layers:
        args += ["--n-gpu-layers", str(n_gpu_layers)]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            args,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            env=child_env(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, "timeout", f"the probe took more than {timeout_s:g} s", timeout_s)
    seconds = time.perf_counter() - start
    _log_child(done.stderr)
    if done.returncode < 0:
        return Outcome(False, explain(done.returncode).signal, "", seconds)
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    answer: dict = {}
    with contextlib.suppress(ValueError, IndexError):
        answer = json.loads(lines[-1])
    if done.returncode == 0 and answer.get("ok"):
        return Outcome(True, None, "", seconds)
    tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    why = answer.get("error") or tail[0] or f"exit {done.returncode}"
    return Outcome(False, None, str(why), seconds)


def _log_child(stderr: bytes) -> None:
    text = stderr.decode("utf-8", "replace").strip()
    if text:
        log.debug("probe output:\n%s", text)


def probe(
    model_path: str,
    *,
    n_threads: int | None = None,
    n_gpu_layers: int = 0,
    timeout_s: float = 300.0,
    command: Sequence[str] | None = None,
) -> Verdict:
    """Probe ``model_path`` now (see the module docstring); nothing is remembered here."""

    def run(extra: bool) -> Outcome:
        return run_once(
            model_path,
            extra_buffer_types=extra,
            n_threads=n_threads,
            n_gpu_layers=n_gpu_layers,
            timeout_s=timeout_s,
            command=command,
        )

    return decide(run(True), lambda: run(False))


# -- remembering -------------------------------------------------------------------------------
_MEMO: dict[str, Verdict] = {}
_LOCK = threading.Lock()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def fingerprint(model_path: str, *, n_gpu_layers: int = 0) -> str:
    """What a verdict depends on: the GGUF, the llama.cpp build, the CPU's flags, this boot."""
    model = Path(model_path).expanduser().resolve()
    try:
        st = model.stat()
        gguf = [str(model), st.st_size, st.st_mtime_ns]
    except OSError:
        gguf = [str(model)]
    build: list = []
    spec = importlib.util.find_spec("llama_cpp")
    if spec is not None and spec.origin:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            build.append(importlib.metadata.version("llama_cpp_python"))
        lib = Path(spec.origin).parent / "lib"
        for file in sorted(lib.glob("*")) if lib.is_dir() else ():
            with contextlib.suppress(OSError):
                build.append([file.name, file.stat().st_mtime_ns])
    cpuinfo = _read(Path("/proc/cpuinfo"))
    flags = next((line for line in cpuinfo.splitlines() if line.startswith(b"flags")), b"")
    boot = _read(Path("/proc/sys/kernel/random/boot_id")).strip()
    key = [gguf, build, flags.decode(), boot.decode(), socket.gethostname(), n_gpu_layers]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]


def _file() -> Path:
    return localmem_home() / "engine" / "probe.json"


def _load_file() -> dict[str, dict]:
    try:
        data = json.loads(_file().read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def remembered(key: str) -> Verdict | None:
    """The verdict kept for ``key`` (this process's, else the file's), or None."""
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
        data = _load_file().get(key)
        if not data:
            return None
        try:
            verdict = Verdict(**data)
        except TypeError:  # written by another version
            return None
        _MEMO[key] = verdict
        return verdict


def remember(key: str, verdict: Verdict) -> None:
    """Keep ``verdict`` for ``key`` (an ``error`` is not kept: it is not about the CPU)."""
    if verdict.status == "error":
        return
    with _LOCK:
        _MEMO[key] = verdict
        data = _load_file()
        data[key] = asdict(verdict)
        with contextlib.suppress(OSError):  # a read-only home: the memo still holds it
            _file().parent.mkdir(parents=True, exist_ok=True)
            write_private(_file(), json.dumps(data, indent=1))


def forget(key: str) -> None:
    """Forget the verdict for ``key`` (after a crash: the next start probes again)."""
    with _LOCK:
        _MEMO.pop(key, None)
        data = _load_file()
        if data.pop(key, None) is not None:
            with contextlib.suppress(OSError):
                write_private(_file(), json.dumps(data, indent=1))
