"""localmem: a fully local, offline-first memory system for LLM agents.

from localmem import Memory
with Memory.open() as mem:
    mem.add("Caroline went to a support group on 7 May 2023", kind="message")
    print(mem.search("When did Caroline go to the support group?").hits[0].memory.content)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localmem.offline import quiet_dependencies

# before any dependency is imported: they read these switches at import (localmem/offline.py)
quiet_dependencies()

from localmem.errors import (  # noqa: E402
    EngineCrashedError,
    EngineTimeoutError,
    EngineUnavailableError,
    EngineUnhealthyError,
    InputError,
    LocalMemError,
    ModelError,
    NotFoundError,
    SchemaError,
    StoreError,
    StoreLockedError,
    StoreReadOnlyError,
)
from localmem.lazy import lazy_exports  # noqa: E402
from localmem.types import (  # noqa: E402
    HistoryEvent,
    Hit,
    MemoryItem,
    SearchResult,
    Session,
    StageReport,
    Thought,
)

if TYPE_CHECKING:
    from localmem.config import Config
    from localmem.memory import JobsReport, Memory
    from localmem.remote import connect

#: the version (pyproject.toml reads it from here; CHANGELOG.md says what changed)
__version__ = "0.2.0.dev0"

# Memory and Config are imported on first use: they pull in DuckDB, pyarrow, numpy and pydantic
# (about a second), which `localmem --help` and every CLI start would otherwise pay
_LAZY = {
    "Memory": "localmem.memory",
    "JobsReport": "localmem.memory",
    "Config": "localmem.config",
    "connect": "localmem.remote",  # a client of `localmem serve`, with Memory's API
}

__getattr__ = lazy_exports(__name__, _LAZY, globals())


__all__ = [
    "Config",
    "EngineCrashedError",
    "EngineTimeoutError",
    "EngineUnavailableError",
    "EngineUnhealthyError",
    "HistoryEvent",
    "Hit",
    "InputError",
    "JobsReport",
    "LocalMemError",
    "Memory",
    "MemoryItem",
    "ModelError",
    "NotFoundError",
    "SchemaError",
    "SearchResult",
    "Session",
    "StageReport",
    "StoreError",
    "StoreLockedError",
    "StoreReadOnlyError",
    "Thought",
    "__version__",
    "connect",
]
