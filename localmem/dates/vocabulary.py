"""The words of time: month, weekday, season and number names, the cues of a time question, and
:class:`Span`, the stretch of time a text refers to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
WEEKDAYS = {
    name: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}
#: the full names, in calendar order (other modules format dates and spot non-names with them)
MONTH_NAMES = tuple(next(n for n, i in MONTHS.items() if i == m) for m in range(1, 13))
WEEKDAY_NAMES = tuple(next(n for n, i in WEEKDAYS.items() if i == d) for d in range(7))
#: northern-hemisphere meteorological seasons (first month, last month); winter spans new year
SEASONS = {
    "spring": (3, 5),
    "summer": (6, 8),
    "fall": (9, 11),
    "autumn": (9, 11),
    "winter": (12, 2),
}
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
#: how far back a vague "recently" / "the other day" / "lately" reaches, in days
VAGUE_DAYS = {"the other day": 7, "recently": 21, "lately": 30, "these days": 30}

#: words that make a question about time (the seed's list, plus a few of the same kind)
TEMPORAL_WORDS = frozenset(
    (
        "when",
        "date",
        "dates",
        "time",
        "times",
        "day",
        "days",
        "week",
        "weeks",
        "weekend",
        "month",
        "months",
        "year",
        "years",
        "ago",
        "before",
        "after",
        "since",
        "until",
        "first",
        "last",
        "recently",
        "lately",
        "earlier",
        "later",
        "long",
        "during",
        "period",
        "yesterday",
        "today",
        "tomorrow",
        "tonight",
        "season",
    )
)
#: multi-word cues of a time question
TEMPORAL_PHRASES = ("how long", "how many years", "how many months", "how often", "what year")
#: idioms built of time words that ask nothing about time ("which packages are out of date"):
#: left out before a query is read for time cues
NOT_TEMPORAL_IDIOMS = (
    "out of date",
    "out-of-date",
    "up to date",
    "up-to-date",
    "in time",
    "on time",
    "at the moment",
    "from time to time",
    "all the time",
    "for the time being",
    "at the same time",
    "at a time",
    "one at a time",
    "time out",
    "first of all",
    "at first",
    "at last",
    "last but not least",
    "long story short",
    "before long",
    "as long as",
    "no longer",
    "in the long run",
)


@dataclass(frozen=True)
class Span:
    """A stretch of time a text refers to (both ends inclusive, whole days).

    Attributes:
        start: First day.
        end: Last day.
        text: The words it was read from.
        unit: ``day``, ``week``, ``weekend``, ``month``, ``season``, ``year`` or ``vague``.
        relative: Resolved against an anchor (``yesterday``) rather than stated outright.
        yearless: A month or day named without a year ("in June"): it recurs every year and
            matches that month of any year (``start``/``end`` hold the anchor's year).
    """

    start: date
    end: date
    text: str
    unit: str
    relative: bool = False
    yearless: bool = False

    @property
    def days(self) -> int:
        """Length in days."""
        return (self.end - self.start).days + 1
