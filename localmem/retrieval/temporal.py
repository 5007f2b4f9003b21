"""Temporal attention (seed 004): on questions about time, favour memories that say when.

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
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import numpy as np

from localmem.dates import Span, distance_days, find_spans
from localmem.retrieval.context import Candidate, SearchContext
from localmem.store import records

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel

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
    if asked and cfg.time_window:
        notes["joined"] = join_window(ctx, asked, cfg.time_window)
    items = ctx.items(list(ctx.candidates))
    scores = [c.score for c in ctx.candidates.values()]
    lo, hi = min(scores), max(scores)
    spread = hi - lo if hi - lo > 1e-12 else 1.0
    weighted = 0
    for label, cand in ctx.candidates.items():
        item = items.get(label)
        if item is None:
            continue
        stated = memory_spans(item.content, item.event_time)
        times = (*stated, _day(item.when.date())) if asked else stated
        close = closeness(asked, times) if asked else 0.0
        factor = temporal_factor(
            temporal=temporal,
            states_time=bool(stated),
            close=close,
            weight=cfg.temporal_weight,
            boost=cfg.temporal_closeness,
        )
        cand.evidence["time_stated"] = float(bool(stated)) if temporal else 0.0
        cand.evidence["time_close"] = close
        cand.evidence["temporal"] = factor
        cand.score = (cand.score - lo) / spread * factor
        weighted += factor != 1.0
    notes["weighted"] = weighted
    return notes


def join_window(ctx: SearchContext, asked: Sequence[Span], limit: int) -> int:
    """The ``limit`` memories nearest in time to each time the question names join the
    reranker's pool (flagged ``joined``; those that were not candidates become candidates).

    A question about a day, a week, a month or a season ("where did she travel in July 2022")
    often shares no word with its answer ("I went to Woodhaven"); the memories of that time are
    few enough to score. A year, a vague time or a month without a year (it recurs) is too wide.
    Returns how many joined."""
    spans = [s for s in asked if not s.yearless and s.unit not in ("year", "vague")]
    if not spans or not ctx.candidates:
        return 0
    floor = min(c.score for c in ctx.candidates.values())
    allowed = set(ctx.allowed.tolist()) if ctx.allowed is not None else None
    joined = 0
    for span in spans:
        fade = timedelta(days=FADE_DAYS.get(span.unit, 10.0))
        start = datetime.combine(span.start, time.min, timezone.utc) - fade
        end = datetime.combine(span.end, time.max, timezone.utc) + fade
        middle = start + (end - start) / 2
        # over-fetched when filtered: memories outside the search's filters are dropped here
        fetch = limit * 4 if allowed is not None else limit
        labels = labels_near_time(ctx.kernel, start, end, middle, fetch)
        if allowed is not None:
            labels = [x for x in labels if x in allowed]
        for label in labels[:limit]:
            cand = ctx.candidates.get(label)
            if cand is None:
                cand = ctx.candidates[label] = Candidate(label, floor, {"window": 1.0})
            joined += "joined" not in cand.flags
            cand.flags.add("joined")
    return joined


def labels_near_time(
    kernel: Kernel, start: datetime, end: datetime, middle: datetime, limit: int
) -> list[int]:
    """:func:`records.labels_near_time`, from a copy of the store's timeline kept until the
    next unit of writing where this process is the only writer (a query scans every memory
    when the window holds them all, ~3 ms at 100k; the copy is read in as long once, then
    answers in microseconds). PostgreSQL is asked every time."""
    if not kernel.db.one_writer:
        return records.labels_near_time(kernel.db, start, end, middle, limit)
    known = _TIMELINES.get(kernel)
    if known is None or known[0] != kernel.generation:
        known = _TIMELINES[kernel] = (kernel.generation, *records.timeline(kernel.db))
    _, times, labels = known
    middle = min(max(middle, start), end)  # nearest to an end it lies beyond: the same order
    lo, mid = np.searchsorted(times, [_us(start), _us(middle)]).tolist()
    hi = int(np.searchsorted(times, _us(end), side="right"))
    if hi <= lo:
        return []
    # the nearest ``limit`` lie within ``limit`` places of the middle on either side, and
    # with whole runs of equal times there (a tie goes to the lower label)
    a, b = max(lo, mid - limit), min(hi, mid + limit)
    a = max(lo, int(np.searchsorted(times, times[a], side="left")))
    b = min(hi, int(np.searchsorted(times, times[b - 1], side="right")))
    distance = np.abs(times[a:b] - _us(middle))
    order = np.lexsort((labels[a:b], distance))[:limit]
    return labels[a:b][order].tolist()


def _us(moment: datetime) -> int:
    """A moment as naive UTC microseconds since the epoch (as :func:`records.timeline`)."""
    return int(np.datetime64(records.to_db_time(moment), "us").astype(np.int64))


#: per open store: (the kernel's write generation, times, labels) as records.timeline gives them
_TIMELINES: WeakKeyDictionary[Kernel, tuple[int, np.ndarray, np.ndarray]] = WeakKeyDictionary()


def _day(d: date) -> Span:
    return Span(d, d, "event time", "day")


def _show(span: Span) -> str:
    if span.yearless:
        return f"{span.text} (any year)"
    if span.start == span.end:
        return f"{span.text} = {span.start.isoformat()}"
    return f"{span.text} = {span.start.isoformat()}..{span.end.isoformat()}"
