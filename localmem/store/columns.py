"""What the reranker reads of each memory of its pool, column by column.

The model-free reranker weighs ~110 memories a search by a few of their fields (their session,
their text, whether an evolved context is joined to it, the speaker their metadata names;
where the turns of a chat stored without a session and the memories stored around them sit,
and when, as :class:`Placements`). Made from items where the store answers with items
(PostgreSQL, or the rows not held
in memory), or from the columns of :class:`localmem.store.mirror.RowMirror` without making an
item: an item is an 18-field frozen dataclass, ~6 us to make, about a third of what the
default pipeline cost over plain hybrid search (docs/benchmarks.md, ``latency7``,
``latency8``). Either way the features read the same columns, one code path.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any, Protocol, overload

import numpy as np

from localmem.store.records import Placement
from localmem.types import MemoryItem


@dataclass(frozen=True)
class MemoryColumns:
    """Some memories' fields, one list each, in one order (a memory a position)."""

    labels: list[int]
    session_id: list[str | None]
    #: a list, or :class:`RowTexts` (decoded where read: only the texts the postings do not
    #: answer for are, ``features.index_terms``)
    content: Sequence[str]
    #: whether an evolved context is joined to the content (``bool(item.context)``)
    has_context: list[bool]
    #: the speaker its metadata names, as text (:func:`given_speaker`; None when none)
    speaker: list[str | None]
    #: the "Name: " its content begins with (:func:`written_speaker`; None when none)
    written: list[str | None]

    def __len__(self) -> int:
        return len(self.labels)

    @classmethod
    def of_items(cls, items: Sequence[MemoryItem]) -> MemoryColumns:
        """The columns of these items, in their order."""
        return cls(
            [item.label for item in items],
            [item.session_id for item in items],
            [item.content for item in items],
            [bool(item.context) for item in items],
            [given_speaker(item.metadata) for item in items],
            [written_speaker(item.content) for item in items],
        )

    def head(self, n: int) -> MemoryColumns:
        """The first ``n`` memories."""
        return MemoryColumns(*(column[:n] for column in self._columns()))

    def take(self, at: Sequence[int]) -> MemoryColumns:
        """The memories at these positions, in this order."""
        return MemoryColumns(*(_taken(column, at) for column in self._columns()))

    def then(self, more: MemoryColumns) -> MemoryColumns:
        """These memories followed by ``more``'s (the reranker's pool and those that joined it)."""
        return MemoryColumns(
            *(
                _joined([mine, theirs])
                for mine, theirs in zip(self._columns(), more._columns(), strict=True)
            )
        )

    def _columns(self) -> list[Any]:  # a column each, of the field's type
        return [getattr(self, name) for name in _FIELDS]


_FIELDS = [f.name for f in fields(MemoryColumns)]


def in_order(labels: Sequence[int], parts: Sequence[MemoryColumns]) -> MemoryColumns:
    """The memories of ``parts`` in the order of ``labels`` (labels no part holds left out)."""
    if not parts:
        return MemoryColumns.of_items(())
    whole = MemoryColumns(
        *(_joined(columns) for columns in zip(*(p._columns() for p in parts), strict=True))
    )
    at = {label: i for i, label in enumerate(whole.labels)}
    order = [at[x] for x in labels if x in at]
    if order == list(range(len(whole))):  # the parts follow one another in this order already
        return whole  # (the reranker's pool and the memories that joined it after)
    return whole.take(order)


class TextSource(Protocol):
    """A text column that reads rows by their places (``mirror._Texts``)."""

    def at(self, rows: np.ndarray) -> list[str | None]:
        """The values of these rows, in their order."""
        ...


class RowTexts(Sequence[str]):
    """The texts of some rows of a column held in memory, decoded only where read.

    A pool's ~130 texts cost ~70 us a search to decode (``latency12``) and the features read
    few of them: the speaker comes as its own column (:attr:`MemoryColumns.written`), and the
    postings answer for the terms of most. Taking, slicing and joining parts of the same
    column keep the rows, not the texts."""

    __slots__ = ("rows", "source")

    def __init__(self, source: TextSource, rows: np.ndarray) -> None:
        self.source = source
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> RowTexts: ...
    def __getitem__(self, i: int | slice) -> str | RowTexts:
        if isinstance(i, slice):
            return RowTexts(self.source, self.rows[i])
        return str(self.source.at(self.rows[[i]])[0])

    def __iter__(self) -> Iterator[str]:
        return iter(self.source.at(self.rows))  # type: ignore[arg-type]  # content NOT NULL

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a sequence that compares by value

    def take(self, at: Sequence[int]) -> RowTexts:
        """The texts at these positions, in this order."""
        return RowTexts(self.source, self.rows[np.asarray(at, dtype=np.int64)])


def _taken(column: Any, at: Sequence[int]) -> Any:
    if isinstance(column, RowTexts):
        return column.take(at)
    return [column[i] for i in at]


def _joined(columns: Sequence[Any]) -> Any:
    """Columns one after the other: rows of one text column stay rows, else a list."""
    first = columns[0] if columns else None
    if isinstance(first, RowTexts) and all(
        isinstance(c, RowTexts) and c.source is first.source for c in columns
    ):
        return RowTexts(first.source, np.concatenate([c.rows for c in columns]))
    if len(columns) == 2 and isinstance(first, list) and isinstance(columns[1], list):
        return first + columns[1]  # a pool and the memories that joined it: one C-level copy
    return list(itertools.chain(*columns))


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class Placements:
    """Where some memories sit (``records.Placement``: session, user, agent, when, deleted), a
    column each, in the order the labels were asked (a label may be asked twice): the
    reranker's test of which memories stored next to each other are neighbours
    (``features.near_in_time``) reads them as arrays, not a tuple a memory. ``found`` is False
    where a label is unknown (its other values then mean nothing)."""

    found: np.ndarray  # bool
    session_id: np.ndarray  # object: str or None
    user_id: np.ndarray  # object
    agent_id: np.ndarray  # object
    #: when it happened if known, else when it was stored, as microseconds since the epoch
    when: np.ndarray  # int64
    deleted: np.ndarray  # bool

    @classmethod
    def unknown(cls, n: int) -> Placements:
        """The placements of ``n`` labels none of which is known (to be given with :meth:`put`)."""
        return cls(
            np.zeros(n, dtype=bool),
            np.full(n, None, dtype=object),
            np.full(n, None, dtype=object),
            np.full(n, None, dtype=object),
            np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=bool),
        )

    @classmethod
    def of(cls, labels: Sequence[int], placed: Mapping[int, Placement]) -> Placements:
        """The columns of ``labels`` from their placements by label (``records.Placement``
        tuples, aware times; a label without one is not found)."""
        out = cls.unknown(len(labels))
        for i, label in enumerate(labels):
            place = placed.get(label)
            if place is not None:
                out.put(i, place)
        return out

    def put(self, i: int, place: Placement) -> None:
        """Give the ``i``-th label this placement (a ``records.Placement``, its time aware)."""
        session, user, agent, when, deleted = place
        self.found[i] = True
        self.session_id[i], self.user_id[i], self.agent_id[i] = session, user, agent
        self.when[i], self.deleted[i] = micros_of(when), deleted


def micros_of(moment: datetime) -> int:
    """An aware moment as microseconds since the epoch (exact: integer arithmetic)."""
    return (moment - _EPOCH) // _MICROSECOND


def given_speaker(metadata: Mapping[str, Any]) -> str | None:
    """The speaker a memory's metadata names (a conversation's ingestion gives it), as text."""
    given = metadata.get("speaker")
    return str(given) if given else None


def speaker_of_json(metadata: str | None) -> str | None:
    """:func:`given_speaker` of metadata as the store keeps it (JSON text, or nothing)."""
    return given_speaker(json.loads(metadata)) if metadata else None


#: "Caroline: I went to..." : a speaker's name written before the words, as chat logs do
_PREFIX = re.compile(r"^\s*([A-Z][\w.'’-]*(?: [A-Z][\w.'’-]*){0,2}):\s")
_SPACE = r"\x09-\x0d\x1c-\x20"  # what ``\s`` matches among ASCII characters
_BEYOND = r"\x{80}-\x{10FFFF}"  # any character beyond ASCII
#: :data:`_PREFIX` in RE2's syntax (``pyarrow.compute``'s regexes) where what it reads is
#: ASCII: a match is ``_PREFIX``'s, the same name (its classes are ``_PREFIX``'s on ASCII)
WRITTEN_ASCII_RE2 = (
    rf"^[{_SPACE}]*(?P<name>[A-Z][A-Za-z0-9_.'-]*(?: [A-Z][A-Za-z0-9_.'-]*){{0,2}}):[{_SPACE}]"
)
#: :data:`WRITTEN_ASCII_RE2` with any non-ASCII character allowed wherever ``_PREFIX`` allows
#: one: it matches every text ``_PREFIX`` matches, so a text it does not match has no name
WRITTEN_LOOSE_RE2 = (
    rf"^[{_SPACE}{_BEYOND}]*[A-Z][A-Za-z0-9_.'{_BEYOND}-]*"
    rf"(?: [A-Z][A-Za-z0-9_.'{_BEYOND}-]*){{0,2}}:[{_SPACE}{_BEYOND}]"
)


@lru_cache(maxsize=100_000)
def written_speaker(text: str) -> str | None:
    """The "Name: " a text starts with (pure; kept: a memory is read again in every search
    whose pool it enters)."""
    found = _PREFIX.match(text)
    return found.group(1) if found else None
