"""Stores to files and back: ``localmem export`` (JSON lines), ``localmem import`` (into a new
store) and ``localmem import mem0`` (memories exported from mem0 become localmem memories).

An export is what :meth:`localmem.api.MemoryAPI.export` returns, one JSON object a line; it is
taken through the declared API, so a store a server holds is exported by the server, as one
consistent moment, while it keeps serving. Loading writes rows (:mod:`localmem.store.dump`),
so it needs the store open in this process, new and empty.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from localmem.api import MemoryAPI
from localmem.errors import InputError
from localmem.memory import Memory
from localmem.store import dump
from localmem.store.address import StoreAddress


def write_export(memory: MemoryAPI, out: IO[str]) -> dict[str, int]:
    """Write a store's export to ``out`` as JSON lines; returns rows per table."""
    lines = memory.export()
    for line in lines:
        out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    return dump.read_header(lines[0])


def read_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, one a line (blank lines skipped).

    Raises:
        InputError: a line that is not a JSON object (its number named).
    """
    with open(path, encoding="utf-8") as f:
        for n, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{n}: not JSON ({exc.msg})") from None
            if not isinstance(value, dict):
                raise InputError(f"{path}:{n}: not a JSON object")
            yield value


def import_export(
    store: str | Path | StoreAddress, lines: Iterable[Mapping[str, Any]]
) -> dict[str, int]:
    """Load an export into the store at ``store`` (created if new; it must hold no memory), in
    one transaction; returns rows per table. The store is opened again after, so its vector
    index and postings are built from the loaded rows before this returns.

    Raises:
        InputError: the lines are not a complete localmem export.
        StoreError: the store holds memories, or lacks a table of the export.
    """
    with Memory.open(store) as memory:
        counts = dump.load(memory.kernel.store, lines)
    with Memory.open(store, create=False):
        pass  # opening catches the vector index up with the loaded rows
    return counts


def mem0_items(data: Any) -> list[Mapping[str, Any]]:
    """The memories of mem0's ``get_all`` output (``{"results": [...]}`` or the bare list).

    Raises:
        InputError: neither shape.
    """
    items = data.get("results") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise InputError(
            'not mem0\'s get_all output: expected {"results": [...]} or a list of memories'
        )
    return items


def import_mem0(memory: MemoryAPI, data: Any) -> int:
    """Add mem0's exported memories to a store: the text, its scopes (``run_id`` becomes the
    session), ``created_at`` as the event time, the metadata (``role`` and ``actor_id`` kept
    in it) and mem0's own id, hash and times under ``metadata.mem0``. Returns how many were
    added; nothing is added when one of them is invalid.

    Raises:
        InputError: not mem0's output, or a memory without text or with a bad time.
    """
    rows = []
    for i, item in enumerate(mem0_items(data)):
        text = item.get("memory")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"mem0 memory {i} has no text ('memory')")
        metadata = dict(item.get("metadata") or {})
        for key in ("role", "actor_id"):
            if item.get(key) is not None:
                metadata[key] = item[key]
        metadata["mem0"] = {
            k: item[k] for k in ("id", "hash", "created_at", "updated_at") if item.get(k)
        }
        rows.append(
            {
                "content": text,
                "kind": "fact",
                "user_id": item.get("user_id"),
                "agent_id": item.get("agent_id"),
                "session_id": item.get("run_id"),
                "event_time": _aware(item.get("created_at"), i),
                "metadata": metadata,
            }
        )
    if not rows:
        return 0
    return len(memory.add_many(rows, infer=False))


def _aware(value: Any, i: int) -> str | None:
    """mem0's time (ISO 8601, with an offset or, from some vector stores, without: read as
    UTC) as localmem takes it."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"mem0 memory {i}: created_at must be an ISO 8601 text")
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"mem0 memory {i}: created_at {value!r} is not ISO 8601") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.isoformat()
