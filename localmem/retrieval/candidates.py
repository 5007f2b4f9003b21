"""Candidate generation: dense (hnswlib), lexical (BM25) and their fusion."""

from __future__ import annotations

import numpy as np

from localmem.retrieval.context import Candidate, SearchContext
from localmem.retrieval.fusion import FUSERS, RankedList, rrf
from localmem.store.vectors import exact_search


def dense(ctx: SearchContext, text: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-n labels by cosine similarity (exact over a small filtered set, else HNSW)."""
    return ctx.once(("dense", text, n), lambda: _dense(ctx, text, n))


def _dense(ctx: SearchContext, text: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    store = ctx.kernel.store
    vec = ctx.vector(text)
    allowed = ctx.allowed
    if allowed is None:
        return store.vector_index.search(vec, n)
    if len(allowed) <= ctx.kernel.config.search.brute_force_below:
        return exact_search(vec, ctx.allowed_vectors(), allowed, n)
    keep = set(allowed.tolist())
    labels, sims = store.vector_index.search(vec, n * 4)  # over-fetch, then filter
    mask = np.fromiter((x in keep for x in labels.tolist()), bool, len(labels))
    return labels[mask][:n], sims[mask][:n]


def lexical(ctx: SearchContext, text: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-n labels by BM25."""
    return ctx.once(
        ("bm25", text, n),
        lambda: ctx.bm25_scores(text).top(n, ctx.allowed),
    )


def generate(ctx: SearchContext) -> dict:
    """Fill ``ctx.candidates`` from every query (the original and any expansions)."""
    opts = ctx.options
    n = opts.candidates
    lists: list[RankedList] = []
    evidence: dict[int, dict[str, float]] = {}
    for q in ctx.queries:
        if opts.mode in ("hybrid", "dense") and "dense" in q.retrievers:
            labels, sims = dense(ctx, q.text, n)
            lists.append(
                RankedList(f"dense:{q.source}", labels, sims, q.weight * _w(opts, "dense"))
            )
            _note(evidence, labels, sims, "dense")
            if q.text == ctx.query:
                ctx.cosines.update(zip(labels.tolist(), sims.tolist(), strict=True))
        if opts.mode in ("hybrid", "lexical") and "bm25" in q.retrievers:
            labels, scores = lexical(ctx, q.text, n)
            lists.append(
                RankedList(f"bm25:{q.source}", labels, scores, q.weight * _w(opts, "bm25"))
            )
            _note(evidence, labels, scores, "bm25")
    if len(lists) == 1:  # a single list keeps its own score
        only = lists[0]
        fused = dict(zip(only.labels.tolist(), only.scores.tolist(), strict=True))
    elif opts.fusion == "rrf":
        fused = rrf(lists, k=opts.rrf_k)
    else:
        fused = FUSERS[opts.fusion](lists)
    ctx.candidates = {
        label: Candidate(label, score, evidence.get(label, {})) for label, score in fused.items()
    }
    return {"lists": len(lists), "fusion": opts.fusion if len(lists) > 1 else "none"}


def _w(opts, retriever: str) -> float:
    if opts.mode != "hybrid":
        return 1.0
    return opts.dense_weight if retriever == "dense" else 1.0 - opts.dense_weight


def _note(evidence: dict, labels: np.ndarray, scores: np.ndarray, name: str) -> None:
    for label, score in zip(labels.tolist(), scores.tolist(), strict=True):
        ev = evidence.setdefault(label, {})
        ev[name] = max(ev.get(name, float("-inf")), float(score))
