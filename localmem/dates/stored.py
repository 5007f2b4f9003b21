"""A memory's stated dates as a store keeps them (derived data, see
:mod:`localmem.store.stated`): the spans :func:`localmem.dates.find_spans` finds, as one line of
text, and back.

:data:`DATES_VERSION` names the parser that made them: every change to what ``find_spans``
returns for some text (a rule, a word list, the resolution of a relative time) must raise it, so
that dates kept by an older parser are no longer read (they are parsed again, as without any).
"""

from __future__ import annotations

import json
from datetime import date
from functools import lru_cache

from localmem.dates.vocabulary import Span

#: the version of the date parser whose spans a store keeps (raise it with any change to them)
DATES_VERSION = 1


def encode_spans(spans: tuple[Span, ...]) -> str:
    """The spans as one line ("" for none, which is most memories)."""
    if not spans:
        return ""
    return json.dumps(
        [
            [s.start.isoformat(), s.end.isoformat(), s.text, s.unit, s.relative, s.yearless]
            for s in spans
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )


@lru_cache(maxsize=8192)
def decode_spans(line: str) -> tuple[Span, ...]:
    """The spans :func:`encode_spans` wrote (spans are frozen: one tuple serves every search)."""
    if not line:
        return ()
    return tuple(
        Span(date.fromisoformat(a), date.fromisoformat(b), text, unit, relative, yearless)
        for a, b, text, unit, relative, yearless in json.loads(line)
    )
