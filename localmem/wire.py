"""localmem's values as JSON and back: the one encoding of each value, on the wire (what the
server sends and its client reads), in the CLI's ``--json`` and in MCP.

:func:`encode` turns the dataclasses of :mod:`localmem.types` (and any other dataclass,
datetimes, paths, numpy scalars) into plain JSON values; :func:`decode` rebuilds a dataclass
from them by its type hints, so a client gets the same ``MemoryItem``, ``SearchResult`` and
``Session`` objects as an in-process caller. Errors travel as ``{"type", "message"}`` and come
back as the same class of :mod:`localmem.errors`.

- A memory is its record: every field of :class:`~localmem.types.MemoryItem` but the index's
  internal label.
- A search hit is flat: :func:`compact_hit` (id, content, score, relevance, kind, time,
  source: what an agent needs to use it) followed by its rank, evidence, flags and the rest of
  the memory's record. The compact form is what MCP gives by default, the full one on request.
- A history event, a session, a thought, an inference decision: their dataclass fields.
- An explanation: the list of stage reports (stage, implementation, candidates in and out,
  ms, notes), ``SearchResult.stages``.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping, Sequence
from dataclasses import Field, fields, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from localmem import errors
from localmem.types import Hit, MemoryItem

#: the fields of a hit's compact form, in order
COMPACT_HIT = ("id", "content", "score", "relevance", "kind", "time", "source")


def encode(value: Any) -> Any:
    """Dataclasses, datetimes and paths as plain JSON values."""
    if isinstance(value, Hit):
        return encode_hit(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in _public_fields(type(value))}
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, types.GeneratorType)):
        return [encode(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def decode(kind: Any, data: Any) -> Any:
    """``data`` (as :func:`encode` made it) as a value of type ``kind``.

    Raises:
        InputError: ``data`` does not have the shape of ``kind``.
    """
    try:
        return _decode(kind, data)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise errors.InputError(
            f"cannot read a {_name(kind)} from {str(data)[:80]!r}: {exc}"
        ) from None


def _decode(kind: Any, data: Any) -> Any:
    if data is None or kind is Any:
        return data
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return _decode(options[0], data) if len(options) == 1 else data
    if origin in (list, Sequence, set, frozenset):
        return [_decode(args[0] if args else Any, x) for x in data]
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], x) for x in data)
        return tuple(_decode(a, x) for a, x in zip(args, data, strict=True))
    if origin in (dict, Mapping) and len(args) == 2:
        return {key: _decode(args[1], value) for key, value in data.items()}
    if origin in (dict, Mapping) or origin is Literal:
        return data
    if kind is datetime:
        return datetime.fromisoformat(data)
    if kind is Hit:
        return _decode_hit(data)
    if isinstance(kind, type) and is_dataclass(kind):
        hints = _hints(kind)
        return kind(
            **{f.name: _decode(hints[f.name], data[f.name]) for f in fields(kind) if f.name in data}
        )
    return data


def source_of(memory: MemoryItem) -> str | None:
    """Where a memory came from, in a few words: the file of an ingested chunk (and its
    heading), else who said it (a message's speaker), else None."""
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    source = meta.get("source")
    if isinstance(source, str) and source:
        title = meta.get("title")
        return f"{source} ({title})" if isinstance(title, str) and title else source
    for key in ("speaker", "name"):
        if isinstance(meta.get(key), str) and meta[key]:
            return meta[key]
    return None


def compact_hit(hit: Hit) -> dict[str, Any]:
    """A hit as an agent needs it: id, content, score (orders this search only), relevance
    (the calibrated 0-1 chance it is relevant), kind, time (when it happened, else when it was
    stored) and source (:func:`source_of`)."""
    memory = hit.memory
    return {
        "id": memory.id,
        "content": memory.content,
        "score": encode(hit.score),
        "relevance": encode(hit.relevance),
        "kind": memory.kind,
        "time": memory.when.isoformat(),
        "source": source_of(memory),
    }


def encode_hit(hit: Hit) -> dict[str, Any]:
    """A hit in full: its compact form, then rank, evidence and flags, then the rest of the
    memory's record (a superset of :func:`compact_hit`, so a reader of one reads the other)."""
    record = encode(hit.memory)
    out = compact_hit(hit)
    out.update(rank=hit.rank, evidence=encode(hit.evidence), flags=list(hit.flags))
    out.update((k, v) for k, v in record.items() if k not in out)
    return out


def _decode_hit(data: dict[str, Any]) -> Hit:
    names = {f.name for f in fields(MemoryItem)}
    memory = _decode(MemoryItem, {k: v for k, v in data.items() if k in names})
    flags = tuple(data.get("flags") or ())
    evidence = dict(data.get("evidence") or {})
    return Hit(memory, data["score"], data["rank"], evidence, flags, data.get("relevance"))


@functools.lru_cache(maxsize=256)
def _public_fields(kind: type) -> tuple[Field, ...]:
    """A dataclass's fields, less those marked internal (``metadata={"wire": False}``)."""
    return tuple(f for f in fields(kind) if f.metadata.get("wire", True))


@functools.lru_cache(maxsize=256)
def _hints(kind: type) -> dict[str, Any]:
    """A dataclass's field types (evaluating string annotations is slow: once per class)."""
    return get_type_hints(kind)


def _name(kind: Any) -> str:
    return getattr(kind, "__name__", str(kind))


#: the error classes that cross the wire, by name
ERRORS: dict[str, type[errors.LocalMemError]] = {
    name: cls
    for name, cls in vars(errors).items()
    if isinstance(cls, type) and issubclass(cls, errors.LocalMemError)
}


def encode_error(exc: errors.LocalMemError) -> dict[str, str]:
    """An error as JSON: its class name and message."""
    return {"type": type(exc).__name__, "message": str(exc)}


def decode_error(data: Any) -> errors.LocalMemError:
    """The error the server raised, as the same class (a plain LocalMemError if unknown)."""
    if not isinstance(data, dict):
        return errors.LocalMemError(
            f"the server answered with an error it did not describe: {data!r}"
        )
    cls = ERRORS.get(str(data.get("type")), errors.LocalMemError)
    message = str(data.get("message", "failed"))
    if cls is errors.StoreLockedError:  # its constructor builds the message itself
        return errors.StoreError(message)
    return cls(message)
