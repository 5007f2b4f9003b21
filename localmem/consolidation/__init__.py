"""Hierarchical consolidation: episodic -> semantic -> meta.

Episodic memories of a scope (a user, optionally an agent) are clustered by the similarity of
their stored vectors (:mod:`.cluster`, optionally never across sessions or beyond a time
window); each cluster becomes semantic facts through the ``consolidate`` task (the engine, or
extraction of the most central statements without one: :mod:`.extract`); patterns across the
facts (preferences, habits, recurring people and topics: :mod:`.patterns`) become meta
memories. Every new memory links to what it was made from (``links`` kind ``derived_from``),
and a run is recorded with the episodic memories it consolidated, so running again only looks
at what is new. The whole run is written in one transaction (:mod:`.write`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localmem.lazy import lazy_exports

if TYPE_CHECKING:
    from localmem.consolidation.model import (
        DERIVED_FROM,
        SUPERSEDES,
        ConsolidationReport,
        Derived,
    )
    from localmem.consolidation.run import consolidate
    from localmem.store.kernel import HasKernel, Kernel

# imported on first use: the plugin (localmem.consolidation.plugin) is imported with every
# store, and a store that is only searched never consolidates
_LAZY = {
    "DERIVED_FROM": "localmem.consolidation.model",
    "SUPERSEDES": "localmem.consolidation.model",
    "ConsolidationReport": "localmem.consolidation.model",
    "Derived": "localmem.consolidation.model",
    "consolidate": "localmem.consolidation.run",
}

__getattr__ = lazy_exports(__name__, _LAZY, globals())


def sources_of(memory: Kernel | HasKernel, ids: list[str]) -> dict[str, list[str]]:
    """For each of ``ids`` that was derived by consolidation, the memories it came from."""
    from localmem.consolidation import scope
    from localmem.store.kernel import kernel_of

    return scope.sources_of(kernel_of(memory).db, ids)


def derived_into(memory: Kernel | HasKernel, memory_id: str) -> list[str]:
    """The consolidated memories a memory went into."""
    from localmem.consolidation import scope
    from localmem.store.kernel import kernel_of

    return scope.derived_into(kernel_of(memory).db, memory_id)


__all__ = [
    "DERIVED_FROM",
    "SUPERSEDES",
    "ConsolidationReport",
    "Derived",
    "consolidate",
    "derived_into",
    "sources_of",
]
