"""Who said a memory, and whom a query names (pure functions the reranker's features use).

:func:`written_speaker` (the "Name: " rule) lives with the columns the store reads
(:mod:`localmem.store.columns`), which apply it to rows held in memory without decoding them."""

from __future__ import annotations

from collections.abc import Set
from functools import lru_cache

from localmem.store.columns import given_speaker, written_speaker
from localmem.text import words
from localmem.types import MemoryItem

__all__ = ["named_speakers", "speaker_in", "speaker_of", "written_speaker"]


def named_speakers(query: str | Set[str], speakers: set[str]) -> set[str]:
    """The speakers a query (its text, or its set of words) names by first name (pure)."""
    said = set(words(query)) if isinstance(query, str) else query
    return {s for s in speakers if s and _first_word(s) in said}


@lru_cache(maxsize=10_000)
def _first_word(name: str) -> str | None:
    """The first word of a speaker's name (pure; kept: a search asks of each speaker of its pool,
    and the same few speakers come back search after search)."""
    found = words(name)
    return found[0] if found else None


def speaker_of(item: MemoryItem) -> str | None:
    """Who said a memory: its ``speaker`` field, else a "Name: ..." prefix of its text."""
    return speaker_in(given_speaker(item.metadata), item.content)


def speaker_in(given: str | None, text: str) -> str | None:
    """Who said a memory whose metadata names ``given`` (:func:`given_speaker`) and whose text
    is ``text``: the speaker given, else a "Name: ..." prefix of the text."""
    return given or written_speaker(text)
