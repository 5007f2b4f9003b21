"""The read pipeline: named stages run in order, each reporting what it did.

A stage is a function ``stage(ctx) -> dict | None``: it reads and changes the
:class:`SearchContext`; returning None means it did not run (switched off), returning a dict
(possibly empty) records a :class:`StageReport` with those notes. Stages are listed explicitly in
:data:`STAGES`, in the order they run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from localmem.evolution.stage import links_stage
from localmem.retrieval import candidates, filters
from localmem.retrieval.context import Query, SearchContext
from localmem.retrieval.expansion import expand_stage
from localmem.retrieval.options import SearchOptions
from localmem.retrieval.packing import pack
from localmem.retrieval.rerank import rerank_stage
from localmem.retrieval.temporal import temporal_stage
from localmem.store.db import utcnow
from localmem.store.records import aware
from localmem.types import Hit, SearchResult, StageReport

if TYPE_CHECKING:
    from localmem.memory import Memory

Stage = Callable[[SearchContext], "dict[str, Any] | None"]


def _filter_stage(ctx: SearchContext) -> dict | None:
    if not ctx.options.has_filters:
        return None
    if ctx.allowed is None:  # query expansion may have needed it first
        ctx.allowed = filters.allowed_labels(ctx.memory, ctx.options)
    return {"allowed": len(ctx.allowed)}


def _candidate_stage(ctx: SearchContext) -> dict:
    return candidates.generate(ctx)


def _attributes_stage(ctx: SearchContext) -> dict | None:
    from localmem.attributes.stage import attributes_stage  # MemInsight (seed 000)

    return attributes_stage(ctx)


def _pack_stage(ctx: SearchContext) -> dict | None:
    budget = ctx.options.budget_tokens
    top = ctx.ranked()[: ctx.options.k]
    items = ctx.items([c.label for c in top])
    counts = [
        ctx.memory.embedder.count_tokens(items[c.label].text_for_embedding)
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


#: name -> (implementation label, stage); the order here is the order they run
STAGES: dict[str, tuple[str, Stage]] = {
    "expand": ("prf", expand_stage),
    "filter": ("sql", _filter_stage),
    "candidates": ("hnsw+bm25", _candidate_stage),
    "attributes": ("model-free", _attributes_stage),
    "temporal": ("dates", temporal_stage),
    "links": ("evolution-links", links_stage),
    "rerank": ("model-free", rerank_stage),
    "pack": ("tokenizer", _pack_stage),
}


def implementation(ctx: SearchContext, name: str) -> str:
    """What served a stage: a fixed label, or for candidates the retrievers the mode uses."""
    if name == "candidates":
        return {"hybrid": "hnsw+bm25", "dense": "hnsw", "lexical": "bm25"}[ctx.options.mode]
    return STAGES[name][0]


def search(memory: Memory, query: str, *, k: int = 5, **kwargs: Any) -> SearchResult:
    """Run the pipeline for ``query`` and return the best ``k`` hits with their explanation."""
    from localmem import validate

    started = time.perf_counter()
    text = validate.content(query, max_chars=memory.config.store.max_content_chars, what="query")
    options = SearchOptions.build(memory.config.search, k=k, **kwargs)
    now = options.now or aware(utcnow())
    ctx = SearchContext(memory, text, options, now, queries=[Query(text)])
    for name, (_, stage) in STAGES.items():
        before = len(ctx.candidates)
        t0 = time.perf_counter()
        notes = stage(ctx)
        if notes is not None:
            ms = (time.perf_counter() - t0) * 1000
            ctx.reports.append(
                StageReport(
                    name,
                    notes.pop("implementation", None) or implementation(ctx, name),
                    before,
                    len(ctx.candidates),
                    ms,
                    notes,
                )
            )
    top = ctx.ranked()[: options.k]
    items = ctx.items([c.label for c in top])
    hits = [
        Hit(items[c.label], c.score, rank, dict(c.evidence), tuple(sorted(c.flags)))
        for rank, c in enumerate((c for c in top if c.label in items), start=1)
        if not items[c.label].deleted
    ]
    total = (time.perf_counter() - started) * 1000
    return SearchResult(text, hits, ctx.reports, total, ctx.packed_tokens)
