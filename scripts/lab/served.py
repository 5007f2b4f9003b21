"""`localmem serve` in a child process, for the benchmark and fault scripts that need one."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path


def start_server(store: Path, *, timeout_s: float = 180) -> subprocess.Popen:
    """`localmem serve STORE`, returned once a client can find it. Its stderr is discarded (a
    pipe nobody reads would fill and stall a long run); a server that exits says so."""
    from localmem.discovery import find_server

    proc = subprocess.Popen(
        [sys.executable, "-m", "localmem", "serve", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + timeout_s
    while find_server(store) is None:
        if proc.poll() is not None:
            raise RuntimeError(f"localmem serve exited with {proc.returncode}")
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("localmem serve did not start")
        time.sleep(0.05)
    return proc


def stop_server(proc: subprocess.Popen) -> None:
    """Stop it as a person would (SIGTERM), killing it only if it does not stop in a minute."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
