"""The read pipeline: query expansion, candidates, filters, temporal weighting, links, rerank."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localmem.retrieval.context import Candidate, Query, SearchContext
    from localmem.retrieval.options import SearchOptions
    from localmem.retrieval.pipeline import STAGES, search

__all__ = ["STAGES", "Candidate", "Query", "SearchContext", "SearchOptions", "search"]

# imported on first use: the CLI reads the option names (retrieval.options) to build its parser
# and must not pay for the whole pipeline (numpy, hnswlib, DuckDB) to print --help
_LAZY = {
    "Candidate": "localmem.retrieval.context",
    "Query": "localmem.retrieval.context",
    "SearchContext": "localmem.retrieval.context",
    "SearchOptions": "localmem.retrieval.options",
    "STAGES": "localmem.retrieval.pipeline",
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
