"""What mining yields: attributes of a text, their priority ranking, and the miner interface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from localmem.attributes.labels import LabelSet

if TYPE_CHECKING:
    import numpy as np

MODEL_FREE = "model-free"


@dataclass(frozen=True)
class Attribute:
    """One mined attribute.

    Attributes:
        axis: ``entities``, ``intent`` or ``topic``.
        value: the canonical value (an entity's normalised form, or a label name).
        rank: position within its axis (0 = the main intent/topic, the best entity).
        score: confidence in 0..1 (entities: relevance to the text).
        priority: position in the text's priority ranking over all axes (0 = most important).
        terms: an entity's stems (what entity matching compares); empty for labels.
    """

    axis: str
    value: str
    rank: int
    score: float
    priority: int | None = None
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mined:
    """The attributes of one text and how they were obtained."""

    attributes: tuple[Attribute, ...]
    miner: str
    label_set: str

    def axis(self, name: str) -> list[Attribute]:
        """The attributes of one axis, by rank."""
        return sorted((a for a in self.attributes if a.axis == name), key=lambda a: a.rank)

    def first(self, name: str) -> str | None:
        """The main value of an axis (None when there is none)."""
        values = self.axis(name)
        return values[0].value if values else None

    @property
    def priority(self) -> list[Attribute]:
        """The ranked attributes, most important first."""
        ranked = [(a.priority, a) for a in self.attributes if a.priority is not None]
        return [a for _, a in sorted(ranked, key=lambda pair: pair[0])]

    def summary(self) -> str:
        """One line: ``entities=redis, rate limiter; intent=design; topic=performance``."""
        parts = []
        for axis in ("entities", "intent", "topic"):
            values = [a.value for a in self.axis(axis)]
            if values:
                parts.append(f"{axis}={', '.join(values)}")
        return "; ".join(parts)


class Miner(Protocol):
    """What the job handler and the search stage need from a miner."""

    name: str
    labels: LabelSet

    def mine(self, text: str, *, vector: np.ndarray | None = None, query: bool = False) -> Mined:
        """The attributes of one text (``vector``: its embedding, when already known)."""
        ...

    def prepare(self, texts: Sequence[str]) -> None:
        """A hint that these texts come next (lets a miner batch work); may do nothing."""
        ...

    def prepared(self, text: str) -> bool:
        """Whether :meth:`prepare` has seen this text (True when there is nothing to prepare)."""
        ...


def prioritise(attributes: list[Attribute], importance: list[float]) -> tuple[Attribute, ...]:
    """Attributes with their priority positions: by importance, ties by axis order and rank."""
    order = sorted(
        range(len(attributes)),
        key=lambda i: (-importance[i], _AXIS_ORDER[attributes[i].axis], attributes[i].rank),
    )
    out = list(attributes)
    for position, i in enumerate(order):
        a = attributes[i]
        out[i] = Attribute(a.axis, a.value, a.rank, a.score, position, a.terms)
    return tuple(out)


_AXIS_ORDER = {"entities": 0, "topic": 1, "intent": 2}


@dataclass(frozen=True)
class StoredAttributes:
    """A memory's attributes as stored, with how and when they were mined (the ``attributes``
    table, :mod:`localmem.attributes.rows`)."""

    memory_id: str
    mined: Mined
    source_hash: str | None
    mined_at: Any

    def stale(self, content_hash: str) -> bool:
        """Whether the memory's text changed since it was mined."""
        return self.source_hash is not None and self.source_hash != content_hash
