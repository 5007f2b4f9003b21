"""The read pipeline: query expansion, candidates, filters, temporal weighting, links, rerank."""

from localmem.retrieval.context import Candidate, Query, SearchContext
from localmem.retrieval.options import SearchOptions
from localmem.retrieval.pipeline import STAGES, search

__all__ = ["STAGES", "Candidate", "Query", "SearchContext", "SearchOptions", "search"]
