"""The facade's reading half: memories by id, lists, history, links, counts, and search."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from localmem import validate
from localmem.api import Time
from localmem.errors import InputError
from localmem.retrieval.pipeline import search as run_search
from localmem.retrieval.stages import StageSpec
from localmem.store import dump, memories
from localmem.store.kernel import Kernel
from localmem.store.links import links_of
from localmem.types import (
    AttributeMode,
    Axis,
    Expansion,
    Fusion,
    HistoryEvent,
    Kind,
    Level,
    Link,
    MemoryItem,
    Mode,
    Reranker,
    SearchResult,
    Strategy,
)


class Reading:
    """Reading and searching memories (mixed into :class:`localmem.Memory`)."""

    kernel: Kernel
    stages: tuple[StageSpec, ...]

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The search stages of this composition, in the order they run."""
        return tuple(stage.name for stage in self.stages)

    @validate.arguments_checked
    def get(self, memory_id: str, *, include_deleted: bool = False) -> MemoryItem:
        """The memory with this id (or a unique prefix of it).

        Raises:
            NotFoundError: no such memory (or it is deleted and ``include_deleted`` is False).
        """
        return memories.get(self.kernel, memory_id, include_deleted=include_deleted)

    @validate.arguments_checked
    def get_many(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Memories by exact id, in the order asked (unknown ids raise NotFoundError)."""
        if isinstance(ids, str) or not isinstance(ids, Sequence):
            raise InputError("get_many takes a list of ids")
        return memories.get_many(self.kernel, [validate.identifier(i, "a memory id") for i in ids])

    @validate.arguments_checked
    def list(
        self,
        *,
        kind: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        limit: int = 100,
        offset: int = 0,
        include_deleted: bool = False,
        in_session: bool | None = None,
        oldest_first: bool = False,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[MemoryItem]:
        """Memories, newest first (``oldest_first``: in event-time order), optionally of one
        kind / session / user / agent, with some top-level metadata values;
        ``in_session=False`` keeps memories outside any session.

        Raises:
            InputError: a bad kind, id, ``limit`` (1 to a million) or ``offset`` (0 or more).
        """
        if kind is not None:
            validate.kind(kind)
        validate.scope_id(session_id, "session_id")
        validate.scope_id(user_id, "user_id")
        validate.scope_id(agent_id, "agent_id")
        wanted = validate.metadata_filter(metadata)
        validate.positive_int(limit, "limit", maximum=validate.MAX_LIMIT)
        validate.non_negative_int(offset, "offset")
        return memories.select(
            self.kernel,
            kind=kind,
            session_id=session_id,
            user_id=user_id,
            agent_id=agent_id,
            metadata=wanted,
            limit=limit,
            offset=offset,
            include_deleted=include_deleted,
            in_session=in_session,
            oldest_first=oldest_first,
        )

    @validate.arguments_checked
    def users(self, *, limit: int = 200) -> builtins.list[tuple[str, int]]:
        """(user id, how many memories outside sessions) for every user scope, by id."""
        validate.positive_int(limit, "limit", maximum=validate.MAX_LIMIT)
        return memories.users(self.kernel, limit=limit)

    @validate.arguments_checked
    def export(self) -> builtins.list[dict[str, Any]]:
        """The whole store as export lines, read as one moment (see :mod:`localmem.store.dump`)."""
        return dump.dump(self.kernel.store)

    @validate.arguments_checked
    def links(self, memory_id: str) -> builtins.list[Link]:
        """Every link touching a memory (evolution, consolidation...), newest first."""
        item = self.get(memory_id, include_deleted=True)
        return links_of(self.kernel.db, item.id)

    @validate.arguments_checked
    def thought_of(self, memory_id: str) -> dict[str, Any] | None:
        """Where a memory stands in its session (number, branch, revises), or None."""
        from localmem import sessions

        return sessions.thought_of(self.kernel, _memory_id(memory_id))

    @validate.arguments_checked
    def attributes_of(self, memory_ids: Sequence[str]) -> dict[str, Any]:
        """The attributes mined for some memories (never-mined ones left out)."""
        from localmem import attributes

        if isinstance(memory_ids, (str, bytes)) or not isinstance(memory_ids, Sequence):
            raise InputError("memory_ids must be a list of memory ids")
        return attributes.stored(self.kernel, [_memory_id(x) for x in memory_ids])

    @validate.arguments_checked
    def sources_of(self, memory_ids: Sequence[str]) -> dict[str, builtins.list[str]]:
        """For each consolidated (semantic, meta) memory, the memories it came from."""
        from localmem.consolidation import sources_of

        if isinstance(memory_ids, (str, bytes)) or not isinstance(memory_ids, Sequence):
            raise InputError("memory_ids must be a list of memory ids")
        return sources_of(self.kernel, [_memory_id(x) for x in memory_ids])

    @validate.arguments_checked
    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        """Every change of a memory, oldest first (ADD, UPDATE, EVOLVE, DELETE, ...)."""
        return memories.history(self.kernel, memory_id)

    @validate.arguments_checked
    def count(self, *, include_deleted: bool = False, user_id: str | None = None) -> int:
        """How many memories the store holds (of one user)."""
        validate.scope_id(user_id, "user_id")
        return memories.count(self.kernel, include_deleted=include_deleted, user_id=user_id)

    @validate.arguments_checked
    def search(
        self,
        query: str,
        *,
        k: int = 5,
        mode: Mode | None = None,
        fusion: Fusion | None = None,
        rrf_k: int | None = None,
        dense_weight: float | None = None,
        candidates: int | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        kinds: Sequence[Kind] | None = None,
        levels: Sequence[Level] | None = None,
        since: Time | None = None,
        until: Time | None = None,
        metadata: Mapping[str, Any] | None = None,
        as_of: Time | None = None,
        expand: Expansion | None = None,
        attributes: AttributeMode | None = None,
        min_matches: int | None = None,
        axes: Sequence[Axis] | None = None,
        priority: bool | None = None,
        strategy: Strategy | None = None,
        temporal: bool | None = None,
        links: bool | None = None,
        rerank: Reranker | None = None,
        budget_tokens: int | None = None,
        min_relevance: float | None = None,
        now: Time | None = None,
    ) -> SearchResult:
        """Find memories for a query (:meth:`localmem.api.MemoryAPI.search` says what each
        option does; one left out, or None, takes the store's setting).

        Returns:
            The hits, best first, each with its score and per-stage evidence, plus a report of
            every stage (candidates in/out, milliseconds, implementation).
        """
        options = {
            name: value
            for name, value in locals().items()
            if name not in ("self", "query", "k") and value is not None
        }
        return run_search(self.kernel, query, stages=self.stages, k=k, **options)


def _memory_id(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"a memory id is a non-empty string, not {value!r}")
    return validate.no_nul(validate.no_surrogates(value, "a memory id"), "a memory id")
