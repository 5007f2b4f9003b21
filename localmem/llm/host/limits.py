"""What a model host lives within: the failure bounds, the memory it holds, the health mark
`localmem doctor` clears, and where its output goes."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localmem.config import localmem_home

LOAD_TIMEOUT_S = 300.0
"""Least time a start (loading the weights) is given, whatever the per-call timeout."""
LOG_MAX_BYTES = 5_000_000
"""The engine log is moved to ``engine.log.1`` past this size, when a host starts."""


@dataclass(frozen=True)
class Bounds:
    """When a failing host is started again, and when it is given up.

    Attributes:
        backoff_s: Wait before the start after a second failure within the window (the first
            failure restarts at once: one crash is an accident).
        backoff_max_s: The wait doubles with each further failure, up to this.
        limit: Failures (crashes and hangs) within the window that mark the host unhealthy.
        window_s: The window, in seconds.
        poll_s: How often a waiting call looks at the child's memory.
    """

    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    limit: int = 3
    window_s: float = 600.0
    poll_s: float = 0.1

    def wait_after(self, failures: int) -> float:
        """Seconds before the next start, after ``failures`` failures within the window."""
        if failures <= 1:
            return 0.0
        return min(self.backoff_max_s, self.backoff_s * 2 ** (failures - 2))


def log_path() -> Path:
    """The engine log: the host's output, llama.cpp's messages included."""
    return localmem_home() / "logs" / "engine.log"


def _cleared_file() -> Path:
    return localmem_home() / "engine" / "cleared"


def cleared_at() -> float:
    try:
        return float(_cleared_file().read_text().strip() or 0)
    except (OSError, ValueError):
        return 0.0


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` in MB (0 where /proc cannot tell)."""
    try:
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def log_target() -> Any:
    """Where the host's output goes: the engine log, or this terminal when verbose."""
    if os.environ.get("LOCALMEM_ENGINE_LOG") == "stderr":
        return None
    path = log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_MAX_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    return path.open("ab")


def mark_cleared() -> None:
    """Record that ``localmem doctor`` cleared the health marks (seen by every process)."""
    path = _cleared_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{time.time():.6f}\n")
