"""What an update of a memory changes: the fields asked for, validated, compared with the memory
as its unit reads it (:func:`localmem.store.memories.update`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from localmem import validate
from localmem.types import MemoryItem, embedding_text

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel


def wanted_fields(kernel: Kernel, asked: Mapping[str, Any]) -> dict[str, Any]:
    """The fields an update asks for (those not None), validated: field -> new value."""
    limit = kernel.config.store.max_content_chars
    checks: dict[str, Callable[[Any], Any]] = {
        "content": lambda v: validate.content(v, max_chars=limit),
        "context": lambda v: validate.optional_text(v, max_chars=limit, what="context"),
        "metadata": lambda v: validate.metadata(dict(v)),
        "event_time": validate.timestamp,
    }
    return {name: checks[name](value) for name, value in asked.items() if value is not None}


def changed_fields(item: MemoryItem, wanted: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """What differs between a memory and the fields asked for: field -> (old, new)."""
    return {k: (getattr(item, k), v) for k, v in wanted.items() if v != getattr(item, k)}


def text_after(item: MemoryItem, changes: Mapping[str, tuple[Any, Any]]) -> str | None:
    """The text to embed after ``changes`` (None when neither content nor context changes)."""
    if "content" not in changes and "context" not in changes:
        return None
    return embedding_text(
        changes.get("content", (None, item.content))[1],
        changes.get("context", (None, item.context))[1],
    )
