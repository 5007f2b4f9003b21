"""What the reranker reads of each memory of its pool, column by column.

The model-free reranker weighs ~110 memories a search by a few of their fields (where they sit,
when, their text, whether an evolved context is joined to it, the speaker their metadata
names). Made from items where the store answers with items (PostgreSQL, or the rows not held
in memory), or from the columns of :class:`localmem.store.mirror.RowMirror` without making an
item: an item is an 18-field frozen dataclass, ~6 us to make, about a third of what the
default pipeline cost over plain hybrid search (docs/benchmarks.md, ``latency7``,
``latency8``). Either way the features read the same columns, one code path.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from localmem.types import MemoryItem


@dataclass(frozen=True)
class MemoryColumns:
    """Some memories' fields, one list each, in one order (a memory a position)."""

    labels: list[int]
    session_id: list[str | None]
    user_id: list[str | None]
    agent_id: list[str | None]
    #: when it happened if known, else when it was stored (:attr:`MemoryItem.when`)
    when: list[datetime]
    content: list[str]
    #: whether an evolved context is joined to the content (``bool(item.context)``)
    has_context: list[bool]
    #: the speaker its metadata names, as text (:func:`given_speaker`; None when none)
    speaker: list[str | None]

    def __len__(self) -> int:
        return len(self.labels)

    @classmethod
    def of_items(cls, items: Sequence[MemoryItem]) -> MemoryColumns:
        """The columns of these items, in their order."""
        return cls(
            [item.label for item in items],
            [item.session_id for item in items],
            [item.user_id for item in items],
            [item.agent_id for item in items],
            [item.when for item in items],
            [item.content for item in items],
            [bool(item.context) for item in items],
            [given_speaker(item.metadata) for item in items],
        )

    def take(self, at: Sequence[int]) -> MemoryColumns:
        """The memories at these positions, in this order."""
        return MemoryColumns(*([column[i] for i in at] for column in self._columns()))

    def _columns(self) -> list[list[Any]]:
        return [getattr(self, f.name) for f in fields(self)]


def in_order(labels: Sequence[int], parts: Sequence[MemoryColumns]) -> MemoryColumns:
    """The memories of ``parts`` in the order of ``labels`` (labels no part holds left out)."""
    if not parts:
        return MemoryColumns.of_items(())
    whole = MemoryColumns(
        *(
            list(itertools.chain(*columns))
            for columns in zip(*(p._columns() for p in parts), strict=True)
        )
    )
    at = {label: i for i, label in enumerate(whole.labels)}
    return whole.take([at[x] for x in labels if x in at])


def given_speaker(metadata: Mapping[str, Any]) -> str | None:
    """The speaker a memory's metadata names (a conversation's ingestion gives it), as text."""
    given = metadata.get("speaker")
    return str(given) if given else None


def speaker_of_json(metadata: str | None) -> str | None:
    """:func:`given_speaker` of metadata as the store keeps it (JSON text, or nothing)."""
    return given_speaker(json.loads(metadata)) if metadata else None
