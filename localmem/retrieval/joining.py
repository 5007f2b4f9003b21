"""The model-free reranker's pool, and the memories that join it though no retriever ranked
them among the best (docs/benchmarks.md, "memories that join the pool").

The pool is the best ``rerank_pool`` candidates, and:

- the previous and next memory of the best ``rerank_neighbours`` when they are not in it (a
  reply often shares no word with the question it answers: "what are your summer plans?" /
  "researching adoption agencies"), as :func:`localmem.retrieval.features.neighbours` finds
  them (session order; the memories stored around a chat turn without a session);
- on a question naming a day, a week, a month or a season, the ``time_window`` memories
  nearest the middle of each such time, widened by its fade ("where did Joanna travel in July
  2022?" / "I went to Woodhaven").

A joined memory is within the search's filters, and gets the temporal stage's evidence as the
candidates did. None joins under ``attributes="filter"``: it would slip past the filter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from localmem.retrieval import temporal
from localmem.retrieval.context import Candidate, SearchContext
from localmem.retrieval.features import Pool, build_pool, grow_pool, neighbours, sorted_unique
from localmem.store import timeline
from localmem.store.lookup import members
from localmem.store.timeline import Window

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel


def scored_pool(ctx: SearchContext) -> tuple[Pool, dict[str, int]]:
    """The pool the model-free reranker scores, and how many memories joined it by which way."""
    cfg = ctx.kernel.config.search
    cands = ctx.ranked()[: cfg.rerank_pool]
    if not cands or ctx.options.attributes == "filter":
        return build_pool(ctx, cands), {}
    floor = min(c.score for c in cands)
    inside = {c.label for c in cands}
    window = _window(ctx, cfg.time_window) if cfg.time_window and ctx.options.temporal else []
    joined = {"window": _join(ctx, cands, inside, window, "window", floor)}
    top = min(cfg.rerank_neighbours, len(cands))
    # a neighbour is most often the memory stored just before or after: its row comes with
    # the pool's (and its own neighbours are found with theirs), so the pool grows without a
    # second read
    near = {c.label + d for c in cands[:top] for d in (-1, 1) if c.label + d >= 0}
    pool = build_pool(ctx, cands, prefetch=sorted(near - inside))
    if top:
        prev, nxt = pool.cached("neighbours", lambda: np.stack(neighbours(pool)))
        found = sorted_unique(np.concatenate([prev[:top], nxt[:top]]))
        found = found[found >= 0]
        if ctx.allowed is not None:  # a neighbour outside the search's filters stays out
            found = found[members(ctx.allowed, found)]
        before = len(cands)
        joined["neighbours"] = _join(ctx, cands, inside, found.tolist(), "neighbour", floor)
        if joined["neighbours"]:  # the pool's columns kept, theirs added (read ahead, most)
            pool = grow_pool(pool, cands[before:])
    if temporal.weighs(ctx):  # what the temporal stage left unread or never saw
        temporal.give_evidence(ctx, [c for c in pool.cands if "time_close" not in c.evidence])
    return pool, joined


def _join(
    ctx: SearchContext,
    cands: list[Candidate],
    inside: set[int],
    labels: Iterable[int],
    how: str,
    floor: float,
) -> int:
    """Add ``labels`` not yet in the pool to it (candidates first when they are not), flagged
    ``how``; returns how many joined."""
    added = 0
    for label in labels:
        if label in inside:
            continue
        cand = ctx.candidates.get(label)
        if cand is None:
            cand = ctx.candidates[label] = Candidate(label, floor)
        cand.flags.add(how)
        cand.evidence[how] = 1.0
        cands.append(cand)
        inside.add(label)
        added += 1
    return added


def _window(ctx: SearchContext, limit: int) -> list[int]:
    """The memories of the times the question names (:func:`temporal.windows`), nearest the
    middle of each first, at most ``limit`` each, within the search's filters."""
    out: list[int] = []
    for window in temporal.windows(ctx.parsed.spans):
        out += near_time(ctx.kernel, window, limit, ctx.allowed)
    return out


def near_time(
    kernel: Kernel, window: Window, limit: int, allowed: np.ndarray | None = None
) -> list[int]:
    """:func:`localmem.store.timeline.labels_near_time` (``allowed``: sorted labels). Where this
    process is the only writer, from the rows held in memory (:mod:`localmem.store.mirror`), or
    with those off from a copy of the store's timeline kept until its next unit of writing: the
    query scans every memory when the window holds them all (~3 ms at 100k), a copy answers in
    microseconds. PostgreSQL is asked (a copy read on every search would cost more than the
    query)."""
    mirror = kernel.rows()
    if mirror is not None:
        return mirror.near_time(window, limit, allowed)
    if not kernel.db.one_writer:
        return timeline.labels_near_time(kernel.db, window, limit, allowed)
    times, labels = kernel.kept("timeline", lambda: timeline.timeline(kernel.db))
    return timeline.nearest(times, labels, window, limit, allowed)
