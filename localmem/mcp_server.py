"""``localmem mcp``: the store as a Model Context Protocol server, over stdio (and over the
streamable HTTP endpoint of ``localmem serve``).

Local agents (Claude Desktop and Claude Code, Cursor, Continue, agent frameworks) reach a memory
through MCP. Each tool is one operation of the declared API (:mod:`localmem.api`) with the
parameters an agent needs: their types, defaults, allowed values (as enums) and descriptions
(time formats included) come from the declaration, so a tool cannot drift from the API it
calls. Answers use the one encoding of :mod:`localmem.wire`; search hits are compact (id,
content, score, kind, time, source) unless ``full`` is asked, and the explanation comes on
request. A refused call answers one typed sentence (``InputError: ...``,
``NotFoundError: ...``), whether the store refused it or the arguments did not fit the schema.

The server opens the store itself and holds it while it runs (the store's writer lock), or
goes through the ``localmem serve`` that holds it.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

from localmem import __version__, wire
from localmem.api import Operation, operations
from localmem.errors import LocalMemError, NotFoundError
from localmem.retrieval.relevance import DEFAULT_MIN_RELEVANCE

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from localmem.api import MemoryAPI

log = logging.getLogger("localmem.mcp")

INSTRUCTIONS = (
    "localmem is the user's local, private memory. Search it before answering questions about "
    "the user, earlier conversations or past work (search_memories); store what should be "
    "remembered (add_memory) with the user_id it belongs to. For a task that takes several "
    "steps, open a session of thoughts (start_session, add_thought, complete_session with "
    "abstract=true to keep a reusable procedure) and look for a procedure first "
    "(find_procedure). Times are ISO 8601 with a UTC offset (2024-05-01T09:30:00+00:00). "
    "Nothing leaves this machine."
)


@dataclass(frozen=True)
class Extra:
    """A parameter of a tool that is not one of its operation's (how the answer is shaped)."""

    name: str
    type: Any
    default: Any
    description: str


@dataclass(frozen=True)
class Tool:
    """One MCP tool: an operation of the declared API, with the parameters an agent sees."""

    name: str
    op: str  #: the declared operation it calls
    params: tuple[str, ...]  #: which of the operation's parameters an agent gives
    description: str
    defaults: Mapping[str, Any] = field(default_factory=dict)  #: the tool's own defaults
    fixed: Mapping[str, Any] = field(default_factory=dict)  #: passed by the tool itself
    extras: tuple[Extra, ...] = ()
    #: (memory, arguments) -> result, when the call is more than the operation
    run: Callable[[Any, dict[str, Any]], Any] | None = None
    #: (result, arguments and extras) -> the JSON answer (default: the one encoding)
    answer: Callable[[Any, dict[str, Any]], Any] | None = None


def _add(memory: MemoryAPI, args: dict[str, Any]) -> Any:
    """add, or infer when the store (or the call) says an add infers: the answer then names
    every decision."""
    if not memory.infers(args.pop("infer")):
        return memory.add(args.pop("content"), infer=False, **args)
    return memory.infer(args.pop("content"), **args)


def _added(result: Any, args: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(result, list):
        return wire.encode(result)
    out = wire.encode(result[0].memory)
    out["decisions"] = wire.encode(result)
    return out


def _hits(result: Any, args: dict[str, Any]) -> dict[str, Any]:
    hits = [wire.encode_hit(h) if args["full"] else wire.compact_hit(h) for h in result]
    out: dict[str, Any] = {"query": result.query, "hits": hits}
    if args["explain"]:
        out["stages"] = wire.encode(result.stages)
        out["total_ms"] = round(result.total_ms, 2)
    return out


def _found(memory: MemoryAPI) -> Callable[[Any, dict[str, Any]], Any]:
    def answer(match: Any, args: dict[str, Any]) -> dict[str, Any]:
        if match is None:
            return {"found": False}
        return {
            "found": True,
            "match": wire.encode(match),
            "prompt": memory.procedures.render(match),
        }

    return answer


SCOPE = ("user_id", "agent_id", "session_id")

TOOLS = (
    Tool(
        "add_memory",
        "add",
        ("content", "kind", *SCOPE, "event_time", "metadata", "context", "infer"),
        "Store one memory (a fact, note, message or thought) and return it with its id. With "
        "infer, its facts are reconciled with the stored ones (a repeated fact is not stored "
        'twice, a changed one supersedes the old) and "decisions" lists each.',
        defaults={"kind": "note"},
        run=_add,
        answer=_added,
    ),
    Tool(
        "search_memories",
        "search",
        (
            *("query", "k", "mode", *SCOPE, "kinds", "since", "until", "as_of"),
            *("temporal", "rerank", "expand", "links", "min_relevance"),
        ),
        "Search the memories with the store's default pipeline (hybrid dense + BM25, temporal "
        "attention, the model-free reranker: the best measured). Hits are compact (id, content, "
        "score, relevance, kind, time, source), best first; relevance is the calibrated 0-1 "
        "chance a hit is relevant, and hits below min_relevance (default "
        f"{DEFAULT_MIN_RELEVANCE}: only the clearly unrelated) are left out; full=true gives "
        "each hit's whole record, explain=true what every stage did.",
        defaults={"min_relevance": DEFAULT_MIN_RELEVANCE},
        extras=(
            Extra("full", bool, False, "each hit with the memory's whole record and evidence"),
            Extra("explain", bool, False, "add what every stage of the search did"),
        ),
        answer=_hits,
    ),
    Tool(
        "get_memory",
        "get",
        ("memory_id",),
        "One memory by its id, with its context, metadata and scope (deleted ones included: "
        "their deleted field says so).",
        fixed={"include_deleted": True},
    ),
    Tool(
        "update_memory",
        "update",
        ("memory_id", "content", "context", "metadata", "event_time"),
        "Change a memory's content, context, metadata or event time; fields left out stay; the "
        "change is recorded in its history.",
    ),
    Tool(
        "delete_memory",
        "delete",
        ("memory_id",),
        "Hide a memory from search (a soft delete: recorded, and restore_memory undoes it).",
    ),
    Tool("restore_memory", "restore", ("memory_id",), "Bring back a memory delete_memory hid."),
    Tool(
        "memory_history",
        "history",
        ("memory_id",),
        "Every change of a memory, oldest first: what changed, who changed it and when.",
        answer=lambda events, args: {
            "memory_id": args["memory_id"],
            "events": wire.encode(events),
        },
    ),
    Tool(
        "list_memories",
        "list",
        ("limit", "user_id", "kind", "session_id"),
        "The most recent memories, newest first, optionally of one user, kind or session.",
        defaults={"limit": 20},
        answer=lambda items, args: {"memories": wire.encode(items)},
    ),
    Tool(
        "start_session",
        "start_session",
        ("title", "user_id"),
        "Open a session of thoughts for a task (a reasoning episode); returns its id.",
    ),
    Tool(
        "add_thought",
        "add_thought",
        ("session_id", "content"),
        "Add the next numbered thought to an open session.",
    ),
    Tool(
        "complete_session",
        "complete_session",
        ("session_id", "outcome", "notes", "abstract"),
        "Close a session with its outcome. abstract=true turns a successful session into a "
        "reusable procedure (its id in metadata.procedure_id).",
    ),
    Tool(
        "find_procedure",
        "procedures.find",
        ("task", "user_id"),
        "Find the best stored procedure for a task: the match with its score and the block of "
        "steps to follow, or found=false.",
    ),
    Tool(
        "record_procedure",
        "procedures.record",
        ("procedure_id", "success", "trace", "note"),
        "Record one use of a procedure: success or failure, with the steps taken. A failure "
        "revises the procedure (a new version; the old one is kept).",
    ),
    Tool(
        "consolidate",
        "consolidate",
        ("user_id", "agent_id", "dry_run"),
        "Consolidate a scope's episodic memories into semantic facts and meta patterns "
        "(hierarchical consolidation); dry_run=true reports what it would write.",
    ),
)


def mcp_type(kind: Any) -> Any:
    """A declared type as an MCP client sends it: a time as text or a number (its format is in
    the parameter's description), sequences as lists, mappings as objects."""
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        members = list(args)
        if datetime in members:  # a Time: text (ISO 8601) or a number (epoch seconds)
            members = [m for m in members if m is not datetime]
        mapped = tuple(dict.fromkeys(mcp_type(m) for m in members))
        return mapped[0] if len(mapped) == 1 else Union[mapped]  # noqa: UP007
    # types.GenericAlias is what list[...] and dict[...] make: spelled out, as the arguments
    # are values known only at run time
    if origin is Sequence:
        return types.GenericAlias(list, (mcp_type(args[0]),)) if args else list
    if origin is Mapping:
        return types.GenericAlias(dict, (args[0], args[1])) if args else dict
    return kind


def tool_parameters(tool: Tool, op: Operation) -> list[inspect.Parameter]:
    """The tool's parameters with their MCP types, defaults and descriptions."""
    from pydantic import Field

    out = []
    for name in tool.params:
        p = op.param(name)
        default = tool.defaults.get(name, p.default)
        out.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=Annotated[mcp_type(p.type), Field(description=p.description)],
            )
        )
    for extra in tool.extras:
        out.append(
            inspect.Parameter(
                extra.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=extra.default,
                annotation=Annotated[extra.type, Field(description=extra.description)],
            )
        )
    return out


def _target(memory: Any, op: Operation) -> Callable[..., Any]:
    owner = memory.procedures if op.owner == "procedures" else memory
    return getattr(owner, op.attribute)


def _function(memory: Any, tool: Tool) -> Callable[..., Any]:
    """The tool as a function whose signature the SDK reads its JSON schema from."""
    op = operations()[tool.op]
    answer = tool.answer or (lambda result, args: wire.encode(result))
    if tool.op == "procedures.find":
        answer = _found(memory)
    extras = {e.name for e in tool.extras}

    def call(**args: Any) -> dict[str, Any]:
        given = {k: v for k, v in args.items() if k not in extras}
        given.update(tool.fixed)
        result = tool.run(memory, dict(given)) if tool.run else _target(memory, op)(**given)
        return answer(result, args)

    call.__name__ = tool.name
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        tool_parameters(tool, op), return_annotation=dict[str, Any]
    )
    return call


def build_server(memory: MemoryAPI) -> MCPServer:
    """An MCP server whose tools read and write ``memory`` (a Memory or a served store)."""
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
    from mcp_types import ToolAnnotations

    server = _server_class()(
        "localmem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for tool in TOOLS:
        op = operations()[tool.op]
        server.add_tool(
            _function(memory, tool),
            name=tool.name,
            description=tool.description,
            annotations=ToolAnnotations(readOnlyHint=not op.writes, openWorldHint=False),
        )

    @server.resource(
        "memory://{memory_id}",
        description="One memory as JSON (its record).",
        mime_type="application/json",
    )
    def memory_resource(memory_id: str) -> str:
        try:
            return json.dumps(wire.encode(memory.get(memory_id, include_deleted=True)))
        except NotFoundError as exc:
            raise ResourceNotFoundError(f"NotFoundError: {exc}") from None
        except LocalMemError as exc:
            raise ResourceError(f"{type(exc).__name__}: {exc}") from None

    return server


def _server_class() -> type:
    """The SDK's server, whose refused calls answer one typed sentence."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, TextContent
    from pydantic import ValidationError

    class LocalMemServer(MCPServer):
        async def run_stdio_async(self) -> None:
            """Over stdio, as the SDK does, with standard input read through CheckedStdin."""
            from mcp.server.stdio import stdio_server

            stdin = CheckedStdin()
            async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
                stdin.answer_through(write_stream)
                lowlevel = self._lowlevel_server
                await lowlevel.run(
                    read_stream, write_stream, lowlevel.create_initialization_options()
                )

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None):
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                text = refusal(name, exc, ValidationError, [t.name for t in TOOLS])
                return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    return LocalMemServer


def refusal(tool: str, exc: BaseException, invalid: type, tools: Sequence[str]) -> str:
    """One typed sentence for a refused call: the store's error with its class, the first
    argument that did not fit the schema, an unknown tool; a fault of ours is logged here."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, LocalMemError):
            return f"{type(cause).__name__}: {cause}"
        if isinstance(cause, invalid):
            return f"InputError: {tool}: {_first_problem(cause)}"
        cause = cause.__cause__
    if tool not in tools:
        return f"NotFoundError: no tool {tool!r} (tools: {', '.join(tools)})"
    log.error("unexpected error in tool %s", tool, exc_info=exc)
    return f"LocalMemError: the tool {tool} failed unexpectedly; the server's log says why"


def _first_problem(error: Any) -> str:
    """The first problem of a pydantic ValidationError in words, without pydantic's URL."""
    problem = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in problem.get("loc", ()) if part != "result") or "input"
    kind = problem.get("type", "")
    if kind == "missing":
        return f"{where} is required"
    if kind == "literal_error":
        allowed = problem.get("ctx", {}).get("expected", "")
        return f"{where} must be {allowed}, not {problem.get('input')!r}"
    message = str(problem.get("msg", "is not valid")).replace("Input should be", "must be")
    return f"{where} {message[0].lower()}{message[1:]} (got {problem.get('input')!r})"[:300]


def serve_stdio(memory: MemoryAPI) -> None:
    """Serve ``memory`` over stdio until the client closes the connection (or dies: that is
    the end of the session, not an error)."""
    try:
        build_server(memory).run("stdio")
    except Exception as exc:
        if not _client_gone(exc):
            raise


def _client_gone(exc: BaseException) -> bool:
    """Whether an error (or every error of a group) only says the client's pipes closed."""
    import anyio

    inner = getattr(exc, "exceptions", None)
    if inner:
        return all(_client_gone(e) for e in inner)
    gone = (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError)
    return isinstance(exc, (*gone, anyio.ClosedResourceError))


#: a JSON escape of a surrogate code point (a lone one cannot be text)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def unreadable(line: str) -> tuple[Any, str] | None:
    """``(id, why)`` when a JSON-RPC line holds a lone surrogate (``"\\ud800"``), which the
    SDK's parser refuses without an answer over stdio (the client would wait forever); None
    for any other line, which the SDK reads (and answers) itself."""
    if not _SURROGATE_ESCAPE.search(line):
        return None
    try:
        message = json.loads(line)
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        ident = message.get("id") if isinstance(message, dict) else None
        if not isinstance(ident, (str, int)) or isinstance(ident, bool):
            ident = None
        return ident, f"a lone surrogate (\\u{ord(exc.object[exc.start]):04x}) is not valid text"
    except (ValueError, RecursionError):
        return None  # not JSON: the SDK says so
    return None


class CheckedStdin:
    """The lines of standard input for the SDK's stdio transport; a line it could not read is
    answered here with a JSON-RPC parse error (-32700, as over HTTP) instead of silence."""

    def __init__(self) -> None:
        import io
        import sys

        import anyio

        text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        self._lines = anyio.wrap_file(text)
        self._answers: Any = None
        self._ready = anyio.Event()

    def answer_through(self, stream: Any) -> None:
        """Where the answers go: the transport's write stream."""
        self._answers = stream
        self._ready.set()

    async def __aiter__(self) -> Any:
        import mcp_types
        from mcp.shared.message import SessionMessage

        async for line in self._lines:
            refused = unreadable(line)
            if refused is None:
                yield line
                continue
            ident, why = refused
            error = mcp_types.ErrorData(code=mcp_types.PARSE_ERROR, message=f"Parse error: {why}")
            await self._ready.wait()
            reply = mcp_types.JSONRPCError(jsonrpc="2.0", id=ident, error=error)
            await self._answers.send(SessionMessage(reply))
