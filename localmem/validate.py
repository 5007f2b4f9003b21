"""Checks on what callers hand in, each failing with a clear :class:`InputError`."""

from __future__ import annotations

import functools
import inspect
import json
import math
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, ParamSpec, TypeVar

from localmem.errors import ArgumentsError, InputError
from localmem.types import KINDS, LEVELS

P = ParamSpec("P")
R = TypeVar("R")

#: how deeply metadata may nest (dicts and lists); deeper is refused before json.dumps recurses
MAX_METADATA_DEPTH = 32
#: the largest ``limit`` a listing accepts (more rows than this is not a listing)
MAX_LIMIT = 1_000_000


def no_surrogates(value: str, what: str) -> str:
    """``value`` when it encodes as UTF-8; a lone surrogate (``"\\ud800"``) is refused.

    Lone surrogates are what a broken decoder or a JSON ``"\\ud800"`` escape leaves in a str;
    neither DuckDB nor the tokenizer can store or read them, and replacing them would store
    something the caller did not write, so they are refused with the field named.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"{what} holds a lone surrogate (\\u{ord(value[exc.start]):04x} at {exc.start}), "
            "which is not valid Unicode text"
        ) from None
    return value


def no_nul(value: str, what: str) -> str:
    """``value`` when it holds no NUL character: PostgreSQL cannot store one in text (DuckDB
    can, so the rule is the same on both backends), and no id or metadata needs one."""
    if "\x00" in value:
        raise InputError(f"{what} contains a NUL character")
    return value


def content(value: Any, *, max_chars: int, what: str = "content") -> str:
    """Text of a memory: a non-empty str (UTF-8 bytes are decoded) within the size limit."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{what} is not valid UTF-8 (byte {exc.start})") from None
    if not isinstance(value, str):
        raise InputError(f"{what} must be text, not {type(value).__name__}")
    no_surrogates(value, what)
    if "\x00" in value:
        raise InputError(f"{what} contains a NUL character")
    if not value.strip():
        raise InputError(f"{what} is empty")
    if len(value) > max_chars:
        raise InputError(
            f"{what} has {len(value):,} characters, more than the limit of {max_chars:,} "
            "(raise store.max_content_chars, or ingest the text as a document: it is chunked)"
        )
    return value


def optional_text(value: Any, *, max_chars: int, what: str) -> str | None:
    """Like :func:`content` but None (or blank) is allowed and means "none"."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return content(value, max_chars=max_chars, what=what)


def kind(value: Any) -> str:
    """One of the memory kinds."""
    if value not in KINDS:
        raise InputError(f"unknown kind {value!r}; known: {', '.join(KINDS)}")
    return value


def level(value: Any) -> str:
    """One of the consolidation levels."""
    if value not in LEVELS:
        raise InputError(f"unknown level {value!r}; known: {', '.join(LEVELS)}")
    return value


def scope_id(value: Any, what: str) -> str | None:
    """A user, agent or session id: None or a short non-empty string."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{what} must be a non-empty string")
    if len(value) > 256:
        raise InputError(f"{what} is longer than 256 characters")
    return no_nul(no_surrogates(value, what), what)


def identifier(value: Any, what: str) -> str:
    """An id (or id prefix) to look something up by: a non-empty string, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{what} must be a non-empty string")
    if len(value) > 256:
        raise InputError(f"{what} is longer than 256 characters")
    return no_nul(no_surrogates(value.strip(), what), what)


def timestamp(value: Any, what: str = "event_time") -> datetime | None:
    """An aware datetime from a datetime, an ISO-8601 string with offset, or epoch seconds."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(f"{what} must be a time, not a boolean")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InputError(f"{what} is not a finite number")
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise InputError(f"{what} {value} is out of range") from None
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("nan", "inf", "-inf"):
            raise InputError(f"{what} is not a time: {value!r}")
        try:
            value = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except (ValueError, OverflowError):
            raise InputError(f"{what} is not an ISO-8601 time: {value!r}") from None
    if not isinstance(value, datetime):
        raise InputError(f"{what} must be a datetime, an ISO-8601 string or epoch seconds")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InputError(
            f"{what} {value.isoformat()} has no time zone; pass an aware datetime "
            "(e.g. with tzinfo=timezone.utc) or an ISO string with an offset"
        )
    try:  # 9999-12-31T23:59:59-12:00 is a valid string but past datetime.max in UTC
        return value.astimezone(timezone.utc)
    except OverflowError:
        raise InputError(f"{what} {value.isoformat()} is out of range in UTC") from None


def metadata(value: Any, what: str = "metadata") -> dict[str, Any] | None:
    """A JSON-serialisable dict with string keys (or None), nested at most
    :data:`MAX_METADATA_DEPTH` deep, every string valid Unicode (no lone surrogates) without
    NUL characters."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(f"{what} must be a dict, not {type(value).__name__}")
    if not all(isinstance(k, str) for k in value):
        raise InputError(f"{what} keys must be strings")
    _check_json_tree(value, what)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} is not JSON-serialisable: {exc}") from None
    return value


def metadata_filter(value: Any) -> dict[str, Any] | None:
    """A filter on metadata: top-level keys, each with the string, number or boolean value a
    memory's metadata must hold there (search's and list's ``metadata``)."""
    meta = metadata(value)
    for key, wanted in (meta or {}).items():  # keys are top-level keys, matched exactly
        if isinstance(wanted, (dict, list)) or wanted is None:
            raise InputError(f"metadata filter {key!r} must name a string, number or boolean value")
    return meta


def _check_json_tree(value: Any, what: str) -> None:
    """Depth and strings of a metadata tree, walked without recursion (a 5,000-deep dict must
    give an InputError, not a RecursionError)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, what)]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, str):
            no_nul(no_surrogates(node, where), where)
            continue
        if not isinstance(node, (dict, list, tuple)):
            continue
        if depth > MAX_METADATA_DEPTH:
            raise InputError(f"{what} nests deeper than {MAX_METADATA_DEPTH} levels")
        if isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str):
                    no_nul(no_surrogates(key, f"a key of {where}"), f"a key of {where}")
                stack.append((child, depth + 1, f"{where}[{str(key)[:40]!r}]"))
        else:
            stack.extend((child, depth + 1, f"{where}[{i}]") for i, child in enumerate(node))


def positive_int(value: Any, what: str, *, maximum: int = 10_000) -> int:
    """An int in 1..maximum."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be an integer")
    if not 1 <= value <= maximum:
        raise InputError(f"{what} must be between 1 and {maximum}")
    return value


def non_negative_int(value: Any, what: str, *, maximum: int = 10**12) -> int:
    """An int in 0..maximum (an offset)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be an integer")
    if not 0 <= value <= maximum:
        raise InputError(f"{what} must be between 0 and {maximum}")
    return value


def arguments_checked(method: Callable[P, R]) -> Callable[P, R]:
    """``method``, with a call that does not fit its signature (an unknown option, a missing
    argument) refused as an :class:`ArgumentsError` naming what did not fit: every declared
    operation raises InputError on bad arguments (localmem.api), and a bare TypeError is not one.

    The wrapper keeps the method's signature for introspection (``inspect.signature`` follows
    ``__wrapped__``), so the contract sees the declared parameters.
    """
    signature = inspect.signature(method)

    @functools.wraps(method)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise ArgumentsError(f"{method.__name__}: {exc}") from None
        return method(*args, **kwargs)

    return checked
