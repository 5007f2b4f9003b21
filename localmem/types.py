"""The values localmem hands back: memories, sessions, search hits and their explanations."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

# The allowed values of the public API, each written once: the declaration (localmem.api), the
# config, the pipeline's checks, the CLI's choices and the MCP schemas' enums all read them.
Kind = Literal["thought", "message", "chunk", "fact", "procedure", "summary", "note"]
KINDS: tuple[str, ...] = get_args(Kind)
Level = Literal["episodic", "semantic", "meta"]
LEVELS: tuple[str, ...] = get_args(Level)
#: candidate generation: dense (vectors), lexical (BM25) or both fused
Mode = Literal["hybrid", "dense", "lexical"]
#: how the dense and lexical lists are merged
Fusion = Literal["rrf", "zscore", "minmax"]
#: query expansion
Expansion = Literal["off", "auto", "prf", "engine"]
#: the reranker
Reranker = Literal["off", "auto", "model-free", "engine"]
#: the MemInsight attribute stage
AttributeMode = Literal["off", "filter", "boost"]
#: the attribute axes it matches on
Axis = Literal["entities", "intent", "topic"]
#: MemInsight's retrieval strategy
Strategy = Literal["refined", "comprehensive"]


@dataclass(frozen=True)
class MemoryItem:
    """One stored memory, as it is now."""

    id: str
    kind: str
    content: str
    context: str | None
    level: str
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    created_at: datetime
    event_time: datetime | None
    updated_at: datetime
    metadata: dict[str, Any]
    content_hash: str
    deleted: bool = False
    #: the vector index's integer label: internal, never encoded (localmem.wire)
    label: int = field(default=-1, metadata={"wire": False})
    #: when it became true (default: its event time, else when it was stored)
    valid_from: datetime | None = None
    #: when it stopped being true (None: it still is)
    valid_to: datetime | None = None
    #: the id of the memory that replaced it, when one did
    superseded_by: str | None = None

    @property
    def is_current(self) -> bool:
        """Whether it is still true (not superseded)."""
        return self.valid_to is None

    def valid_at(self, when: datetime) -> bool:
        """Whether it was true at ``when`` (aware)."""
        start = self.valid_from or self.when
        return start <= when and (self.valid_to is None or when < self.valid_to)

    @property
    def text_for_embedding(self) -> str:
        """What the vector is computed from: the content, plus the evolved context if any."""
        return embedding_text(self.content, self.context)

    @property
    def when(self) -> datetime:
        """When it happened if known, else when it was stored."""
        return self.event_time or self.created_at

    @property
    def origin(self) -> str:
        """Where the memory came from, in a few words: a chunk's file, line and heading; a
        message's speaker and time; else its kind (and time when it happened at a known one).
        Two hits with the same boilerplate text are told apart by it."""
        meta = self.metadata or {}
        if meta.get("source"):
            where = str(meta["source"])
            if meta.get("line"):
                where += f":{meta['line']}"
            if meta.get("heading"):
                where += f" ({meta['heading']})"
            return where
        speaker = meta.get("speaker") or meta.get("name") or meta.get("role")
        at = f" {self.event_time:%Y-%m-%d %H:%M}" if self.event_time else ""
        if speaker:
            return f"{speaker}{at}"
        return f"{self.kind}{at}"


def embedding_text(content: str, context: str | None) -> str:
    """The text a memory's vector is computed from (context evolves, so it is included)."""
    return f"{content}\n{context}" if context else content


@dataclass(frozen=True)
class HistoryEvent:
    """One change of a memory: ADD, UPDATE, EVOLVE, REVERT, DELETE, RESTORE or PURGE."""

    id: int
    memory_id: str
    event: str
    field: str | None
    old_value: str | None
    new_value: str | None
    actor: str
    at: datetime
    # dataclasses.field: the name ``field`` is this class's attribute above
    info: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Session:
    """A session of thoughts (a reasoning episode), as in the Thoughtbox server."""

    id: str
    title: str
    status: str  # open | completed
    outcome: str | None  # success | failure once completed
    created_at: datetime
    completed_at: datetime | None
    user_id: str | None
    agent_id: str | None
    metadata: dict[str, Any]
    thought_count: int = 0


@dataclass(frozen=True)
class Thought:
    """A memory of kind ``thought`` with its place in the session."""

    memory: MemoryItem
    number: int
    branch_id: str | None = None
    branch_from: int | None = None
    revises: int | None = None


@dataclass
class StageReport:
    """What one stage of the read pipeline did, for the explanation of a search."""

    stage: str
    implementation: str
    candidates_in: int
    candidates_out: int
    ms: float
    notes: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        """One aligned line for a person, notes in words:
        ``rerank      model-free        2 in,     2 out     11.5 ms  scored 2, joined: none``."""
        base = (
            f"{self.stage:<11} {self.implementation:<16} {self.candidates_in:>5} in, "
            f"{self.candidates_out:>5} out {self.ms:>8.1f} ms"
        )
        extra = ", ".join(f"{k.replace('_', ' ')} {_in_words(v)}" for k, v in self.notes.items())
        return f"{base}  {extra}" if extra else base


def _in_words(value: Any) -> str:
    """A stage note's value as a person reads it (no Python reprs)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, dict):
        shown = [f"{k.replace('_', ' ')} {_in_words(v)}" for k, v in value.items() if v]
        return "(" + ", ".join(shown) + ")" if shown else "none"
    if isinstance(value, (list, tuple, set)):
        return "(" + ", ".join(_in_words(v) for v in value) + ")" if value else "none"
    return "none" if value is None else str(value)


@dataclass
class Hit:
    """One search result: the memory, its ranking score, the evidence per stage, and its
    relevance.

    ``score`` orders the hits of one search (the last stage's number; it means nothing across
    searches). ``relevance`` is the calibrated chance, 0 to 1, that the hit is what the query
    asked for, comparable across searches and stores (:mod:`localmem.retrieval.relevance`).
    """

    memory: MemoryItem
    score: float
    rank: int
    evidence: dict[str, float] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    relevance: float | None = None


@dataclass
class SearchResult:
    """The hits of a search plus the report of every stage that ran."""

    query: str
    hits: list[Hit]
    stages: list[StageReport]
    total_ms: float
    packed_tokens: int | None = None

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]

    def explain(self) -> str:
        """The per-stage explanation as text, one stage per line."""
        lines = [r.line() for r in self.stages]
        lines.append(f"total {self.total_ms:.1f} ms")
        for h in self.hits:  # the raw ranking score: orders this search only
            relevance = "-" if h.relevance is None else f"{h.relevance:.3f}"
            lines.append(
                f"hit {h.rank:>2}  {h.memory.id[:8]}  score {h.score:.4f}  relevance {relevance}"
            )
        return "\n".join(lines)


@dataclass
class IngestReport:
    """What an ingestion stored and skipped.

    ``skipped`` counts everything not stored (bad lines, duplicates, chunks already stored);
    ``duplicates`` the part of it that was already in the store (or earlier in the file).
    ``resolved`` is the file actually read when ``path`` is a symbolic link (else None).
    """

    path: str
    documents: int = 0
    memories: int = 0
    skipped: int = 0
    errors: list[str] | None = None
    duplicates: int = 0
    resolved: str | None = None
    #: with inference: how many facts were added, superseded an older one, or were known
    inferred: dict[str, int] | None = None
    #: chunks of an earlier version of the file that were deleted (the file had changed)
    replaced: int = 0
    #: the path the file's text was stored from before it moved there (nothing stored again)
    moved_from: str | None = None


#: the link kind from a consolidated memory to each memory it was made from
DERIVED_FROM = "derived_from"


@dataclass(frozen=True)
class Link:
    """A connection seen from one memory: the other end, which way it points, and why (the
    ``links`` table, :mod:`localmem.store.links`)."""

    other: str
    direction: str  # "to" (this memory linked the other) or "from" (the other linked this)
    kind: str
    weight: float
    reason: str | None
    created_at: datetime
