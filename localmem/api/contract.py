"""The declaration read as data: every operation with its parameters, types, defaults, lines of
description, whether it writes and what it raises, for the surfaces that derive from it.

:func:`operations` is what the server's method table, the remote client, the MCP tools and the
contract tests read; :func:`check_arguments` is the type check a server makes on arguments that
arrived as JSON (a list where a string belongs is an ``InputError`` naming the field, before the
method runs). Standard library only, like the declaration: importing it stays cheap.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Union, get_args, get_origin

from localmem.api import declaration
from localmem.api.declaration import SHARED, TIME_FORMAT, MemoryAPI, ProceduresAPI, ServedAPI
from localmem.errors import InputError, LocalMemError

#: where the result types the declaration names live (resolved only when a client decodes)
RESULT_TYPES = {
    "Applied": "localmem.infer.apply",
    "ConsolidationReport": "localmem.consolidation.model",
    "HistoryEvent": "localmem.types",
    "IngestReport": "localmem.types",
    "JobsReport": "localmem.store.kernel",
    "Link": "localmem.types",
    "MemoryItem": "localmem.types",
    "Procedure": "localmem.procedures.model",
    "ProcedureEvent": "localmem.procedures.model",
    "ProcedureMatch": "localmem.procedures.model",
    "ProcedureVersion": "localmem.procedures.model",
    "RecordResult": "localmem.procedures.model",
    "SearchResult": "localmem.types",
    "Session": "localmem.types",
    "StoredAttributes": "localmem.attributes.mined",
    "Thought": "localmem.types",
}

#: what exists only in process, by name: never part of the contract, never served
IN_PROCESS_ONLY = frozenset(
    {
        "actor",  # who this process is, for the history: never a client's to say
        "add_options",  # the composed mechanisms' add options (a client reads describe())
        "close",
        "config",
        "connect",
        "embedder",
        "engine",
        "jobs_for_add",
        "kernel",
        "open",
        "path",
        "peek_count",
        "plugins",
        "stage_names",
        "stages",
        "store",
    }
)


@dataclass(frozen=True)
class Param:
    """One parameter of an operation."""

    name: str
    annotation: str  #: the type as written in the declaration
    default: Any  #: ``inspect.Parameter.empty`` when required
    kind: inspect._ParameterKind
    description: str
    #: an in-process value (a callable): never sent to a server
    local: bool

    @property
    def required(self) -> bool:
        """Whether a call must give it."""
        return self.default is inspect.Parameter.empty and self.kind not in (
            inspect.Parameter.VAR_KEYWORD,
            inspect.Parameter.VAR_POSITIONAL,
        )

    @property
    def type(self) -> Any:
        """The parameter's type as a typing object."""
        return resolve(self.annotation)


@dataclass(frozen=True)
class Operation:
    """One operation of the public API."""

    name: str  #: as a client calls it: ``search``, ``procedures.find``
    params: tuple[Param, ...]
    returns: str  #: the result type as written
    summary: str  #: the first sentence of its description
    description: str  #: its description without the Args
    doc: str  #: the whole docstring, Args included
    writes: bool
    raises: tuple[type[LocalMemError], ...]
    #: memory, procedures (``memory.procedures``) or served (a server's own)
    owner: Literal["memory", "procedures", "served"]
    #: computed by a client itself (no request)
    local: bool
    signature: inspect.Signature  #: without ``self``

    @property
    def attribute(self) -> str:
        """Its name on the object that implements it (``find`` for ``procedures.find``)."""
        return self.name.rpartition(".")[2]

    def param(self, name: str) -> Param:
        """One parameter by name.

        Raises:
            KeyError: the operation has no such parameter.
        """
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(f"{self.name} has no parameter {name!r}")

    @property
    def result_type(self) -> Any:
        """The result type as a typing object (imports the modules of the result types)."""
        return resolve(self.returns, results=True)


@functools.cache
def operations() -> dict[str, Operation]:
    """Every operation a client may call, by name, in the declaration's order."""
    out: dict[str, Operation] = {}
    for owner, cls, prefix in (
        ("memory", MemoryAPI, ""),
        ("procedures", ProceduresAPI, "procedures."),
        ("served", ServedAPI, ""),
    ):
        for attr, fn in vars(cls).items():
            marks = getattr(fn, "__api__", None)
            if marks is None:
                continue
            op = _read(prefix + attr, fn, marks, owner)
            out[op.name] = op
    return out


def served() -> dict[str, Operation]:
    """The operations a server answers (all but those a client computes itself)."""
    return {name: op for name, op in operations().items() if not op.local}


def _read(name: str, fn: Callable[..., Any], marks: dict[str, Any], owner: Any) -> Operation:
    signature = inspect.signature(fn)
    doc = inspect.getdoc(fn) or ""
    text, args = _split_doc(doc)
    params = []
    for p in list(signature.parameters.values())[1:]:
        annotation = p.annotation if isinstance(p.annotation, str) else repr(p.annotation)
        line = args.get(p.name) or SHARED.get(p.name, "")
        if re.search(r"\bTime\b", annotation):
            line = f"{line.rstrip('.')}; {TIME_FORMAT}" if line else TIME_FORMAT
        params.append(
            Param(
                name=p.name,
                annotation=annotation,
                default=p.default,
                kind=p.kind,
                description=line,
                local=annotation.startswith("Callable"),
            )
        )
    return Operation(
        name=name,
        params=tuple(params),
        returns=str(signature.return_annotation),
        summary=_first_sentence(text),
        description=text,
        doc=doc,
        writes=marks["writes"],
        raises=marks["raises"],
        owner=owner,
        local=getattr(fn, "__api_local__", False),
        signature=signature.replace(parameters=list(signature.parameters.values())[1:]),
    )


def _split_doc(doc: str) -> tuple[str, dict[str, str]]:
    """A Google-style docstring's text (without its Args) and its Args, name -> one line."""
    text, _, rest = doc.partition("\nArgs:\n")
    args: dict[str, str] = {}
    current = None
    for line in rest.splitlines():
        if line and not line.startswith(" "):  # the next section (Returns:, Raises:...)
            break
        match = re.match(r"^ {4}(\*{0,2}\w+): (.*)$", line)
        if match:
            current = match.group(1).lstrip("*")
            args[current] = match.group(2).strip()
        elif current and line.strip():
            args[current] += " " + line.strip()
    return " ".join(text.split()), args


def _first_sentence(text: str) -> str:
    match = re.match(r"^(.+?[.:;])(\s|$)", text)
    return match.group(1) if match else text


# -- types -----------------------------------------------------------------------------------------
def namespace(*, results: bool = False, only: frozenset[str] | None = None) -> dict[str, Any]:
    """The names the declaration's annotations use (with ``results``: the result types too, or
    those of them in ``only``)."""
    names = {k: v for k, v in vars(declaration).items() if not k.startswith("__")}
    names.update(vars(typing))
    names.update(
        {
            "Sequence": Sequence,
            "Mapping": Mapping,
            "Callable": Callable,
            "datetime": datetime,
            "list": list,
            "dict": dict,
            "tuple": tuple,
        }
    )
    if results:
        for name, module in RESULT_TYPES.items():
            if only is None or name in only:
                names[name] = getattr(importlib.import_module(module), name)
    return names


@functools.lru_cache(maxsize=512)
def resolve(annotation: str, *, results: bool = False) -> Any:
    """An annotation of the declaration (a string) as a typing object.

    Raises:
        NameError: it names something the declaration does not know.
    """
    # only the result types this annotation names are imported: a client decoding a search
    # must not import the store's modules (the kernel's JobsReport, the procedures) for the rest
    used = frozenset(re.findall(r"\w+", annotation)) if results else None
    return eval(annotation, namespace(results=results, only=used))  # the declaration's own


def check_arguments(op: Operation, args: Mapping[str, Any]) -> None:
    """Check arguments that arrived as JSON against the operation's declared parameters: each is
    a parameter of it and of its declared type, the required ones are there. The implementation
    still checks values (ranges, ids, texts); this catches the wrong kinds of value first, with
    the field named, so none reaches the store.

    Raises:
        InputError: an unknown, missing or mistyped argument.
    """
    known = {p.name: p for p in op.params if not p.local}
    var_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in op.params)
    for name, value in args.items():
        param = known.get(name)
        if param is None:
            if var_keyword:
                continue
            names = ", ".join(known)
            raise InputError(f"{op.name} has no parameter {name!r} (parameters: {names})")
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        problem = _mismatch(param.type, value, name)
        if problem is not None:
            raise InputError(f"{op.name}: {problem}")
    missing = [p.name for p in known.values() if p.required and p.name not in args]
    if missing:
        raise InputError(f"{op.name} needs {', '.join(missing)}")


def _mismatch(kind: Any, value: Any, where: str) -> str | None:
    """None when ``value`` (decoded JSON) fits ``kind``, else what ``where`` must be; in a
    list, the first item that does not fit is named (``kinds[0]``)."""
    if _fits(kind, value):
        return None
    if isinstance(value, list):
        for container in (kind, *get_args(kind)):
            if get_origin(container) in (list, Sequence) and get_args(container):
                item = get_args(container)[0]
                for i, v in enumerate(value):
                    if not _fits(item, v):
                        return f"{where}[{i}] must be {describe(item)}, not {_json_name(v)}"
    return f"{where} must be {describe(kind)}, not {_json_name(value)}"


def _fits(kind: Any, value: Any) -> bool:
    origin, args = get_origin(kind), get_args(kind)
    if kind is Any:
        return True
    if kind is type(None) or kind is None:
        return value is None
    if origin in (Union, types.UnionType):
        return any(_fits(a, value) for a in args)
    if origin is Literal:
        return any(value == a and type(value) is type(a) for a in args)
    if kind is str:
        return isinstance(value, str) and _valid_text(value)
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is datetime:
        return False  # JSON has no datetime; a Time also admits text and numbers
    if origin in (list, tuple, Sequence, typing.Sequence) or kind in (list, tuple):
        if not isinstance(value, list):
            return False
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                return False
            return all(_fits(a, v) for a, v in zip(args, value, strict=True))
        item = args[0] if args else Any
        return all(_fits(item, v) for v in value)
    if origin in (dict, Mapping, typing.Mapping) or kind is dict:
        return isinstance(value, dict)  # its keys and values: the implementation's checks
    return True  # a type the JSON check has no rule for: the implementation checks it


def _valid_text(text: str) -> bool:
    """No lone surrogate (what a JSON "\\ud800" escape leaves; no store can hold it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def describe(kind: Any) -> str:
    """A type in words, for an error message: ``a string or null``, ``one of a, b``."""
    origin, args = get_origin(kind), get_args(kind)
    if kind is type(None) or kind is None:
        return "null"
    if origin in (Union, types.UnionType):
        words = [describe(a) for a in args if a is not datetime]
        return " or ".join(dict.fromkeys(words))
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in args)
    if origin in (list, tuple, Sequence, typing.Sequence) or kind in (list, tuple):
        return f"a list of {_plural(describe(args[0]))}" if args else "a list"
    if origin in (dict, Mapping, typing.Mapping) or kind is dict:
        return "an object"
    return {
        str: "a string (valid Unicode)",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        datetime: "a time",
    }.get(kind, getattr(kind, "__name__", str(kind)))


def _plural(words: str) -> str:
    for single, plural in (
        ("a string (valid Unicode)", "strings"),
        ("an integer", "integers"),
        ("a number", "numbers"),
        ("an object", "objects"),
    ):
        words = words.replace(single, plural)
    return words


def _json_name(value: Any) -> str:
    if isinstance(value, str) and not _valid_text(value):
        return "a string with a lone surrogate"
    return {
        type(None): "null",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)
