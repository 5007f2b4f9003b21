"""Reading times out of text: running the patterns of :mod:`localmem.dates.patterns`, and resolving
what they match against an anchor."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from localmem.dates.patterns import (
    AMBIGUOUS_MONTHS,
    CUE_WORDS,
    DIGIT,
    DIGIT_RULES,
    HYPHEN_RULES,
    LETTERS,
    RULES,
    RULES_BY_CUE,
    STRONG_PREPS,
    UNCUED_RULES,
)
from localmem.dates.vocabulary import (
    MONTHS,
    NOT_TEMPORAL_IDIOMS,
    NUMBERS,
    SEASONS,
    TEMPORAL_PHRASES,
    TEMPORAL_WORDS,
    VAGUE_DAYS,
    WEEKDAYS,
    Span,
)


# -- resolving ------------------------------------------------------------------------------
def _month_end(year: int, month: int) -> date:
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return nxt - timedelta(days=1)


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), _month_end(year, month)


def _season_span(year: int, season: str) -> tuple[date, date]:
    first, last = SEASONS[season]
    if first > last:  # winter: December of `year` to February of the next
        return date(year, first, 1), _month_end(year + 1, last)
    return date(year, first, 1), _month_end(year, last)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _number(text: str) -> int | None:
    text = " ".join(text.split())
    if text.isdigit():
        return int(text)
    return NUMBERS.get(text)


def _shift_months(d: date, months: int) -> tuple[int, int]:
    total = d.year * 12 + (d.month - 1) + months
    return total // 12, total % 12 + 1


def _week_of(d: date) -> tuple[date, date]:
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=6)


def _weekend_of(d: date) -> tuple[date, date]:
    saturday = d - timedelta(days=d.weekday()) + timedelta(days=5)
    return saturday, saturday + timedelta(days=1)


#: the kinds that name a date by itself (the others count from the anchor)
_ABSOLUTE = frozenset(
    {
        "iso",
        "day_month_year",
        "month_day_year",
        "month_year",
        "day_month",
        "month_day",
        "season_year",
        "month_alone",
        "year",
    }
)


def _resolve(kind: str, m: _Cased, anchor: date | None) -> Span | None:
    g = m.groupdict()
    text = m.group(0)
    if kind in _ABSOLUTE:
        return _absolute(kind, g, text, anchor)
    if anchor is None:
        return None
    return _relative(kind, g, text, anchor)


def _absolute(kind: str, g: dict[str, Any], text: str, anchor: date | None) -> Span | None:
    """A date written out (a year missing from it is the anchor's, or 2000 without one)."""
    if kind == "iso":
        d = _safe_date(int(g["y"]), int(g["m"]), int(g["d"]))
        return Span(d, d, text, "day") if d else None
    if kind in ("day_month_year", "month_day_year"):
        d = _safe_date(int(g["y"]), MONTHS[g["m"].rstrip(".")], int(g["d"]))
        return Span(d, d, text, "day") if d else None
    if kind == "month_year":
        start, end = _month_span(int(g["y"]), MONTHS[g["m"].rstrip(".")])
        return Span(start, end, text, "month")
    if kind in ("day_month", "month_day"):
        month = MONTHS[g["m"].rstrip(".")]
        if g["m"].rstrip(".") == "may" and kind == "month_day" and not text[:1].isupper():
            return None
        year = anchor.year if anchor else 2000
        d = _safe_date(year, month, int(g["d"]))
        return Span(d, d, text, "day", yearless=True) if d else None
    if kind == "season_year":
        start, end = _season_span(int(g["y"]), g["s"])
        return Span(start, end, text, "season")
    if kind == "month_alone":
        return _month_alone(g, text, anchor)
    if kind == "year":
        y = int(g["y"])
        return Span(date(y, 1, 1), date(y, 12, 31), text, "year")
    return None


def _month_alone(g: dict[str, Any], text: str, anchor: date | None) -> Span | None:
    """A month named without a year: "in March", "last March" (from the anchor)."""
    name = g["m"].rstrip(".")
    month = MONTHS[name]
    prep = g["prep"]
    if name in AMBIGUOUS_MONTHS and prep not in STRONG_PREPS:
        return None
    if prep in ("last", "this", "next"):
        if anchor is None:
            return None
        year = anchor.year
        if prep == "last" and month >= anchor.month:
            year -= 1
        elif prep == "next" and month <= anchor.month:
            year += 1
        start, end = _month_span(year, month)
        return Span(start, end, text, "month", relative=True)
    year = anchor.year if anchor else 2000
    start, end = _month_span(year, month)
    return Span(start, end, text, "month", yearless=True)


def _relative(kind: str, g: dict[str, Any], text: str, anchor: date) -> Span | None:
    """A date counted from the anchor: yesterday, three weeks ago, last Friday."""
    if kind == "day_before_yesterday":
        d = anchor - timedelta(days=2)
        return Span(d, d, text, "day", relative=True)
    if kind == "yesterday":
        d = anchor - timedelta(days=1)
        return Span(d, d, text, "day", relative=True)
    if kind == "today":
        return Span(anchor, anchor, text, "day", relative=True)
    if kind == "tomorrow":
        d = anchor + timedelta(days=1)
        return Span(d, d, text, "day", relative=True)
    if kind == "vague":
        reach = VAGUE_DAYS[" ".join(text.lower().split())]
        return Span(anchor - timedelta(days=reach), anchor, text, "vague", relative=True)
    if kind == "ago":
        return _ago(g, text, anchor)
    if kind == "shifted":
        return _shifted(g["dir"], g["what"], text, anchor)
    if kind == "on_weekday":
        return _weekday(WEEKDAYS[g["wd"]], -1, text, anchor)
    return None


def _ago(g: dict[str, Any], text: str, anchor: date) -> Span | None:
    """ "N days/weeks/weekends/months/years ago" (N up to 200)."""
    n = _number(g["num"])
    if n is None or n > 200:
        return None
    unit = g["unit"].rstrip("s")
    if unit == "day":
        d = anchor - timedelta(days=n)
        return Span(d, d, text, "day", relative=True)
    if unit in ("week", "weekend"):
        ref = anchor - timedelta(weeks=n)
        start, end = _weekend_of(ref) if unit == "weekend" else _week_of(ref)
        return Span(start, end, text, unit, relative=True)
    if unit == "month":
        year, month = _shift_months(anchor, -n)
        start, end = _month_span(year, month)
        return Span(start, end, text, "month", relative=True)
    year = anchor.year - n
    return Span(date(year, 1, 1), date(year, 12, 31), text, "year", relative=True)


def _shifted(direction: str, what: str, text: str, anchor: date) -> Span | None:
    step = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[direction]
    if what in WEEKDAYS:
        return _weekday(WEEKDAYS[what], step, text, anchor)
    if what == "week":
        start, end = _week_of(anchor + timedelta(weeks=step))
        return Span(start, end, text, "week", relative=True)
    if what == "weekend":
        if step < 0:  # the most recent weekend that has ended before the anchor day
            sat = anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
            if sat + timedelta(days=1) >= anchor:
                sat -= timedelta(days=7)
            return Span(sat, sat + timedelta(days=1), text, "weekend", relative=True)
        start, end = _weekend_of(anchor + timedelta(weeks=max(step, 0)))
        return Span(start, end, text, "weekend", relative=True)
    if what == "month":
        year, month = _shift_months(anchor, step)
        start, end = _month_span(year, month)
        return Span(start, end, text, "month", relative=True)
    if what == "year":
        y = anchor.year + step
        return Span(date(y, 1, 1), date(y, 12, 31), text, "year", relative=True)
    # a season: the last one that has ended, the current or coming one, the one after
    start, end = _season_span(anchor.year, what)
    if what == "winter" and anchor.month <= 2:
        start, end = _season_span(anchor.year - 1, what)
    if step < 0 and end >= anchor:
        start, end = _season_span(start.year - 1, what)
    elif step > 0 and start <= anchor:
        start, end = _season_span(start.year + 1, what)
    return Span(start, end, text, "season", relative=True)


def _weekday(target: int, step: int, text: str, anchor: date) -> Span:
    """``last Friday`` / ``on Friday`` (step -1): the latest Friday before the anchor day;
    ``this`` / ``next Friday``: the first Friday after it."""
    if step < 0:
        d = anchor - timedelta(days=(anchor.weekday() - target) % 7 or 7)
    else:
        d = anchor + timedelta(days=(target - anchor.weekday()) % 7 or 7)
    return Span(d, d, text, "day", relative=True)


@lru_cache(maxsize=50_000)
def find_spans(text: str, anchor: date | None = None) -> tuple[Span, ...]:
    """Every time expression in ``text``, resolved against ``anchor`` where relative.

    Earlier rules win where matches overlap ("7 May 2023" is one day, not a day and a year).
    Relative expressions need an anchor and are skipped without one.
    """
    return scan_spans(text, anchor, quick=True)


def scan_spans(text: str, anchor: date | None = None, *, quick: bool = False) -> tuple[Span, ...]:
    """:func:`find_spans`, not cached; ``quick`` skips the rules whose cue (:data:`NEEDS`) the
    text lacks, else every rule is tried (what the tests compare the quick scan with)."""
    low = text.lower()
    if len(low) != len(text):  # a few characters change length when lower-cased
        text = low
    has_digit = DIGIT.search(low) is not None
    rules: Sequence[tuple[str, re.Pattern[str]]]
    if quick:
        cues = CUE_WORDS.intersection(LETTERS.findall(low))
        rules = _cued_rules(cues, has_digit, hyphen="-" in low)
        if not rules:  # no cue word and no digit: no rule can match (most memories)
            return ()
    else:
        rules = RULES
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Span]] = []
    for kind, pattern in rules:
        for m in pattern.finditer(low):
            a, b = m.span()
            if any(a < e and s < b for s, e in taken):
                continue
            span = _resolve(kind, _Cased(m, text), anchor)
            if span is not None:
                taken.append((a, b))
                found.append((a, span))
    return tuple(span for _, span in sorted(found, key=lambda x: x[0]))


@lru_cache(maxsize=4096)  # few texts hold a cue word; their sets of cues repeat
def _cued_rules(
    cues: frozenset[str], has_digit: bool, *, hyphen: bool = True
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The rules, in :data:`RULES`' order, that a text holding the cue words ``cues`` (and a
    digit, a hyphen or not) can match: those :data:`NEEDS` and :data:`HYPHEN_RULES` do not
    rule out."""
    chosen = set(UNCUED_RULES) if has_digit else set()
    for word in cues:
        chosen |= RULES_BY_CUE[word]
    if not has_digit:
        chosen -= DIGIT_RULES
    if not hyphen:
        chosen -= HYPHEN_RULES
    return tuple(RULES[at] for at in sorted(chosen))


class _Cased:
    """A match over the lower-cased text that hands back the original casing of its text."""

    def __init__(self, m: re.Match[str], original: str) -> None:
        self._m, self._original = m, original

    def groupdict(self) -> dict[str, str]:
        return self._m.groupdict()

    def group(self, i: int = 0) -> str:
        a, b = self._m.span(i)
        return self._original[a:b]


_IDIOMS = re.compile(
    r"\b(?:" + "|".join(re.escape(i) for i in NOT_TEMPORAL_IDIOMS) + r")\b", re.IGNORECASE
)


def is_temporal_question(text: str) -> bool:
    """Whether a query asks about time: a time word ("when", "ago", "last"...), a phrase such
    as "how long", or any date expression. Idioms made of time words ("out of date", "in
    time", "at the moment": :data:`NOT_TEMPORAL_IDIOMS`) are not time cues."""
    text = _IDIOMS.sub(" ", text)
    low = text.lower()
    if any(p in low for p in TEMPORAL_PHRASES):
        return True
    if TEMPORAL_WORDS.intersection(re.findall(r"[a-z]+", low)):
        return True
    return bool(find_spans(text, None))


def distance_days(a: Span, b: Span) -> int:
    """Days between two spans (0 when they overlap). A year-less span is compared with the
    same month and day in the other span's year (and the years on either side)."""
    if a.yearless or b.yearless:
        fixed, loose = (b, a) if a.yearless else (a, b)
        best = None
        for year in (fixed.start.year - 1, fixed.start.year, fixed.end.year, fixed.end.year + 1):
            moved = _move_year(loose, year)
            if moved is None:
                continue
            d = _gap(fixed.start, fixed.end, moved[0], moved[1])
            best = d if best is None else min(best, d)
        return best if best is not None else 10_000
    return _gap(a.start, a.end, b.start, b.end)


def _move_year(span: Span, year: int) -> tuple[date, date] | None:
    shift = year - span.start.year
    start = _safe_date(span.start.year + shift, span.start.month, span.start.day)
    end = _safe_date(span.end.year + shift, span.end.month, span.end.day)
    if start is None or end is None:
        return None
    return start, end


def _gap(s1: date, e1: date, s2: date, e2: date) -> int:
    if e1 < s2:
        return (s2 - e1).days
    if e2 < s1:
        return (s1 - e2).days
    return 0
