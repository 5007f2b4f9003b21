"""mem0's shapes (:mod:`localmem.compat.mem0`): a localmem memory as mem0's result item, its
history as mem0's history rows, and mem0's accepted message inputs read as a list."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from localmem.errors import InputError
from localmem.types import HistoryEvent, MemoryItem

#: what mem0 keeps beside the text and promotes out of the metadata of a result
PROMOTED = ("role", "actor_id")


def to_mem0(item: MemoryItem, *, score: float | None = None) -> dict[str, Any]:
    """A localmem memory in mem0's result shape."""
    metadata = dict(item.metadata or {})
    out: dict[str, Any] = {
        "id": item.id,
        "memory": item.content,
        "hash": hashlib.md5(item.content.encode("utf-8")).hexdigest(),
        "metadata": None,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
    }
    if score is not None:
        out["score"] = score
    for key, value in (
        ("user_id", item.user_id),
        ("agent_id", item.agent_id),
        ("run_id", item.session_id),
    ):
        if value is not None:
            out[key] = value
    for key in PROMOTED:
        if key in metadata:
            out[key] = metadata.pop(key)
    out["metadata"] = metadata or None
    return out


def history_to_mem0(item: MemoryItem, events: Sequence[HistoryEvent]) -> list[dict[str, Any]]:
    """localmem's history of a memory as mem0's history rows: its ADD, every change of its
    text, its DELETE (other fields' changes, which mem0 does not record, are left out)."""
    texts = [e for e in events if e.field == "content" and e.event != "ADD"]
    first = texts[0].old_value if texts else item.content
    role = (item.metadata or {}).get("role")
    out = []
    for event in events:
        if event.event == "ADD":
            old, new = None, first
        elif event.field == "content":
            old, new = event.old_value, event.new_value
        elif event.event in ("DELETE", "PURGE"):
            old, new = (item.content or None), None
        else:
            continue
        name = "DELETE" if event.event in ("DELETE", "PURGE") else event.event
        if name not in ("ADD", "UPDATE", "DELETE"):
            name = "UPDATE"  # an evolution or revert of the text is an update to mem0
        out.append(
            {
                "id": str(event.id),
                "memory_id": item.id,
                "old_memory": old,
                "new_memory": new,
                "event": name,
                "created_at": event.at.isoformat(),
                "updated_at": event.at.isoformat(),
                "is_deleted": name == "DELETE",
                "actor_id": event.actor,
                "role": role,
            }
        )
    return out


def messages_of(messages: Any) -> list[dict[str, Any]]:
    """mem0's accepted inputs as a list of ``{"role", "content", "name"?}``."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, Sequence) or not messages:
        raise InputError("messages must be a text, a message or a non-empty list of messages")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            raise InputError(f"message {i} must be a dict with a 'content' text")
        role = message.get("role", "user")
        if role == "system":
            continue  # instructions to a model, not something a person said
        out.append({"role": str(role), "content": message["content"], "name": message.get("name")})
    if not out:
        raise InputError("messages hold nothing but system messages")
    return out
