"""The patterns of time expressions, and the cues each cannot match without (read by
:mod:`localmem.dates.spans`)."""

from __future__ import annotations

import re

from localmem.dates.vocabulary import MONTHS, SEASONS

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
STRONG_PREPS = frozenset(("in", "since", "until", "till", "during", "early", "late", "mid", "mid-"))
AMBIGUOUS_MONTHS = frozenset(("may", "mar"))


def _rx(*parts: str) -> re.Pattern[str]:
    return re.compile("".join(parts))


RULES: list[tuple[str, re.Pattern[str]]] = [
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


DIGIT = re.compile(r"\d")
LETTERS = re.compile(r"[a-z]+")
_MONTH_WORDS = frozenset(MONTHS)
_YEAR_PREPS = frozenset(("in", "of", "since", "until", "by", "during", "before", "after"))
#: what each rule cannot match without: (a digit?, one of these words). A rule's cue words are
#: whole words wherever it matches, so a text whose words hold none is skipped: most memories
#: lack them, and the test is far cheaper than a rule's pattern (the temporal stage reads some
#: two hundred memories a search). tests/test_dates.py checks the skipped rules find nothing.
NEEDS: dict[str, tuple[bool, frozenset[str]]] = {
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

#: the rules a cue word can open, by word (positions in :data:`RULES`, whose order decides which
#: of two overlapping matches wins); the rules with no cue word, which only a digit opens; and
#: those that need a digit. :func:`localmem.dates.spans.scan_spans` tries only the rules a
#: text's words and digits open, and none on a text with neither (most memories).
RULES_BY_CUE: dict[str, frozenset[int]] = {
    word: frozenset(at for at, (kind, _) in enumerate(RULES) if word in NEEDS[kind][1])
    for word in frozenset().union(*(cue for _, cue in NEEDS.values()))
}
CUE_WORDS = frozenset(RULES_BY_CUE)
UNCUED_RULES = frozenset(at for at, (kind, _) in enumerate(RULES) if not NEEDS[kind][1])
DIGIT_RULES = frozenset(at for at, (kind, _) in enumerate(RULES) if NEEDS[kind][0])
#: the rules that cannot match without a hyphen (an ISO date), though a digit opens them
HYPHEN_RULES = frozenset(at for at, (kind, _) in enumerate(RULES) if kind == "iso")
