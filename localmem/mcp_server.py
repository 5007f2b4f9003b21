"""``localmem mcp``: the store as a Model Context Protocol server, over stdio.

Local agents (Claude Desktop and Claude Code, Cursor, Continue, agent frameworks) reach a memory
through MCP. This module builds the server with the official SDK (``mcp``, its ``MCPServer``)
from the public API of :class:`~localmem.memory.Memory`: each tool is a thin call into the
facade, its arguments typed so the SDK derives the JSON schema the client sees, its answer the
same JSON the CLI's ``--json`` prints. A ``LocalMemError`` becomes a tool error whose text
names the error's class (``InputError: ...``), so a client can tell bad input from a
missing memory; the SDK itself answers unknown tools and arguments that do not fit the schema.

The server opens the store itself and holds it while it runs (the store's writer lock).
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any, Literal

from localmem.console import to_jsonable
from localmem.errors import LocalMemError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from localmem.memory import Memory

INSTRUCTIONS = (
    "localmem is the user's local, private memory. Search it before answering questions about "
    "the user, earlier conversations or past work (search_memories); store what should be "
    "remembered (add_memory) with the user_id it belongs to. For a task that takes several "
    "steps, open a session of thoughts (start_session, add_thought, complete_session with "
    "abstract=true to keep a reusable procedure) and look for a procedure first "
    "(find_procedure). Nothing leaves this machine."
)

Mode = Literal["hybrid", "dense", "lexical"]
Rerank = Literal["off", "auto", "model-free", "engine"]
Expand = Literal["off", "auto", "prf", "engine"]


def _memory_json(item: Any) -> dict[str, Any]:
    data = to_jsonable(item)
    data.pop("label", None)  # the index's internal number: not part of the public API
    return data


def _hits_json(result: Any, explain: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "query": result.query,
        "hits": [
            {
                "rank": h.rank,
                "score": h.score,
                "memory": _memory_json(h.memory),
                "evidence": to_jsonable(h.evidence),
                "flags": list(h.flags),
            }
            for h in result
        ],
        "total_ms": round(result.total_ms, 2),
    }
    if explain:
        out["explain"] = result.explain()
    return out


def build_server(memory: Memory) -> MCPServer:
    """An MCP server whose tools read and write ``memory``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    # the client shows the server's stderr; a refused call is an answer, not news for a log
    server = MCPServer("localmem", instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(description: str):
        """Register a tool; a LocalMemError becomes a ToolError naming its class."""

        def wrap(fn):
            @functools.wraps(fn)  # the SDK reads the schema from fn's signature through this
            def call(*args: Any, **kwargs: Any) -> Any:
                try:
                    return fn(*args, **kwargs)
                except LocalMemError as exc:
                    raise ToolError(f"{type(exc).__name__}: {exc}") from None

            server.add_tool(call, name=fn.__name__, description=description)
            return fn

        return wrap

    @tool("Store one memory (a fact, note, message or thought) and return it with its id.")
    def add_memory(
        content: str,
        kind: str = "note",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        event_time: str | None = None,
        metadata: dict[str, Any] | None = None,
        context: str | None = None,
        infer: bool | None = None,
    ) -> dict[str, Any]:
        """content: the text; kind: thought, message, chunk, fact, procedure, summary or note;
        event_time: ISO 8601 with offset, when it happened; infer: extract the facts and
        reconcile them with the stored ones (a repeated fact is not stored twice, a changed one
        supersedes the old; default: the store's setting); the answer then lists every
        decision under "decisions"."""
        fields = {
            "kind": kind,
            "user_id": user_id,
            "agent_id": agent_id,
            "session_id": session_id,
            "event_time": event_time,
            "metadata": metadata,
            "context": context,
        }
        if not memory.infers(infer):
            return _memory_json(memory.add(content, infer=False, **fields))
        applied = memory.infer(content, **fields)
        out = _memory_json(applied[0].memory)
        out["decisions"] = [
            {
                "event": a.event,
                "memory_id": a.memory.id,
                "content": a.memory.content,
                "target_id": a.target.id if a.target else None,
                "reason": a.reason,
                "decider": a.decider,
            }
            for a in applied
        ]
        return out

    @tool(
        "Search the memories with the store's default pipeline (hybrid dense + BM25, temporal "
        "attention, the model-free reranker: the best measured). Returns hits with scores, the "
        "evidence per stage and the pipeline's explanation. temporal=false or rerank='off' "
        "switch a stage off; rerank='engine' asks the language model."
    )
    def search_memories(
        query: str,
        k: int = 5,
        mode: Mode = "hybrid",
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        kinds: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
        temporal: bool | None = None,
        rerank: Rerank | None = None,
        expand: Expand = "off",
        links: bool = False,
        explain: bool = True,
    ) -> dict[str, Any]:
        """Filters narrow the search to a scope, kinds of memory or a time range (ISO dates);
        as_of answers for a past moment (what was true then; by default superseded memories
        are left out)."""
        filters = {
            "user_id": user_id,
            "agent_id": agent_id,
            "session_id": session_id,
            "kinds": kinds,
            "since": since,
            "until": until,
            "as_of": as_of,
        }
        options = {name: value for name, value in filters.items() if value is not None}
        result = memory.search(
            query,
            k=k,
            mode=mode,
            temporal=temporal,
            rerank=rerank,
            expand=expand,
            links=links,
            **options,
        )
        return _hits_json(result, explain)

    @tool("One memory by its full id, with its context, metadata and scope.")
    def get_memory(memory_id: str) -> dict[str, Any]:
        """The memory, deleted ones included (their 'deleted' field says so)."""
        return _memory_json(memory.get(memory_id, include_deleted=True))

    @tool("Change a memory's content, context, metadata or event time; the change is recorded.")
    def update_memory(
        memory_id: str,
        content: str | None = None,
        context: str | None = None,
        metadata: dict[str, Any] | None = None,
        event_time: str | None = None,
    ) -> dict[str, Any]:
        """Fields left out stay as they are."""
        return _memory_json(
            memory.update(
                memory_id,
                content=content,
                context=context,
                metadata=metadata,
                event_time=event_time,
            )
        )

    @tool("Hide a memory from search (a soft delete: recorded, and restore_memory undoes it).")
    def delete_memory(memory_id: str) -> dict[str, Any]:
        """The memory as it is now."""
        return _memory_json(memory.delete(memory_id))

    @tool("Bring back a memory that delete_memory hid.")
    def restore_memory(memory_id: str) -> dict[str, Any]:
        """The memory as it is now."""
        return _memory_json(memory.restore(memory_id))

    @tool("Every change of a memory, oldest first: what changed, who changed it and when.")
    def memory_history(memory_id: str) -> dict[str, Any]:
        """Its history events, under "events"."""
        return {"memory_id": memory_id, "events": to_jsonable(memory.history(memory_id))}

    @tool("The most recent memories, newest first, optionally of one user, kind or session.")
    def list_memories(
        limit: int = 20,
        user_id: str | None = None,
        kind: str | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """At most ``limit`` memories, under "memories"."""
        items = memory.list(limit=limit, user_id=user_id, kind=kind, session_id=session_id)
        return {"memories": [_memory_json(item) for item in items]}

    @tool("Open a session of thoughts for a task (a reasoning episode); returns its id.")
    def start_session(title: str, user_id: str | None = None) -> dict[str, Any]:
        """title: the task, in a sentence."""
        return to_jsonable(memory.start_session(title, user_id=user_id))

    @tool("Add the next numbered thought to an open session.")
    def add_thought(session_id: str, content: str) -> dict[str, Any]:
        """One step of the reasoning, in a sentence or two."""
        return to_jsonable(memory.add_thought(session_id, content))

    @tool(
        "Close a session with its outcome (success or failure). abstract=true turns a "
        "successful session into a reusable procedure (its id in metadata.procedure_id)."
    )
    def complete_session(
        session_id: str,
        outcome: Literal["success", "failure"] = "success",
        notes: str | None = None,
        abstract: bool = False,
    ) -> dict[str, Any]:
        """The closed session."""
        return to_jsonable(
            memory.complete_session(session_id, outcome, notes=notes, abstract=abstract)
        )

    @tool(
        "Find the best stored procedure for a task. Returns the match with its score and the "
        "block of steps to follow, or found=false."
    )
    def find_procedure(task: str, user_id: str | None = None) -> dict[str, Any]:
        """task: the task about to be solved, in a sentence."""
        options = {"user_id": user_id} if user_id else {}
        match = memory.procedures.find(task, **options)
        if match is None:
            return {"found": False}
        return {
            "found": True,
            "match": to_jsonable(match),
            "prompt": memory.procedures.render(match),
        }

    @tool(
        "Record one use of a procedure: success or failure, with the steps taken. A failure "
        "revises the procedure (a new version; the old one is kept)."
    )
    def record_procedure(
        procedure_id: str,
        success: bool,
        trace: list[str] | None = None,
        note: str | None = None,
    ) -> dict[str, Any]:
        """trace: what was done, a step a line."""
        return to_jsonable(memory.procedures.record(procedure_id, success, trace, note=note))

    @tool(
        "Consolidate a scope's episodic memories into semantic facts and meta patterns "
        "(hierarchical consolidation). dry_run=true reports what it would write."
    )
    def consolidate(
        user_id: str | None = None, agent_id: str | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        """What the run wrote (or would write)."""
        return to_jsonable(memory.consolidate(user_id=user_id, agent_id=agent_id, dry_run=dry_run))

    @server.resource("memory://{memory_id}", description="One memory as JSON.")
    def memory_resource(memory_id: str) -> str:
        try:
            return json.dumps(_memory_json(memory.get(memory_id, include_deleted=True)))
        except LocalMemError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from None

    return server


def serve_stdio(memory: Memory) -> None:
    """Serve ``memory`` over stdio until the client closes the connection."""
    build_server(memory).run("stdio")
