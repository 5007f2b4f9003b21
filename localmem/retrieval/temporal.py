"""Temporal attention: on questions about time, favour memories that say when.

The seed's rule: detect a temporal question by its words, then weight memories that carry a
time by 1.5. Every memory in localmem has a storage time, so "carries a time" is read as "states
one": its text holds a date or a relative expression ("yesterday", "last Saturday"), resolved
against the memory's own event time. Two further signals:

- closeness: when the question names a time ("in June", "on 9 November 2022", "last week"),
  memories whose event time or stated times are near it get up to ``1 + temporal_closeness``;
- the fused scores are first scaled to 0..1 over the candidates (z-score fusion can be
  negative, and a factor must not turn a bad score into a worse one).

Everything that decides a weight is a pure function of texts, dates and ``now``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache

from localmem.dates import Span, distance_days, find_spans
from localmem.retrieval.context import Candidate, SearchContext
from localmem.store.timeline import Window
from localmem.types import MemoryItem

#: how quickly closeness fades, in days, by the unit of the time asked about
FADE_DAYS = {
    "day": 3.0,
    "weekend": 3.0,
    "week": 5.0,
    "month": 10.0,
    "season": 20.0,
    "year": 60.0,
    "vague": 10.0,
}


def memory_spans(text: str, when: datetime | None) -> tuple[Span, ...]:
    """The times a memory states, relative ones resolved against its own event time."""
    return find_spans(text, when.date() if when else None)


def closeness(asked: Sequence[Span], times: Sequence[Span]) -> float:
    """1 when a memory time overlaps a time asked about, fading with the distance (pure)."""
    best = 0.0
    for a in asked:
        fade = FADE_DAYS.get(a.unit, 10.0)
        for t in times:
            best = max(best, math.exp(-distance_days(a, t) / fade))
            if best >= 1.0:
                return 1.0
    return best


def temporal_factor(
    *, temporal: bool, states_time: bool, close: float, weight: float, boost: float
) -> float:
    """The factor on a memory's score: the seed's ``weight`` when a temporal question meets a
    memory that states a time, times ``1 + boost * close`` (pure)."""
    factor = weight if temporal and states_time else 1.0
    return factor * (1.0 + boost * close)


def temporal_stage(ctx: SearchContext) -> dict | None:
    """Weight candidates by time (the stage ``temporal``)."""
    if not ctx.options.temporal:
        return None
    temporal = ctx.parsed.temporal
    asked = ctx.parsed.spans
    notes: dict = {"temporal_question": temporal, "asked": [_show(s) for s in asked]}
    if not ctx.candidates or not (temporal or asked):
        return notes
    cfg = ctx.kernel.config.search
    scores = [c.score for c in ctx.candidates.values()]
    lo, hi = min(scores), max(scores)
    spread = hi - lo if hi - lo > 1e-12 else 1.0
    reach = _reachable(ctx, lo, spread, most=cfg.temporal_weight * (1 + cfg.temporal_closeness))
    ctx.dates_wanted = True  # the memories read from now on come with the dates they state
    factors = give_evidence(ctx, [c for label, c in ctx.candidates.items() if label in reach])
    weighted = 0
    for label, cand in ctx.candidates.items():
        if label not in reach:
            cand.score = (cand.score - lo) / spread  # it cannot reach a place that is read
            continue
        factor = factors.get(label)
        if factor is None:  # its memory is gone
            continue
        cand.score = (cand.score - lo) / spread * factor
        weighted += factor != 1.0
    notes["weighted"] = weighted
    notes["read"] = len(reach)
    return notes


def weighs(ctx: SearchContext) -> bool:
    """Whether the temporal stage weighs this search's candidates (and so gives evidence)."""
    return ctx.options.temporal and (ctx.parsed.temporal or bool(ctx.parsed.spans))


def give_evidence(ctx: SearchContext, cands: Sequence[Candidate]) -> dict[int, float]:
    """:func:`time_evidence` of these candidates, their factors by label (a memory gone left
    out): from the dates the store keeps with its rows without making an item where it keeps
    them (:meth:`SearchContext.dated`), else from the memory's text."""
    labels = [c.label for c in cands]
    dated = ctx.dated(labels)
    items = ctx.items([x for x in labels if x not in dated])
    out: dict[int, float] = {}
    weighed = _weighed(ctx)  # asked once, not once a memory (~75 a call)
    for cand in cands:
        known = dated.get(cand.label)
        if known is not None:
            out[cand.label] = _weigh(ctx, cand, known[1], known[0], weighed)
        elif (item := items.get(cand.label)) is not None:
            out[cand.label] = time_evidence(ctx, cand, item)
    return out


def time_evidence(ctx: SearchContext, cand: Candidate, item: MemoryItem) -> float:
    """Record what the temporal stage knows of a candidate (``time_stated``, ``time_close``,
    ``temporal``) and return its factor: for the stage's own candidates, and for memories
    that join the reranker's pool after it (their features read the same evidence)."""
    stated = ctx.stated(item.label)
    if stated is None:  # not kept with the rows: parsed
        stated = memory_spans(item.content, item.event_time)
    return _weigh(ctx, cand, stated, item.when, _weighed(ctx))


def _weighed(ctx: SearchContext) -> dict:
    """The evidence this search has given, by ``(stated, day)`` (see :func:`_weigh`)."""
    known: dict = ctx.once(("time evidence",), dict)
    return known


def _weigh(
    ctx: SearchContext, cand: Candidate, stated: tuple[Span, ...], when: datetime, known: dict
) -> float:
    """:func:`time_evidence` of a memory that states ``stated`` and happened ``when``
    (``known``: :func:`_weighed`)."""
    # what a memory is given depends on its stated times and its day only, and most of a
    # search's ~150 memories share both with others (a batch stored at once states none, a
    # chat session's turns happened the same day): each pair is weighed once per search
    day = when.date()
    given = known.get((stated, day))
    if given is None:
        given = known[(stated, day)] = _evidence(ctx, stated, day)
    cand.evidence["time_stated"], cand.evidence["time_close"], factor = given
    cand.evidence["temporal"] = factor
    return factor


def _evidence(
    ctx: SearchContext, stated: tuple[Span, ...], day: date
) -> tuple[float, float, float]:
    """``(time_stated, time_close, temporal)``: the evidence of a memory that states ``stated``
    and happened on ``day``, and its factor (pure given the search's query and settings)."""
    cfg = ctx.kernel.config.search
    temporal, asked = ctx.parsed.temporal, ctx.parsed.spans
    times = (*stated, _day(day)) if asked else stated
    close = closeness(asked, times) if asked else 0.0
    factor = temporal_factor(
        temporal=temporal,
        states_time=bool(stated),
        close=close,
        weight=cfg.temporal_weight,
        boost=cfg.temporal_closeness,
    )
    return (float(bool(stated)) if temporal else 0.0), close, factor


def windows(spans: Sequence[Span]) -> list[Window]:
    """The window of each time named narrowly enough to read its memories: a
    day, a week, a month or a season, widened by its fade (a year, a vague time or a month
    without a year, which recurs, is too wide)."""
    out = []
    for span in spans:
        if span.yearless or span.unit in ("year", "vague"):
            continue
        fade = timedelta(days=FADE_DAYS.get(span.unit, 10.0))
        start = _shifted(datetime.combine(span.start, time.min, timezone.utc), -fade)
        end = _shifted(datetime.combine(span.end, time.max, timezone.utc), fade)
        out.append(Window(start, end, start + (end - start) / 2))
    return out


_FIRST = datetime.min.replace(tzinfo=timezone.utc)
_LAST = datetime.max.replace(tzinfo=timezone.utc)


def _shifted(moment: datetime, by: timedelta) -> datetime:
    """``moment + by``, held at the first or last moment a datetime can hold ("yesterday"
    asked with ``now`` in the year 9999 must not overflow)."""
    try:
        return moment + by
    except OverflowError:
        return _LAST if by > timedelta(0) else _FIRST


def _reachable(ctx: SearchContext, lo: float, spread: float, *, most: float) -> set[int]:
    """The candidates whose time can matter: those a factor of at most ``most`` could lift
    into the places any later stage reads (the ``k`` asked for, the reranker's pool or depth).
    A factor is at least 1, so the candidate at that place keeps
    at least its scaled score: one below it even at ``most`` times its own cannot pass it, and
    its memory and dates need not be read (on a question naming a time this read is the
    stage's cost: a quarter of the 200 candidates stay unread, results identical)."""
    cfg = ctx.kernel.config.search
    places = max(ctx.options.k, cfg.rerank_pool, cfg.rerank_depth)
    scaled = sorted(((c.score - lo) / spread for c in ctx.candidates.values()), reverse=True)
    if len(scaled) <= places:
        return set(ctx.candidates)
    floor = scaled[places - 1]
    return {
        label
        for label, cand in ctx.candidates.items()
        if (cand.score - lo) / spread * most >= floor
    }


@lru_cache(maxsize=4096)
def _day(d: date) -> Span:
    """The day a memory happened, as a span (spans are frozen: one per day serves every search)."""
    return Span(d, d, "event time", "day")


def _show(span: Span) -> str:
    if span.yearless:
        return f"{span.text} (any year)"
    if span.start == span.end:
        return f"{span.text} = {span.start.isoformat()}"
    return f"{span.text} = {span.start.isoformat()}..{span.end.isoformat()}"
