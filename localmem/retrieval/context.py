"""The state one search carries from stage to stage."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem.dates import Span
from localmem.retrieval.options import SearchOptions
from localmem.retrieval.query import ParsedQuery
from localmem.store import memories, records
from localmem.store.columns import MemoryColumns, Placements, in_order
from localmem.store.lookup import find_sorted
from localmem.store.scores import Scores
from localmem.types import MemoryItem, StageReport

_LABEL = attrgetter("label")
_SCORE = attrgetter("score")

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel


@dataclass
class Candidate:
    """A memory still in the running: its current score and the evidence behind it."""

    label: int
    score: float = 0.0
    evidence: dict[str, float] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)


@dataclass
class Query:
    """A text searched for: the user's query, or an expansion of it with a lower weight."""

    text: str
    weight: float = 1.0
    source: str = "query"
    #: which retrievers search it (a bag of feedback terms is for BM25 only)
    retrievers: tuple[str, ...] = ("dense", "bm25")


@dataclass
class SearchContext:
    """What the stages read and change: queries, allowed labels, candidates, reports.

    ``kernel`` is the open store (its memories, indexes, embedder, config and engine);
    ``parsed`` is the query parsed once (words, terms, dates) for every stage.
    """

    kernel: Kernel
    query: str
    options: SearchOptions
    now: datetime
    queries: list[Query] = field(default_factory=list)
    allowed: np.ndarray | None = None  # labels the filters allow (None: no filter)
    candidates: dict[int, Candidate] = field(default_factory=dict)
    reports: list[StageReport] = field(default_factory=list)
    packed_tokens: int | None = None
    #: each hit's calibrated relevance, by label (the relevance stage gives it)
    relevance: dict[int, float] = field(default_factory=dict)
    _items: dict[int, MemoryItem] = field(default_factory=dict)
    _placed: dict[int, records.Placement | None] = field(default_factory=dict)  # see placement()
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)
    _allowed_vectors: np.ndarray | None = None
    #: the query's cosine with the memories its dense search returned (exact: the index computes
    #: it), so the reranker reads stored vectors only for the others
    cosines: dict[int, float] = field(default_factory=dict)
    _once: dict[tuple, Any] = field(default_factory=dict)
    _sessions: dict[str, list[int]] = field(default_factory=dict)  # see session_order()
    #: whether :meth:`items` also reads the dates the memories' texts state (the temporal
    #: stage weighs this search), and those it read (see :meth:`stated`)
    dates_wanted: bool = False
    _stated: dict[int, tuple[Span, ...]] = field(default_factory=dict)
    parsed: ParsedQuery = field(init=False)

    def __post_init__(self) -> None:
        self.parsed = ParsedQuery(self.query, self.now)

    def once(self, key: tuple, make: Callable[[], Any]) -> Any:
        """A value computed once per search (a retriever's list when expansion asks twice)."""
        if key not in self._once:
            self._once[key] = make()
        return self._once[key]

    def vector(self, text: str) -> np.ndarray:
        """The embedding of a query text (each text embedded once per search, and cached)."""
        vec = self._vectors.get(text)
        if vec is None:
            vec = self._vectors[text] = self.kernel.embedder.embed_query(text)
        return vec

    def give_vector(self, text: str, vector: np.ndarray) -> None:
        """The embedding of a query text, given by a caller that already has it."""
        self._vectors[text] = np.asarray(vector, dtype=np.float32)

    def bm25_scores(self, text: str) -> Scores:
        """The BM25 scores of a query text: its best labels and any label's score (scored once
        per text)."""
        return self.once(("bm25-scores", text), lambda: self.kernel.store.lexical.scored(text))

    def allowed_vectors(self) -> np.ndarray:
        """The stored vectors of the allowed labels, in their order (fetched once per search)."""
        if self._allowed_vectors is None:
            assert self.allowed is not None, "no filter: every label is allowed"
            self._allowed_vectors = self.kernel.store.vectors_of(self.allowed)
        return self._allowed_vectors

    def label_vectors(self, labels) -> np.ndarray:
        """Stored vectors of some labels (from the allowed set's copy when it has them)."""
        labels = np.asarray(labels, dtype=np.int64)
        if len(labels) == 0:
            return np.zeros((0, self.kernel.embedder.dim), dtype=np.float32)
        if self._allowed_vectors is not None and self.allowed is not None and len(self.allowed):
            at, found = find_sorted(self.allowed, labels)
            if bool(found.all()):
                return self._allowed_vectors[at]
        return self.kernel.store.vectors_of(labels)

    def items(self, labels, *, placed=()) -> dict[int, MemoryItem]:
        """Memories by label, fetched from the store once and kept for later stages.

        ``placed``: labels whose :meth:`placement` a later step reads, fetched in the same round
        trip (the reranker asks for the pool's rows and its neighbours' placement at once).
        """
        labels = labels.tolist() if isinstance(labels, np.ndarray) else [int(x) for x in labels]
        held = self._items  # each label made an int once (a search asks ~8 times for ~100)
        missing = [x for x in labels if x not in held]
        wanted = [x for x in map(int, placed) if x not in self._placed and x not in held]
        if missing or wanted:
            mirror = self.kernel.rows()  # held in memory where this process alone writes
            if mirror is not None:
                rows, places, dates = mirror.read(missing, wanted, dated=self.dates_wanted)
                self._stated.update(dates)
            else:
                rows, places = memories.by_labels_with_placement(self.kernel, missing, wanted)
            self._items.update(rows)
            self._placed.update({x: places.get(x) for x in wanted})
        return {x: held[x] for x in labels if x in held}

    def columns(self, labels: Iterable[int]) -> MemoryColumns:
        """What the reranker reads of these memories (unknown labels left out), in their order.

        From the rows held in memory without making items (a search makes items only for what
        it returns and what a stage reads whole: ~30 instead of ~140); else, and for memories
        this search has made items of already (a memory is read once per search), from items.
        """
        labels = [int(x) for x in labels]
        mirror = self.kernel.rows()
        held = self._items
        if mirror is None:
            items = self.items(labels)
            return MemoryColumns.of_items([items[x] for x in labels if x in items])
        made = [x for x in labels if x in held] if held else []  # none made yet: most pools
        if not made:
            return mirror.columns(labels)
        rest = mirror.columns([x for x in labels if x not in held])
        return in_order(labels, [rest, MemoryColumns.of_items([held[x] for x in made])])

    def stated(self, label: int) -> tuple[Span, ...] | None:
        """The dates a fetched memory's text states, as the store keeps them with its rows
        (:mod:`localmem.store.stated`, read with the row where :attr:`dates_wanted`); None
        where they are not kept: the caller parses the text."""
        return self._stated.get(int(label))

    def dated(self, labels: Iterable[int]) -> dict[int, tuple[datetime, tuple[Span, ...]]]:
        """``(when, the dates its text states)`` of the memories whose dates the store keeps with
        its rows (others left out: the caller reads their items and parses their texts), read
        without making items (the temporal stage weighs ~150 memories, ~50 of which no later
        stage reads)."""
        mirror = self.kernel.rows()
        if mirror is None:
            return {}
        # their placement is not kept for later: a later step rarely asks where these sit,
        # and reading it cost more than the rest of this read
        moments, dates = mirror.dated([int(x) for x in labels])
        self._stated.update(dates)
        return {x: (moments[x], spans) for x, spans in dates.items() if x in moments}

    def rows_held(self) -> bool:
        """Whether this search reads memories from the rows held in memory
        (:mod:`localmem.store.mirror`), where a read costs no round trip to the database."""
        return self.kernel.rows() is not None

    def held(self, label: int) -> MemoryItem | None:
        """A memory this search has already fetched (None when it has not)."""
        return self._items.get(int(label))

    def placement(self, labels: Iterable[int]) -> dict[int, records.Placement]:
        """Where memories sit, ``(session_id, user_id, agent_id, when, deleted)`` by label
        (unknown labels left out), from rows already fetched when there are."""
        self.items((), placed=labels)
        out: dict[int, records.Placement] = {}
        for x in (int(y) for y in labels):
            item = self._items.get(x)
            place = self._placed.get(x)
            if item is not None:
                out[x] = records.placement_of(item)
            elif place is not None:
                out[x] = place
        return out

    def placements(self, labels: np.ndarray) -> Placements:
        """:meth:`placement` of these labels as columns in their order (a label may be asked
        twice): from the rows held in memory without a tuple a memory, a memory this search
        has read answered as it was read."""
        mirror = self.kernel.rows()
        if mirror is None:
            asked = labels.tolist()
            return Placements.of(asked, self.placement(asked))
        out = mirror.placements(labels)
        held = self._items
        if not held:  # no item made yet (most pools' first read): nothing to answer from
            return out
        for i, label in enumerate(labels.tolist()):
            item = held.get(label)
            if item is not None:
                out.put(i, records.placement_of(item))
        return out

    def session_order(self, sessions: Iterable[str]) -> dict[str, list[int]]:
        """The labels of the live memories of each session, in the session's order (each
        session read once per search: the reranker asks again when its pool grows)."""
        sessions = list(sessions)
        missing = sorted({s for s in sessions if s not in self._sessions})
        if missing:
            for s in missing:
                self._sessions[s] = []
            mirror = self.kernel.rows()
            order = (
                mirror.session_order(missing)
                if mirror is not None
                else records.session_order(self.kernel.db, missing)
            )
            for label, session in order:
                self._sessions[session].append(label)
        return {s: self._sessions[s] for s in sessions}

    def ranked(self, *, leaving_out: AbstractSet[int] = frozenset()) -> list[Candidate]:
        """Candidates best first (ties broken by label for a stable order); ``leaving_out``:
        labels left out (the others in the same order, fewer sorted).

        Two sorts on plain attributes instead of one on a ``(-score, label)`` tuple: a sort
        keeps the order of equal keys (``reverse`` too), so equal scores stay in label order,
        the same list; ~40% less time (a search ranks its ~150 candidates ~5 times)."""
        cands: Iterable[Candidate] = self.candidates.values()
        if leaving_out:
            cands = [c for c in cands if c.label not in leaving_out]
        by_label = sorted(cands, key=_LABEL)
        return sorted(by_label, key=_SCORE, reverse=True)

    def keep_top(self, n: int) -> None:
        """Drop all but the ``n`` best candidates."""
        if len(self.candidates) > n:
            self.candidates = {c.label: c for c in self.ranked()[:n]}
