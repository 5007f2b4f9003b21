"""localmem's values as JSON and back: what the server sends and its client reads.

:func:`encode` turns the dataclasses of :mod:`localmem.types` (and any other dataclass,
datetimes, paths, numpy scalars) into plain JSON values; :func:`decode` rebuilds a dataclass
from them by its type hints, so a client gets the same ``MemoryItem``, ``SearchResult`` and
``Session`` objects as an in-process caller. Errors travel as ``{"type", "message"}`` and come
back as the same class of :mod:`localmem.errors`.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from localmem import errors


def encode(value: Any) -> Any:
    """Dataclasses, datetimes and paths as plain JSON values."""
    if is_dataclass(value) and not isinstance(value, type):
        return encode(asdict(value))
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
    if isinstance(kind, type) and is_dataclass(kind):
        hints = _hints(kind)
        return kind(
            **{f.name: _decode(hints[f.name], data[f.name]) for f in fields(kind) if f.name in data}
        )
    return data


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
