"""What consolidation reads and what it reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

# the link kind to each memory a consolidated one was made from: defined with Link, so that
# `localmem show` reads it without importing this package
from localmem.types import DERIVED_FROM as DERIVED_FROM

#: the link kind from a meta memory to the one it replaced (same key, new content)
SUPERSEDES = "supersedes"
#: metadata key of every memory consolidation writes
META_KEY = "consolidation"


@dataclass(frozen=True)
class Source:
    """An episodic memory as consolidation reads it."""

    id: str
    label: int
    content: str
    session_id: str | None
    event_time: datetime | None
    speaker: str | None
    vector: np.ndarray = field(repr=False, compare=False)


@dataclass(frozen=True)
class KnownFact:
    """A semantic memory an earlier run wrote (with its sources)."""

    id: str
    content: str
    context: str | None
    content_hash: str
    vector: np.ndarray = field(repr=False, compare=False)
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class KnownMeta:
    """A meta memory an earlier run wrote, by its key."""

    id: str
    label: int
    key: str
    content: str


@dataclass(frozen=True)
class Derived:
    """A memory a run wrote (or would write, in a dry run)."""

    id: str
    level: str
    content: str
    context: str | None
    sources: tuple[str, ...]
    served_by: str


@dataclass(frozen=True)
class ConsolidationReport:
    """What :func:`localmem.consolidation.consolidate` did.

    Attributes:
        run_id: The recorded run (None for a dry run or when there was nothing to write).
        episodic: Live episodic memories in the scope.
        pending: Those not consolidated by an earlier run.
        clusters: Clusters big enough to make a fact from.
        semantic: New semantic memories.
        extended: Links added to facts of earlier runs (a duplicate fact or a memory that joined).
        meta: New meta memories.
        replaced: Meta memories of earlier runs that a new version replaced (soft-deleted).
        served_by: The implementations that made the facts (``model-free``, ``llama:...``).
        warnings: Clusters the engine could not consolidate, and why.
    """

    user_id: str | None
    agent_id: str | None
    dry_run: bool
    run_id: int | None
    episodic: int
    pending: int
    clusters: int
    semantic: tuple[Derived, ...]
    extended: int
    meta: tuple[Derived, ...]
    replaced: tuple[str, ...]
    served_by: tuple[str, ...]
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the run wrote (or, dry, would write) anything."""
        return bool(self.semantic or self.meta or self.extended or self.replaced)

    def summary(self) -> str:
        """One line for people."""
        verb = "would write" if self.dry_run else "wrote"
        return (
            f"{self.episodic} episodic ({self.pending} not yet consolidated) -> "
            f"{self.clusters} clusters; {verb} {len(self.semantic)} semantic, "
            f"{len(self.meta)} meta; {self.extended} links to earlier facts, "
            f"{len(self.replaced)} meta replaced ({', '.join(self.served_by) or 'nothing run'}; "
            f"{self.seconds:.1f} s)"
        )
