"""Reading times out of text: the patterns, and resolving what they match against an anchor."""

from __future__ import annotations

import re
from datetime import date, timedelta
from functools import lru_cache

from localmem.dates.vocabulary import (
    MONTHS,
    NUMBERS,
    SEASONS,
    TEMPORAL_PHRASES,
    TEMPORAL_WORDS,
    VAGUE_DAYS,
    WEEKDAYS,
    Span,
)

# -- the patterns ------------------------------------------------------------------------------
_MONTH = (
    r"(?P<{n}>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"(?P<{n}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{n}>(?:19|20)\d\d)"
_WEEKDAY = (
    r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
)
_NUM = (
    r"(?P<num>\d+|a couple(?: of)?|couple of|a few|few|several|an?|one|two|three|four|five"
    r"|six|seven|eight|nine|ten|eleven|twelve)"
)
_UNIT = r"(?P<unit>days?|weeks?|weekends?|months?|years?)"
_SHIFTABLE = (
    r"(?P<what>week|weekend|month|year|spring|summer|fall|autumn|winter"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)"
)
#: prepositions after which a bare month name is a month (not "may" the verb, "mar" to spoil)
_MONTH_PREPS = r"in|of|since|until|till|by|during|early|late|mid|mid-|around|before|after"
_STRONG_PREPS = frozenset(
    ("in", "since", "until", "till", "during", "early", "late", "mid", "mid-")
)
_AMBIGUOUS_MONTHS = frozenset(("may", "mar"))


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("".join(parts))


_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("iso", _rx(r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]?\d)-(?P<d>[0-3]?\d)\b")),
    (
        "day_month_year",
        _rx(
            r"\b(?:the\s+)?",
            _DAY.format(n="d"),
            r"(?:\s+of)?\s+",
            _MONTH.format(n="m"),
            r",?\s+",
            _YEAR.format(n="y"),
            r"\b",
        ),
    ),
    (
        "month_day_year",
        _rx(
            r"\b",
            _MONTH.format(n="m"),
            r"\s+(?:the\s+)?",
            _DAY.format(n="d"),
            r",?\s+",
            _YEAR.format(n="y"),
            r"\b",
        ),
    ),
    (
        "month_year",
        _rx(r"\b", _MONTH.format(n="m"), r",?\s+(?:of\s+)?", _YEAR.format(n="y"), r"\b"),
    ),
    (
        "day_month",
        _rx(r"\b(?:the\s+)?", _DAY.format(n="d"), r"(?:\s+of)?\s+", _MONTH.format(n="m"), r"\b"),
    ),
    (
        "month_day",
        _rx(r"\b", _MONTH.format(n="m"), r"\s+(?:the\s+)?", _DAY.format(n="d"), r"\b(?!:)"),
    ),
    (
        "season_year",
        _rx(r"\b(?P<s>spring|summer|fall|autumn|winter)\s+(?:of\s+)?", _YEAR.format(n="y"), r"\b"),
    ),
    ("day_before_yesterday", _rx(r"\b(?:the\s+)?day\s+before\s+yesterday\b")),
    ("ago", _rx(r"\b", _NUM, r"\s+", _UNIT, r"\s+(?:ago|back)\b")),
    ("shifted", _rx(r"\b(?P<dir>last|this|next|past|coming)\s+", _SHIFTABLE, r"\b")),
    ("yesterday", _rx(r"\b(?:yesterday|last\s+night)\b")),
    ("today", _rx(r"\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b")),
    ("tomorrow", _rx(r"\btomorrow\b")),
    ("vague", _rx(r"\b(?:the\s+other\s+day|recently|lately|these\s+days)\b")),
    ("on_weekday", _rx(r"\bon\s+", _WEEKDAY, r"\b")),
    (
        "month_alone",
        _rx(
            r"\b(?P<prep>", _MONTH_PREPS, r"|last|this|next)\s+", _MONTH.format(n="m"), r"(?![\w-])"
        ),
    ),
    (
        "year",
        _rx(
            r"\b(?P<prep>in|of|since|until|by|during|before|after|around|year)\s+",
            _YEAR.format(n="y"),
            r"\b",
        ),
    ),
]


_DIGIT = re.compile(r"\d")
_LETTERS = re.compile(r"[a-z]+")
_MONTH_WORDS = frozenset(MONTHS)
_YEAR_PREPS = frozenset(("in", "of", "since", "until", "by", "during", "before", "after"))
#: what each rule cannot match without: (a digit?, one of these words). A rule's cue words are
#: whole words wherever it matches, so a text whose words hold none is skipped: most memories
#: lack them, and the test is far cheaper than a rule's pattern (the temporal stage reads some
#: two hundred memories a search). tests/test_dates.py checks the skipped rules find nothing.
_NEEDS: dict[str, tuple[bool, frozenset[str]]] = {
    "iso": (True, frozenset()),
    "day_month_year": (True, _MONTH_WORDS),
    "month_day_year": (True, _MONTH_WORDS),
    "month_year": (True, _MONTH_WORDS),
    "day_month": (True, _MONTH_WORDS),
    "month_day": (True, _MONTH_WORDS),
    "season_year": (True, frozenset(SEASONS)),
    "day_before_yesterday": (False, frozenset(("yesterday",))),
    "ago": (False, frozenset(("ago", "back"))),
    "shifted": (False, frozenset(("last", "this", "next", "past", "coming"))),
    "yesterday": (False, frozenset(("yesterday", "night"))),
    "today": (False, frozenset(("today", "tonight", "this"))),
    "tomorrow": (False, frozenset(("tomorrow",))),
    "vague": (False, frozenset(("other", "recently", "lately", "these"))),
    "on_weekday": (False, frozenset(("on",))),
    "month_alone": (False, _MONTH_WORDS),
    "year": (True, _YEAR_PREPS | {"around", "year"}),
}


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


def _resolve(kind: str, m: re.Match[str], anchor: date | None) -> Span | None:
    g = m.groupdict()
    text = m.group(0)
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
        name = g["m"].rstrip(".")
        month = MONTHS[name]
        prep = g["prep"]
        if name in _AMBIGUOUS_MONTHS and prep not in _STRONG_PREPS:
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
    if kind == "year":
        y = int(g["y"])
        return Span(date(y, 1, 1), date(y, 12, 31), text, "year")
    if anchor is None:
        return None
    # relative forms from here on
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
    if kind == "shifted":
        return _shifted(g["dir"], g["what"], text, anchor)
    if kind == "on_weekday":
        return _weekday(WEEKDAYS[g["wd"]], -1, text, anchor)
    return None


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
    """:func:`find_spans`, not cached; ``quick`` skips the rules whose cue (:data:`_NEEDS`) the
    text lacks, else every rule is tried (what the tests compare the quick scan with)."""
    low = text.lower()
    if len(low) != len(text):  # a few characters change length when lower-cased
        text = low
    has_digit = bool(_DIGIT.search(low))
    words = set(_LETTERS.findall(low)) if quick else set()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Span]] = []
    for kind, pattern in _RULES:
        if quick:
            digit, cue = _NEEDS[kind]
            if (digit and not has_digit) or (cue and words.isdisjoint(cue)):
                continue
        for m in pattern.finditer(low):
            a, b = m.span()
            if any(a < e and s < b for s, e in taken):
                continue
            span = _resolve(kind, _Cased(m, text), anchor)
            if span is not None:
                taken.append((a, b))
                found.append((a, span))
    return tuple(span for _, span in sorted(found, key=lambda x: x[0]))


class _Cased:
    """A match over the lower-cased text that hands back the original casing of its text."""

    def __init__(self, m: re.Match[str], original: str) -> None:
        self._m, self._original = m, original

    def groupdict(self) -> dict[str, str]:
        return self._m.groupdict()

    def group(self, i: int = 0) -> str:
        a, b = self._m.span(i)
        return self._original[a:b]


def is_temporal_question(text: str) -> bool:
    """Whether a query asks about time: a time word ("when", "ago", "last"...), a phrase such
    as "how long", or any date expression."""
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
