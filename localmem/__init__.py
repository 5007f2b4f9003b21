"""localmem: a fully local, offline-first memory system for LLM agents.

from localmem import Memory
with Memory.open() as mem:
    mem.add("Caroline went to a support group on 7 May 2023", kind="message")
    print(mem.search("When did Caroline go to the support group?").hits[0].memory.content)
"""

from localmem.config import Config
from localmem.errors import (
    EngineUnavailableError,
    InputError,
    LocalMemError,
    ModelError,
    NotFoundError,
    SchemaError,
    StoreError,
    StoreLockedError,
)
from localmem.memory import JobsReport, Memory
from localmem.types import (
    HistoryEvent,
    Hit,
    MemoryItem,
    SearchResult,
    Session,
    StageReport,
    Thought,
)

__version__ = "0.1.0"

__all__ = [
    "Config",
    "EngineUnavailableError",
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
    "Thought",
    "__version__",
]
