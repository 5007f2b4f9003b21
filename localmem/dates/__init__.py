"""Finding dates in text: absolute ("7 May 2023"), relative ("last Saturday"), and vague ones.

A small, offline parser for the forms people use in conversation and in questions about it.
Relative expressions are resolved against an *anchor*: the moment the text was said (for a
memory, its own event time: "last Saturday" said on Thursday 25 May 2023 is 20 May 2023), or
the moment a question is asked. Everything here is pure: the anchor is always passed in.

What is not understood is left alone; a wrong date is worse than none, so ambiguous forms
("May" the verb, bare weekday names in the future tense, numeric 05/07 dates) are only read in
contexts that make them dates.
"""

from __future__ import annotations

from localmem.dates.spans import distance_days, find_spans, is_temporal_question
from localmem.dates.vocabulary import (
    MONTH_NAMES,
    MONTHS,
    NUMBERS,
    SEASONS,
    TEMPORAL_PHRASES,
    TEMPORAL_WORDS,
    VAGUE_DAYS,
    WEEKDAY_NAMES,
    WEEKDAYS,
    Span,
)

__all__ = [
    "MONTHS",
    "MONTH_NAMES",
    "NUMBERS",
    "SEASONS",
    "TEMPORAL_PHRASES",
    "TEMPORAL_WORDS",
    "VAGUE_DAYS",
    "WEEKDAYS",
    "WEEKDAY_NAMES",
    "Span",
    "distance_days",
    "find_spans",
    "is_temporal_question",
]
