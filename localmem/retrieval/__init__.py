"""The read pipeline: query expansion, filters, candidates, temporal weighting, rerank, packing;
mechanisms add their stages (attributes, links) through their plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localmem.retrieval.context import Candidate, Query, SearchContext
    from localmem.retrieval.options import SearchOptions
    from localmem.retrieval.pipeline import CORE_STAGES, search
    from localmem.retrieval.query import ParsedQuery
    from localmem.retrieval.stages import StageSpec

__all__ = [
    "CORE_STAGES",
    "Candidate",
    "ParsedQuery",
    "Query",
    "SearchContext",
    "SearchOptions",
    "StageSpec",
    "search",
]

# imported on first use: the CLI reads the option names (retrieval.options) to build its parser
# and must not pay for the whole pipeline (numpy, hnswlib, DuckDB) to print --help
_LAZY = {
    "Candidate": "localmem.retrieval.context",
    "Query": "localmem.retrieval.context",
    "SearchContext": "localmem.retrieval.context",
    "SearchOptions": "localmem.retrieval.options",
    "CORE_STAGES": "localmem.retrieval.pipeline",
    "ParsedQuery": "localmem.retrieval.query",
    "StageSpec": "localmem.retrieval.stages",
    "search": "localmem.retrieval.pipeline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'localmem.retrieval' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
