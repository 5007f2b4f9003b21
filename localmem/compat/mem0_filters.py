"""mem0's filters and scopes read for localmem (:mod:`localmem.compat.mem0`): the entity ids
become localmem's scopes, plain equalities go to the store's own metadata filter, and the rest
(mem0's operators, ``AND``/``OR``/``NOT``, the ``*`` wildcard, expiration dates) is applied to
what the store returns."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, timezone
from typing import Any

from localmem.errors import InputError
from localmem.types import MemoryItem


def scope_of(
    user_id: str | None, agent_id: str | None, run_id: str | None, *, required: bool
) -> dict[str, Any]:
    scope = {
        key: value
        for key, value in (("user_id", user_id), ("agent_id", agent_id), ("session_id", run_id))
        if value is not None
    }
    if required and not scope:
        raise InputError("one of user_id, agent_id or run_id is required")
    return scope


def split_filters(
    user_id: str | None,
    agent_id: str | None,
    run_id: str | None,
    filters: Mapping[str, Any] | None,
) -> tuple[dict[str, str], dict[str, Any], dict[str, Any]]:
    """(scope, plain equalities the store matches itself, the rest of the filter) from the 1.x
    arguments and the 2.x ``filters``."""
    rest = dict(filters or {})
    scope = scope_of(
        user_id if user_id is not None else rest.pop("user_id", None),
        agent_id if agent_id is not None else rest.pop("agent_id", None),
        run_id if run_id is not None else rest.pop("run_id", None),
        required=True,
    )
    for key in ("user_id", "agent_id", "run_id"):
        rest.pop(key, None)
    plain = {
        key: value
        for key, value in rest.items()
        if key not in LOGIC and value != "*" and isinstance(value, str | int | float | bool)
    }
    tree = {key: value for key, value in rest.items() if key not in plain}
    check_tree(tree)
    return scope, plain, tree


LOGIC = ("AND", "OR", "NOT")
OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")


def check_tree(tree: Mapping[str, Any]) -> None:
    for key, value in tree.items():
        if key in LOGIC:
            if not isinstance(value, list) or not value:
                raise InputError(f"filter {key} needs a non-empty list of conditions")
            for part in value:
                if not isinstance(part, Mapping):
                    raise InputError(f"filter {key}: each condition is an object")
                check_tree(part)
        elif isinstance(value, Mapping):
            unknown = set(value) - set(OPERATORS)
            if unknown:
                raise InputError(
                    f"filter {key!r}: unsupported operator(s) {sorted(unknown)} "
                    f"(supported: {', '.join(OPERATORS)})"
                )


def passes(metadata: Mapping[str, Any], tree: Mapping[str, Any]) -> bool:
    """Whether a memory's metadata passes a mem0 filter (its operators, AND, OR, NOT and the
    ``*`` wildcard, which asks for the field to be there)."""
    for key, cond in tree.items():
        if key == "AND":
            ok = all(passes(metadata, part) for part in cond)
        elif key == "OR":
            ok = any(passes(metadata, part) for part in cond)
        elif key == "NOT":
            ok = not any(passes(metadata, part) for part in cond)
        elif cond == "*":
            ok = key in metadata
        elif isinstance(cond, Mapping):
            # a missing field is None: ne and nin hold for it, the rest do not
            ok = all(_compare(metadata.get(key), op, arg) for op, arg in cond.items())
        else:
            ok = metadata.get(key) == cond
        if not ok:
            return False
    return True


def _compare(value: Any, op: str, arg: Any) -> bool:
    try:
        if op == "eq":
            return value == arg
        if op == "ne":
            return value != arg
        if op == "gt":
            return value > arg
        if op == "gte":
            return value >= arg
        if op == "lt":
            return value < arg
        if op == "lte":
            return value <= arg
        if op == "in":
            return value in arg
        if op == "nin":
            return value not in arg
        if op == "contains":
            return arg in value
        if op == "icontains":
            if isinstance(value, str):
                return str(arg).lower() in value.lower()
            return any(str(arg).lower() == str(v).lower() for v in value)
    except TypeError:  # a field of another type than the filter's: no match
        return False
    return False


def expired(item: MemoryItem) -> bool:
    """Whether a memory's ``expiration_date`` (mem0's YYYY-MM-DD) has passed."""
    until = (item.metadata or {}).get("expiration_date")
    if not isinstance(until, str):
        return False
    try:
        return date.fromisoformat(until) < datetime.now(timezone.utc).date()
    except ValueError:
        return False


def expiration(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, date):
        return value.isoformat()[:10]
    try:
        return date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise InputError("expiration_date must be a date in YYYY-MM-DD format") from None
