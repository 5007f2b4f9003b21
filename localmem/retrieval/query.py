"""The query of a search, parsed once: its words, index terms, stems and the times it names.

Every stage reads what it needs from here instead of parsing the query text again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from localmem.dates import Span, find_spans, is_temporal_question
from localmem.text import stem, terms, words


@dataclass
class ParsedQuery:
    """A query text and what is read from it (each part computed on first use)."""

    text: str
    now: datetime

    @cached_property
    def words(self) -> list[str]:
        """Its words, lower-cased, in order."""
        return words(self.text)

    @cached_property
    def word_set(self) -> frozenset[str]:
        """Its distinct words."""
        return frozenset(self.words)

    @cached_property
    def stems(self) -> frozenset[str]:
        """The Snowball stems of its words (stop-words included)."""
        return frozenset(stem(w) for w in self.words)

    @cached_property
    def terms(self) -> list[str]:
        """Its BM25 index terms (stop-words left out, stemmed)."""
        return terms(self.text)

    @cached_property
    def temporal(self) -> bool:
        """Whether it asks about time ("when", "how long", a date...)."""
        return is_temporal_question(self.text)

    @cached_property
    def spans(self) -> tuple[Span, ...]:
        """The times it names, relative ones resolved against ``now``."""
        return find_spans(self.text, self.now.date())
