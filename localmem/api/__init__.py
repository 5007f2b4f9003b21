"""The public API declared once (:mod:`.declaration`) and read as data (:mod:`.contract`).

``Memory`` and ``RemoteMemory`` implement :class:`MemoryAPI`; the server's methods, the MCP
tools and the CLI's search options derive from :func:`operations`. Cheap to import: no numpy,
DuckDB or pydantic.
"""

from __future__ import annotations

from localmem.api.contract import (
    IN_PROCESS_ONLY,
    Operation,
    Param,
    check_arguments,
    operations,
    served,
)
from localmem.api.declaration import (
    TIME_FORMAT,
    MemoryAPI,
    ProceduresAPI,
    ServedAPI,
    Time,
)

__all__ = [
    "IN_PROCESS_ONLY",
    "TIME_FORMAT",
    "MemoryAPI",
    "Operation",
    "Param",
    "ProceduresAPI",
    "ServedAPI",
    "Time",
    "check_arguments",
    "operations",
    "served",
]
