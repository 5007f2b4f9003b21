"""The public API of localmem, declared once: what a client may call, in process or served.

:class:`MemoryAPI` (and :class:`ProceduresAPI`, its ``procedures``) is the one place where an
operation is written: its name, its parameters with their types and defaults, a line on each
(the ``Args`` of the docstring; see :data:`SHARED` for the ones many operations take), whether
it writes and the errors it raises (:func:`operation`). :class:`localmem.Memory` implements
it in process, :class:`localmem.remote.RemoteMemory` over HTTP; the server's method table,
the MCP tools and the CLI's search options are derived from it, and ``tests/test_contract.py``
holds every surface to it. :class:`ServedAPI` adds what only a server offers (reading a file on
the server's machine). docs/architecture.md ("The contract") says how an operation is added.

Cheap to import on purpose (the CLI starts with it): the standard library and
:mod:`localmem.types` only; the types of results are named as strings and resolved when
needed (:mod:`localmem.api.contract`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, Union

from localmem.errors import (
    EngineUnavailableError,
    InputError,
    LocalMemError,
    NotFoundError,
    SchemaError,
    StoreReadOnlyError,
)
from localmem.types import (
    AttributeMode,
    Axis,
    Expansion,
    Fusion,
    Kind,
    Level,
    Mode,
    Reranker,
    Strategy,
)

if TYPE_CHECKING:
    from localmem.attributes.rows import StoredAttributes
    from localmem.consolidation.model import ConsolidationReport
    from localmem.infer.apply import Applied
    from localmem.procedures.model import (
        Procedure,
        ProcedureEvent,
        ProcedureMatch,
        ProcedureVersion,
        RecordResult,
    )
    from localmem.store.kernel import JobsReport
    from localmem.types import (
        HistoryEvent,
        IngestReport,
        Link,
        MemoryItem,
        SearchResult,
        Session,
        Thought,
    )

#: a moment: an aware datetime, an ISO 8601 text with its UTC offset, or seconds since 1970
Time = Union[datetime, str, float]  # noqa: UP007 (a runtime alias; `|` on datetime needs 3.10)
#: how a time is written where it travels as text (appended to every Time parameter's line)
TIME_FORMAT = (
    "a time: ISO 8601 with a UTC offset such as 2024-05-01T09:30:00+00:00 (Z for UTC), "
    "or seconds since 1970-01-01 UTC"
)
#: mining of attributes on add (MemInsight)
MineMode = Literal["off", "inline", "deferred"]
Outcome = Literal["success", "failure"]
SessionStatus = Literal["open", "completed"]
ProcedureLevel = Literal["concrete", "abstract", "hybrid"]
ProcedureStatus = Literal["active", "retired"]
Within = Literal["scope", "session"]
Implementation = Literal["auto", "model", "model-free"]
Chunker = Literal["paragraph", "fixed", "recursive"]

#: descriptions of the parameters many operations share, used where an operation's own
#: ``Args`` leave one out (an operation's own line wins)
SHARED = {
    "memory_id": "the memory's id (or a unique prefix of it, 4 characters or more)",
    "memory_ids": "memory ids",
    "user_id": "scope: the user the memory belongs to",
    "agent_id": "scope: the agent that wrote it",
    "session_id": "scope: the session (conversation or reasoning episode) it belongs to",
    "kind": "what the memory is",
    "event_time": "when it happened (default: when it is stored)",
    "metadata": "any JSON object kept with the memory",
    "context": "a description of the memory's context (evolution rewrites it)",
    "level": "episodic (what happened), semantic (a consolidated fact) or meta (a pattern)",
    "mine": "attribute mining: off, inline (before returning) or deferred (a background job); "
    "default: the store's setting",
    "evolve": "let the memory evolve its neighbours' context (A-Mem); default: the store's",
    "procedure_id": "the procedure's id (or a unique prefix of it)",
    "task": "the task about to be solved, in a sentence",
    "task_type": "the task's type if known ('any' ignores types; default: classified)",
    "limit": "at most this many",
}

F = TypeVar("F", bound=Callable[..., Any])


def operation(*, writes: bool, raises: tuple[type[LocalMemError], ...] = ()) -> Callable[[F], F]:
    """Mark a method of the declaration as an operation: whether it may change the store (the
    server wakes its job worker after one that does) and the errors it raises besides
    ``InputError`` (which every operation raises on bad arguments)."""

    def mark(fn: F) -> F:
        fn.__api__ = {"writes": writes, "raises": (InputError, *raises)}  # type: ignore[attr-defined]
        return fn

    return mark


def local(fn: F) -> F:
    """Mark a method of the declaration that a client computes itself (no request)."""
    fn.__api_local__ = True  # type: ignore[attr-defined]
    return fn


class ProceduresAPI(Protocol):
    """``memory.procedures``: procedural memory (Mem^p), procedures abstracted from successful
    sessions of thoughts, found for a new task, revised when they fail."""

    @operation(writes=False)
    def find(
        self,
        task: str,
        *,
        threshold: float | None = None,
        task_type: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ProcedureMatch | None:
        """The best procedure for a task if its score reaches the threshold, else None.

        Args:
            threshold: least score (default: the store's procedures.threshold).
            user_id: only the procedures of this user.
            agent_id: only the procedures of this agent.
        """

    @operation(writes=False)
    def matches(
        self,
        task: str,
        *,
        k: int = 10,
        task_type: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[ProcedureMatch]:
        """Active procedures scored for a task, best first, with no threshold applied.

        Args:
            k: how many to return.
            user_id: only the procedures of this user.
            agent_id: only the procedures of this agent.
        """

    @operation(writes=True, raises=(NotFoundError, SchemaError))
    def record(
        self,
        procedure_id: str,
        success: bool,
        trace: Sequence[str] | None = None,
        *,
        task: str | None = None,
        session_id: str | None = None,
        note: str | None = None,
        reflect: bool = True,
    ) -> RecordResult:
        """Record one use of a procedure; a failure revises it into a new version.

        Args:
            success: whether the task succeeded.
            trace: the steps taken, one a line (default: the thoughts of session_id).
            task: the task it was used for.
            session_id: the session of the attempt.
            note: what went wrong, if known.
            reflect: revise the procedure on failure (false only counts the use).
        """

    @operation(writes=False, raises=(NotFoundError,))
    def get(self, procedure_id: str) -> Procedure:
        """One procedure."""

    @operation(writes=False)
    def list(
        self,
        *,
        status: ProcedureStatus | None = "active",
        task_type: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[Procedure]:
        """Procedures, newest first.

        Args:
            status: active or retired (null: both).
            task_type: only procedures of this type.
            session_id: only those abstracted from this session.
        """

    @operation(writes=False, raises=(NotFoundError,))
    def versions(self, procedure_id: str) -> builtins.list[ProcedureVersion]:
        """Every version of a procedure, oldest first (the last is the current one)."""

    @operation(writes=False, raises=(NotFoundError,))
    def history(self, procedure_id: str) -> builtins.list[ProcedureEvent]:
        """What happened to a procedure, oldest first: CREATE, USE, REVISE, RETIRE, RESTORE."""

    @operation(writes=True, raises=(NotFoundError,))
    def retire(self, procedure_id: str, *, reason: str | None = None) -> Procedure:
        """Take a procedure out of find (kept: restore brings it back).

        Args:
            reason: why, for the procedure's history.
        """

    @operation(writes=True, raises=(NotFoundError,))
    def restore(self, procedure_id: str, *, reset_counts: bool = False) -> Procedure:
        """Bring a retired procedure back.

        Args:
            reset_counts: give it a fresh record of uses.
        """

    @staticmethod
    def render(procedure: Procedure | ProcedureMatch) -> str:
        """The prompt block that puts a procedure in front of an agent (computed locally)."""
        raise NotImplementedError


class MemoryAPI(Protocol):
    """The public API of a memory store: what :class:`localmem.Memory` offers in process and
    :class:`localmem.remote.RemoteMemory` offers through ``localmem serve``."""

    @property
    def procedures(self) -> ProceduresAPI:
        """Procedural memory: find, record, retire and restore procedures."""
        raise NotImplementedError

    # -- writing ---------------------------------------------------------------------------------
    @operation(writes=True, raises=(StoreReadOnlyError,))
    def add(
        self,
        content: str,
        *,
        kind: Kind = "thought",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        event_time: Time | None = None,
        metadata: Mapping[str, Any] | None = None,
        context: str | None = None,
        level: Level = "episodic",
        mine: MineMode | None = None,
        evolve: bool | None = None,
        dedupe: bool = False,
        infer: bool | None = None,
    ) -> MemoryItem:
        """Store one memory and return it.

        Args:
            content: the text (not empty, at most store.max_content_chars characters).
            dedupe: when a live memory with the same text, kind, scope and event time exists,
                store nothing and return it.
            infer: extract the facts of the text and reconcile each with what the same scope
                holds (see infer; default: the store's infer.on_add); the memory holding the
                first fact is returned.
        """

    @operation(writes=True, raises=(StoreReadOnlyError,))
    def add_many(
        self,
        items: Sequence[str | Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
        mine: MineMode | None = None,
        evolve: bool | None = None,
        dedupe: bool = False,
        infer: bool | None = None,
        **defaults: Any,
    ) -> list[MemoryItem]:
        """Store many memories, embedding them in batches; each batch is one transaction.

        Args:
            items: texts, or objects with the parameters of add.
            batch_size: memories a transaction (and, served, a request).
            progress: called with the number stored so far (in process).
            dedupe: skip an item that duplicates a live memory or an earlier item.
            infer: reconcile item after item as infer does (default: the store's setting).
            defaults: parameters of add for every item that leaves them out.
        """

    @operation(writes=True, raises=(StoreReadOnlyError, SchemaError))
    def infer(
        self,
        content: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        speaker: str | None = None,
        kind: Kind = "thought",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        event_time: Time | None = None,
        metadata: Mapping[str, Any] | None = None,
        context: str | None = None,
        level: Level = "episodic",
        mine: MineMode | None = None,
        evolve: bool | None = None,
    ) -> list[Applied]:
        """Add with inference: extract the facts and reconcile each with the same scope's
        memories (ADD, UPDATE, INVALIDATE the one it makes untrue, or NONE), in one unit.

        Args:
            content: a text ("Name: ..." is read as said by Name), a chat message (an object
                with content and optionally name) or a list of them.
            speaker: who says the text ("I" becomes this name).
        """

    @local
    @operation(writes=False)
    def infers(self, infer: bool | None) -> bool:
        """Whether an add with this infer argument infers (null: the store's infer.on_add).

        Args:
            infer: as given to add.
        """

    @operation(writes=True, raises=(NotFoundError, StoreReadOnlyError))
    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        context: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        event_time: Time | None = None,
    ) -> MemoryItem:
        """Change a memory (fields left out stay); each change is recorded in its history, under
        the caller's identity (in process: the Memory's actor; served: the server).

        Args:
            content: the new text (re-embedded).
            context: the new context (re-embedded).
            metadata: the new metadata (replaces the old).
            event_time: the new event time.
        """

    @operation(writes=True, raises=(NotFoundError, StoreReadOnlyError))
    def delete(self, memory_id: str) -> MemoryItem:
        """Hide a memory from search (a soft delete, recorded; restore undoes it)."""

    @operation(writes=True, raises=(NotFoundError, StoreReadOnlyError))
    def restore(self, memory_id: str) -> MemoryItem:
        """Bring back a memory that delete hid."""

    @operation(writes=True, raises=(NotFoundError, StoreReadOnlyError))
    def purge(self, memory_id: str) -> None:
        """Remove a memory's text for good (privacy): content, context, vector, history values;
        a tombstone and a PURGE event remain."""

    @operation(writes=True, raises=(StoreReadOnlyError,))
    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        everything: bool = False,
    ) -> int:
        """Hide every live memory of a scope (the scopes given must all match), in one unit;
        returns how many were deleted (each recorded; restore undoes one).

        Args:
            user_id: the user whose memories go.
            agent_id: the agent whose memories go.
            session_id: the session whose memories go.
            everything: every memory of the store (no scope may be named with it).
        """

    @operation(writes=True, raises=(StoreReadOnlyError,))
    def purge_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        everything: bool = False,
    ) -> int:
        """Erase for good every memory of a scope, deleted ones included, as purge does, with
        the titles and outcomes of the scope's sessions and the text of procedures abstracted
        from it, in one unit (forget one user entirely); returns how many memories were purged.
        BM25's vocabulary keeps the bare words (no sentence, no memory they belong to).

        Args:
            user_id: the user whose memories are erased.
            agent_id: the agent whose memories are erased.
            session_id: the session whose memories are erased.
            everything: every memory of the store (no scope may be named with it).
        """

    # -- reading ---------------------------------------------------------------------------------
    @operation(writes=False, raises=(NotFoundError,))
    def get(self, memory_id: str, *, include_deleted: bool = False) -> MemoryItem:
        """One memory.

        Args:
            include_deleted: also a deleted one (its deleted field says so).
        """

    @operation(writes=False, raises=(NotFoundError,))
    def get_many(self, ids: Sequence[str]) -> list[MemoryItem]:
        """Memories by their full ids, in the order asked.

        Args:
            ids: full memory ids.
        """

    @operation(writes=False)
    def list(
        self,
        *,
        kind: Kind | None = None,
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
        """Memories, newest first, optionally of one kind, session, user or agent.

        Args:
            kind: only memories of this kind.
            session_id: only memories of this session.
            user_id: only memories of this user.
            agent_id: only memories of this agent.
            metadata: only memories whose metadata has these top-level values.
            limit: at most this many (1 to 1,000,000).
            offset: skip this many first.
            include_deleted: deleted memories too.
            in_session: true: only memories in a session; false: only those outside any.
            oldest_first: in event-time order instead.
        """

    @operation(writes=False)
    def count(self, *, include_deleted: bool = False, user_id: str | None = None) -> int:
        """How many memories the store holds.

        Args:
            include_deleted: deleted memories too.
            user_id: only this user's.
        """

    @operation(writes=False, raises=(NotFoundError,))
    def history(self, memory_id: str) -> builtins.list[HistoryEvent]:
        """Every change of a memory, oldest first: what changed, who changed it, when."""

    @operation(writes=False, raises=(EngineUnavailableError,))
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
        """Find memories for a query: the hits, best first, each with its score and evidence,
        and a report of every stage. Options left out take the store's search settings.

        Args:
            query: what to look for.
            k: how many hits (1 to 1,000).
            mode: candidates from dense vectors, BM25 (lexical) or both (hybrid).
            fusion: how hybrid merges the two lists.
            rrf_k: the reciprocal-rank-fusion constant.
            dense_weight: the dense list's weight in fusion, 0 to 1.
            candidates: candidates each retriever hands on.
            user_id: only this user's memories.
            agent_id: only this agent's memories.
            session_id: only this session's memories.
            kinds: only memories of these kinds.
            levels: only memories of these levels.
            since: only memories from this time on.
            until: only memories up to this time.
            metadata: only memories whose metadata has these top-level values.
            as_of: answer for a past moment, with what was true then (default: now; superseded
                memories are left out).
            expand: query expansion (default off; engine asks the language model).
            attributes: the MemInsight attribute stage (default off).
            min_matches: attribute filter: axes a memory must match.
            axes: attribute axes to match.
            priority: rank attribute matches by priority.
            strategy: MemInsight's retrieval strategy.
            temporal: temporal attention (default on).
            links: add linked memories (A-Mem).
            rerank: the reranker (default model-free; engine asks the language model).
            budget_tokens: pack the hits into this many tokens.
            min_relevance: leave out hits whose relevance (the calibrated 0-1 chance a hit is
                relevant) is below this; 0.05 drops what is clearly unrelated.
            now: the moment time-aware stages count from (default: the search's own time).
        """

    @operation(writes=False)
    def export(self) -> builtins.list[dict[str, Any]]:
        """The whole store as the lines of a localmem export (a header, then every row of every
        table), read as one moment while writers wait; ``localmem import`` loads it into a new
        store with nothing lost."""

    @operation(writes=False)
    def links(self, memory_id: str) -> builtins.list[Link]:
        """Every link touching a memory (evolution, consolidation...), newest first."""

    @operation(writes=False)
    def thought_of(self, memory_id: str) -> dict[str, Any] | None:
        """Where a memory stands in its session (number, branch, revises), or null."""

    @operation(writes=False)
    def attributes_of(self, memory_ids: Sequence[str]) -> dict[str, StoredAttributes]:
        """The attributes mined for some memories (never-mined ones left out)."""

    @operation(writes=False)
    def sources_of(self, memory_ids: Sequence[str]) -> dict[str, builtins.list[str]]:
        """For each consolidated (semantic, meta) memory, the memories it came from."""

    @operation(writes=False)
    def users(self, *, limit: int = 200) -> builtins.list[tuple[str, int]]:
        """Every user scope with how many memories it holds outside sessions, by id."""

    @operation(writes=False)
    def stats(self) -> dict[str, Any]:
        """Counts and sizes of the store."""

    @operation(writes=False)
    def status(self) -> dict[str, Any]:
        """Counts, index health, the embedder, the search stages, the engine of each model
        task and the store's notices."""

    @operation(writes=False)
    def describe(self) -> dict[str, Any]:
        """What the store is: its path, configuration, add options and search stages."""

    # -- sessions, procedures, consolidation, jobs -------------------------------------------------
    @operation(writes=True)
    def start_session(
        self,
        title: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Session:
        """Open a session of thoughts (a reasoning episode) for a task.

        Args:
            title: the task, in a sentence.
        """

    @operation(writes=True, raises=(NotFoundError,))
    def add_thought(
        self,
        session_id: str,
        content: str,
        *,
        mine: MineMode | None = None,
        evolve: bool | None = None,
        branch_id: str | None = None,
        branch_from: int | None = None,
        revises: int | None = None,
        event_time: Time | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Thought:
        """Add the next numbered thought to an open session.

        Args:
            session_id: the open session.
            content: one step of the reasoning.
            branch_id: the branch this thought is on (null: the main line).
            branch_from: the thought number the branch starts from.
            revises: the number of an earlier thought this one revises.
        """

    @operation(writes=True, raises=(NotFoundError, SchemaError))
    def complete_session(
        self,
        session_id: str,
        outcome: Outcome = "success",
        *,
        notes: str | None = None,
        abstract: bool = False,
        level: ProcedureLevel | None = None,
    ) -> Session:
        """Close a session with its outcome; abstract=true also keeps a successful session as a
        reusable procedure (its id in the session's metadata.procedure_id).

        Args:
            session_id: the open session.
            outcome: how the task went.
            notes: what to remember about it.
            abstract: turn the session into a procedure (in the same transaction).
            level: how abstract the procedure is (default: the store's procedures setting).
        """

    @operation(writes=False, raises=(NotFoundError,))
    def thoughts(self, session_id: str) -> builtins.list[Thought]:
        """The thoughts of a session, in order.

        Args:
            session_id: the session.
        """

    @operation(writes=False, raises=(NotFoundError,))
    def get_session(self, session_id: str) -> Session:
        """One session.

        Args:
            session_id: the session's id (or a unique prefix of it).
        """

    @operation(writes=False)
    def sessions(
        self, *, status: SessionStatus | None = None, limit: int = 100
    ) -> builtins.list[Session]:
        """Sessions, newest first.

        Args:
            status: only open or completed ones.
        """

    @operation(writes=True, raises=(EngineUnavailableError, SchemaError))
    def consolidate(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        within: Within | None = None,
        window_days: float | None = None,
        threshold: float | None = None,
        implementation: Implementation | None = None,
        meta: bool = True,
        dry_run: bool = False,
    ) -> ConsolidationReport:
        """Consolidate a scope's episodic memories into semantic facts and meta patterns;
        running it again adds only what is new.

        Args:
            user_id: the user scope to consolidate.
            agent_id: the agent scope to consolidate.
            within: cluster within the scope, or never across sessions.
            window_days: never cluster memories further apart in event time than this.
            threshold: least average cosine similarity within a cluster.
            implementation: model, model-free or auto (default: the store's setting).
            meta: also derive meta patterns from the facts.
            dry_run: report what would be written, write nothing.
        """

    @operation(writes=True)
    def run_jobs(
        self,
        *,
        kinds: Sequence[str] | None = None,
        limit: int | None = None,
        job_ids: Sequence[int] | None = None,
    ) -> JobsReport:
        """Run queued background jobs (mining, evolution) now; a failed one stays retryable.

        Args:
            kinds: only jobs of these kinds.
            limit: at most this many jobs.
            job_ids: only these jobs.
        """


class ServedAPI(MemoryAPI, Protocol):
    """What a client of ``localmem serve`` can ask besides the memory API: the server reads a
    file on its own machine (confined to the folders it was started with)."""

    @operation(writes=True, raises=(StoreReadOnlyError,))
    def ingest_file(
        self,
        path: str,
        *,
        chunker: Chunker = "paragraph",
        chunk_tokens: int = 256,
        overlap_tokens: int = 0,
        allow_duplicates: bool = False,
        max_bytes: int = 64 * 2**20,
        infer: bool | None = None,
        kind: Kind | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
    ) -> IngestReport:
        """Store a file's contents: JSON lines as memories, a text document as chunks; a file
        ingested again stores nothing new.

        Args:
            path: the file, an absolute path on the server's machine.
            chunker: how a document is cut into chunks.
            chunk_tokens: the size of a chunk.
            overlap_tokens: tokens two chunks share.
            allow_duplicates: store lines and chunks already stored again.
            max_bytes: refuse a larger file.
            infer: infer the facts of JSON lines (default: for a conversation).
            kind: the kind of every memory (default: chunk for documents, note for lines).
        """
