"""The read pipeline: named stages run in order, each reporting what it did.

The core stages are :data:`CORE_STAGES`; the facade hands :func:`search` the full list, with
the stages its mechanisms add placed among them (:func:`localmem.retrieval.stages.compose`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem.retrieval import candidates, filters
from localmem.retrieval.context import Query, SearchContext
from localmem.retrieval.exact import exact_stage
from localmem.retrieval.expansion import expand_stage
from localmem.retrieval.options import SearchOptions
from localmem.retrieval.packing import pack
from localmem.retrieval.relevance import relevance_stage
from localmem.retrieval.rerank import rerank_stage
from localmem.retrieval.stages import StageSpec
from localmem.retrieval.temporal import temporal_stage
from localmem.store.db import utcnow
from localmem.store.records import aware
from localmem.types import Hit, SearchResult, StageReport

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel


def _filter_stage(ctx: SearchContext) -> dict | None:
    if not filters.needed(ctx.kernel, ctx.options):
        return None
    if ctx.allowed is None:  # query expansion may have needed it first
        ctx.allowed = filters.allowed_labels(ctx.kernel, ctx.options)
    as_of = ctx.options.as_of
    return {"allowed": len(ctx.allowed), "valid": as_of.isoformat() if as_of else "now"}


def _candidate_stage(ctx: SearchContext) -> dict:
    return candidates.generate(ctx)


def _retrievers(ctx: SearchContext) -> str:
    return {"hybrid": "hnsw+bm25", "dense": "hnsw", "lexical": "bm25"}[ctx.options.mode]


def _pack_stage(ctx: SearchContext) -> dict | None:
    budget = ctx.options.budget_tokens
    top = ctx.ranked()[: ctx.options.k]
    items = ctx.items([c.label for c in top])
    counts = [
        ctx.kernel.embedder.count_tokens(items[c.label].text_for_embedding)
        for c in top
        if c.label in items
    ]
    if budget is None:
        ctx.packed_tokens = sum(counts)
        return None
    n, used = pack(counts, budget)
    ctx.candidates = {c.label: c for c in top[:n]}
    ctx.packed_tokens = used
    return {"budget": budget, "tokens": used}


#: the stages of every search, in the order they run (mechanisms add theirs among them)
CORE_STAGES: tuple[StageSpec, ...] = (
    StageSpec("expand", expand_stage, "prf"),
    StageSpec("filter", _filter_stage, "sql"),
    StageSpec("candidates", _candidate_stage, "hnsw+bm25", served=_retrievers),
    StageSpec("temporal", temporal_stage, "dates"),
    StageSpec("rerank", rerank_stage, "model-free"),
    StageSpec("exact", exact_stage, "words"),  # a verbatim match is never lost (exact.py)
    StageSpec("relevance", relevance_stage, "calibrated"),  # 0..1, comparable (relevance.py)
    StageSpec("pack", _pack_stage, "tokenizer"),
)


def start(kernel: Kernel, query: str, *, k: int = 5, **kwargs: Any) -> SearchContext:
    """A search's context: the query validated and parsed, the options checked."""
    from localmem import validate

    text = validate.content(query, max_chars=kernel.config.store.max_content_chars, what="query")
    options = SearchOptions.build(kernel.config.search, k=k, **kwargs)
    now = options.now or aware(utcnow())
    kernel.searches += 1  # the rows held in memory start after a few (Kernel.rows)
    return SearchContext(kernel, text, options, now, queries=[Query(text)])


def run_stages(
    ctx: SearchContext, stages: Sequence[StageSpec], *, until: str | None = None
) -> None:
    """Run the stages in order (stopping before the one named ``until``), recording reports."""
    for stage in stages:
        if stage.name == until:
            return
        before = len(ctx.candidates)
        t0 = time.perf_counter()
        notes = stage.run(ctx)
        if notes is not None:
            ms = (time.perf_counter() - t0) * 1000
            served = notes.pop("implementation", None) or stage.served_by(ctx)
            ctx.reports.append(
                StageReport(stage.name, served, before, len(ctx.candidates), ms, notes)
            )


def search(
    kernel: Kernel,
    query: str,
    *,
    stages: Sequence[StageSpec] = CORE_STAGES,
    k: int = 5,
    query_vector: np.ndarray | None = None,
    **kwargs: Any,
) -> SearchResult:
    """Run the pipeline for ``query`` and return the best ``k`` hits with their explanation.

    ``query_vector``: the query's embedding when the caller already has it (inference on add
    searches with the vector of the fact it just embedded), so the search embeds nothing.
    """
    started = time.perf_counter()
    ctx = start(kernel, query, k=k, **kwargs)
    if query_vector is not None:
        ctx.give_vector(ctx.query, query_vector)
    run_stages(ctx, stages)
    top = ctx.ranked()[: ctx.options.k]
    items = ctx.items([c.label for c in top])
    hits = [
        Hit(
            items[c.label],
            c.score,
            rank,
            dict(c.evidence),
            tuple(sorted(c.flags)),
            ctx.relevance.get(c.label),
        )
        for rank, c in enumerate((c for c in top if c.label in items), start=1)
        if not items[c.label].deleted
    ]
    total = (time.perf_counter() - started) * 1000
    return SearchResult(ctx.query, hits, ctx.reports, total, ctx.packed_tokens)
