"""The contract (issue 31): the public API is declared once (localmem/api/declaration.py) and
every surface is held to it: Memory and the procedures store in process, the remote client,
the server's method table and its read/write split, the MCP tools and the CLI's search options.

A surface that drifts from the declaration (a parameter added to ``search`` and not to the
client, a changed default, a new public method nobody declared) makes one of these tests fail;
``test_the_checker_sees_drift`` shows that the checker itself can fail.
"""

from __future__ import annotations

import argparse
import inspect
import subprocess
import sys
import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import pytest

from localmem import api
from localmem.api import IN_PROCESS_ONLY, MemoryAPI, operations
from localmem.api.contract import namespace
from localmem.memory import Memory
from localmem.procedures.store import ProcedureStore
from localmem.remote import RemoteMemory
from localmem.remote.procedures import RemoteProcedures


# -- comparing a signature with the declaration ------------------------------------------------
def _resolve(annotation: Any, fn: Callable[..., Any]) -> Any:
    if not isinstance(annotation, str):
        return annotation
    names = {**namespace(results=True), **getattr(fn, "__globals__", {})}
    return eval(annotation, names)


def _canon(kind: Any) -> Any:
    """A type in a form two spellings of it share (typing.Sequence and collections.abc's)."""
    if isinstance(kind, list):  # the arguments of a Callable
        return tuple(_canon(a) for a in kind)
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        return ("union", frozenset(_canon(a) for a in args))
    if origin is Literal:
        return ("literal", frozenset(args))
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return (name, tuple(_canon(a) for a in args))
    return getattr(kind, "__name__", kind)


def _accepts(declared: Any, implemented: Any) -> bool:
    """Whether an implementation's parameter type takes every value the declaration allows
    (the same type, or ``str`` where the declaration names the allowed strings)."""
    if declared == implemented:
        return True
    if isinstance(declared, tuple) and declared[0] == "literal":
        return implemented == "str" and all(isinstance(v, str) for v in declared[1])
    if isinstance(declared, tuple) and isinstance(implemented, tuple):
        if declared[0] == implemented[0] == "union":
            rest = set(implemented[1])
            return all(any(_accepts(d, i) for i in rest) for d in declared[1])
        wider = {"Sequence": {"Iterable"}, "list": {"Sequence", "Iterable"}}
        same = declared[0] == implemented[0] or implemented[0] in wider.get(declared[0], ())
        if same and len(declared[1]) == len(implemented[1]):
            return all(_accepts(d, i) for d, i in zip(declared[1], implemented[1], strict=True))
    return False


def drift(op: api.Operation, fn: Callable[..., Any]) -> list[str]:
    """How ``fn`` differs from the declared operation: missing, extra, reordered parameters,
    another kind, default or type (empty when it implements the operation as declared)."""
    declared = list(op.signature.parameters.values())
    given = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self" or not isinstance(fn, types.FunctionType)
    ]
    if given and given[0].name == "self":
        given = given[1:]
    problems = []
    names = [p.name for p in declared], [p.name for p in given]
    if names[0] != names[1]:
        problems.append(f"parameters {names[1]} instead of {names[0]}")
        return problems
    for want, have in zip(declared, given, strict=True):
        if want.kind != have.kind:
            problems.append(f"{want.name}: {have.kind.description} instead of {want.kind}")
        if want.default != have.default:
            problems.append(f"{want.name}: default {have.default!r} instead of {want.default!r}")
        if want.annotation is inspect.Parameter.empty:
            continue
        w = _canon(_resolve(want.annotation, MemoryAPI.add))
        h = _canon(_resolve(have.annotation, fn))
        if not _accepts(w, h):
            problems.append(f"{want.name}: type {have.annotation} instead of {want.annotation}")
    return problems


def _implementation(cls: type, attr: str) -> Callable[..., Any]:
    fn = inspect.getattr_static(cls, attr)
    return fn.__func__ if isinstance(fn, staticmethod) else fn


# -- the declaration -----------------------------------------------------------------------------
def test_the_declaration_is_cheap_to_import():
    """The CLI starts with it: no numpy, DuckDB or pydantic behind it."""
    code = (
        "import sys, localmem.api as a; a.operations(); "
        "print(sorted(m for m in ('numpy', 'duckdb', 'pydantic', 'pyarrow') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_operation_is_fully_declared():
    ops = operations()
    assert {"add", "search", "procedures.find", "ingest_file"} <= set(ops)
    for op in ops.values():
        assert op.summary, op.name
        for p in op.params:
            assert p.description, f"{op.name}({p.name}) has no description"
            assert p.type is not None  # every annotation resolves with the declaration's names
            if "Time" in p.annotation:
                assert "ISO 8601" in p.description, f"{op.name}({p.name}) states no format"
        assert op.result_type is not None or op.returns == "None"


def test_the_read_write_split_is_declared():
    ops = operations()
    reads = {name for name, op in ops.items() if not op.writes}
    assert {"get", "search", "count", "procedures.find", "describe"} <= reads
    writes = {name for name, op in ops.items() if op.writes}
    assert {"add", "update", "delete", "purge", "procedures.record", "ingest_file"} <= writes


# -- the implementations --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cls", "owners"),
    [
        (Memory, {"memory"}),
        (ProcedureStore, {"procedures"}),
        (RemoteMemory, {"memory", "served"}),
        (RemoteProcedures, {"procedures"}),
    ],
)
def test_each_implementation_has_every_operation_as_declared(cls, owners):
    found = {}
    for op in operations().values():
        if op.owner not in owners:
            continue
        fn = _implementation(cls, op.attribute)
        # a Protocol's stub is not an implementation
        assert fn.__module__ != "localmem.api.declaration", f"{cls.__name__} lacks {op.name}"
        problems = drift(op, fn)
        if problems:
            found[op.name] = problems
    assert found == {}


def test_memory_has_no_public_name_outside_the_contract():
    """A new public method of Memory is either declared (and served, and in the client) or
    named in-process-only on purpose."""
    declared = {op.attribute for op in operations().values() if op.owner == "memory"}
    public = {name for name in dir(Memory) if not name.startswith("_")}
    assert public - declared - IN_PROCESS_ONLY - {"procedures"} == set()
    assert declared & IN_PROCESS_ONLY == set()


def test_a_call_that_does_not_fit_is_an_arguments_error_everywhere(tmp_path, embedder):
    """Every operation declares InputError for bad arguments: an unknown option or a missing
    argument is an ArgumentsError (an InputError and a TypeError) in process as it is through
    the client, and nothing is written."""
    from localmem.errors import ArgumentsError, InputError
    from localmem.remote.transport import BadArguments

    assert issubclass(ArgumentsError, InputError) and issubclass(ArgumentsError, TypeError)
    assert issubclass(BadArguments, ArgumentsError)
    with Memory.open(tmp_path / "store", embedder=embedder) as mem:
        item = mem.add("The backup runs at 2 am")
        for op in operations().values():
            if op.owner == "served":
                continue
            target = mem if op.owner == "memory" else mem.procedures
            method = getattr(target, op.attribute)
            with pytest.raises(ArgumentsError, match=op.attribute):
                method(no_such_option=1)
        with pytest.raises(ArgumentsError, match="unexpected keyword"):
            mem.update(item.id, content="x", actor="system:admin")
        assert mem.count() == 1
        assert [e.event for e in mem.history(item.id)] == ["ADD"]


def test_the_remote_client_repeats_nothing_by_hand():
    """Its methods are made from the declaration; only these do more on the client's side."""
    own = {
        name
        for name, value in vars(RemoteMemory).items()
        if callable(value)
        and not name.startswith("_")
        and getattr(value, "__module__", "") in ("localmem.remote",)
    }
    assert own == {"add_many", "infers", "call", "close"}


def test_the_checker_sees_drift():
    """A parameter added to the declared search and not to an implementation, a changed
    default, a looser type where a tighter one is declared: each is reported."""
    search = operations()["search"]

    def without_a_parameter(self, query: str, *, k: int = 5) -> Any:
        return None

    assert drift(search, without_a_parameter)
    get = operations()["get"]

    def other_default(self, memory_id: str, *, include_deleted: bool = True) -> Any:
        return None

    assert drift(get, other_default) == ["include_deleted: default True instead of False"]

    def other_type(self, memory_id: int, *, include_deleted: bool = False) -> Any:
        return None

    assert drift(get, other_type)
    assert drift(get, Memory.get) == []


# -- the server ----------------------------------------------------------------------------------
def test_the_servers_methods_are_the_declared_ones(tmp_path, embedder):
    from localmem.server.app import method_table

    with Memory.open(tmp_path / "store", embedder=embedder) as mem:
        table = method_table(mem, {"ingest_file": lambda *a, **k: None})
        assert set(table) == set(api.served())
        assert "infers" not in table  # a client computes it itself
        for name, (op, fn) in table.items():
            if op.owner != "served":
                assert fn.__name__ == op.attribute, name
        with pytest.raises(KeyError):  # a served extension the server forgot
            method_table(mem, {})


# -- the CLI --------------------------------------------------------------------------------------
def test_the_cli_search_options_follow_the_declaration():
    from localmem.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    search = sub.choices["search"]
    declared = {p.name: p for p in operations()["search"].params}
    cli_only = {"help", "store", "json", "explain", "where"}
    for action in search._actions:
        if action.dest in cli_only:
            continue
        assert action.dest in declared, f"--{action.dest} is not a parameter of search"
        kind = declared[action.dest].type
        literals = [a for a in get_args(kind) if get_origin(a) is Literal] or (
            [kind] if get_origin(kind) is Literal else []
        )
        for container in get_args(kind):  # Sequence[Kind] | None: the items' choices
            literals += [a for a in get_args(container) if get_origin(a) is Literal]
        if action.choices is not None:
            assert literals, f"--{action.dest} has choices the declaration does not"
            assert tuple(action.choices) == get_args(literals[0]), action.dest


# -- one encoding of each value -------------------------------------------------------------------
def test_one_encoding_of_a_hit_in_process_on_the_wire_and_in_the_cli(tmp_path, embedder, capsys):
    import json

    from localmem import wire
    from localmem.cli import main
    from localmem.types import SearchResult

    store = tmp_path / "store"
    with Memory.open(store, embedder=embedder) as mem:
        mem.add("The deploy runs on Fridays", kind="chunk", metadata={"source": "ops.md"})
        mem.add("Rollbacks need two people", kind="fact", event_time="2024-05-01T09:00:00+00:00")
        result = mem.search("when is the deploy", k=2)
        hits = wire.encode(result)["hits"]
    first = hits[0]
    assert list(first)[: len(wire.COMPACT_HIT)] == list(wire.COMPACT_HIT)  # compact is a prefix
    assert wire.compact_hit(result.hits[0]) == {k: first[k] for k in wire.COMPACT_HIT}
    assert first["source"] == "ops.md" and "label" not in first
    assert {"rank", "evidence", "flags", "context", "valid_to", "content_hash"} <= set(first)
    back = wire.decode(SearchResult, wire.encode(result))
    assert [h.memory.content for h in back] == [h.memory.content for h in result]
    assert back.hits[0].score == result.hits[0].score and back.stages == result.stages

    assert main(["search", "when is the deploy", "-k", "2", "--store", str(store), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)["hits"]
    for cli_hit, hit in zip(printed, hits, strict=True):
        assert cli_hit.pop("derived_from") == []
        assert cli_hit == hit


# -- MCP ------------------------------------------------------------------------------------------
def test_the_mcp_tools_follow_the_declaration():
    """Each tool calls a declared operation; each of its parameters is the operation's, with the
    declared description and the declared type as MCP carries it; every required parameter is
    given by the agent or by the tool; read-only tools are the operations that do not write."""
    from localmem.mcp_server import TOOLS, mcp_type, tool_parameters

    for tool in TOOLS:
        op = operations()[tool.op]
        params = {p.name: p for p in tool_parameters(tool, op)}
        for name in tool.params:
            declared, given = op.param(name), params[name]
            kind, field = get_args(given.annotation)[0], given.annotation.__metadata__[0]
            assert kind == mcp_type(declared.type), (tool.name, name)
            assert field.description == declared.description, (tool.name, name)
            assert given.default == tool.defaults.get(name, declared.default), (tool.name, name)
        for extra in tool.extras:
            assert extra.name not in {p.name for p in op.params}, (tool.name, extra.name)
            assert params[extra.name].annotation.__metadata__[0].description
        required = {p.name for p in op.params if p.required}
        assert required <= set(tool.params) | set(tool.fixed), tool.name
        assert set(tool.fixed) <= {p.name for p in op.params}, tool.name
