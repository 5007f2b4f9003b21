"""What the screens read from a store, gathered in one call each (run in worker threads).

These functions use the Memory API where it has what a view needs and the store's tables
(attributes, links) where it does not yet; they never write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from localmem.store import records
from localmem.types import HistoryEvent, MemoryItem, Session

if TYPE_CHECKING:
    from localmem.memory import Memory

#: how many memories a list shows at most (newest first); search reaches the rest
LIST_LIMIT = 500


@dataclass(frozen=True)
class Source:
    """One entry of the browse list: every memory, a session, or one user's memories."""

    key: str  # "all", "s:<session id>" or "u:<user id>"
    title: str
    count: int
    session: Session | None = None


@dataclass(frozen=True)
class Row:
    """One memory in a list, with its number when it is a thought of a session."""

    item: MemoryItem
    number: int | None = None


@dataclass(frozen=True)
class Link:
    """A link of the shown memory to another one."""

    direction: str  # "out" (this -> other) or "in" (other -> this)
    kind: str
    weight: float
    reason: str | None
    other: MemoryItem | None  # None when the other memory is gone


@dataclass(frozen=True)
class Attribute:
    """One mined attribute (MemInsight): axis, value, rank, score, and who mined it."""

    axis: str
    value: str
    rank: int
    score: float | None
    miner: str | None


@dataclass
class Detail:
    """Everything the detail pane shows about one memory."""

    item: MemoryItem
    session: Session | None = None
    thought: dict[str, Any] | None = None  # number, branch_id, branch_from, revises
    attributes: list[Attribute] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)


def sources(memory: Memory) -> list[Source]:
    """The browse list: all memories, then sessions (newest first), then user scopes."""
    db = memory.store.db
    out = [Source("all", "All memories", memory.count())]
    out += [Source(f"s:{s.id}", s.title, s.thought_count, s) for s in memory.sessions(limit=200)]
    users = db.fetchall(
        "SELECT user_id, count(*) FROM memories WHERE NOT deleted AND user_id IS NOT NULL "
        "AND session_id IS NULL GROUP BY 1 ORDER BY 1 LIMIT 200"
    )
    out += [Source(f"u:{user}", f"user {user}", int(n)) for user, n in users]
    return out


def rows(memory: Memory, key: str) -> list[Row]:
    """The memories of one browse entry: a session's thoughts in order, else newest first."""
    if key.startswith("s:"):
        return [Row(t.memory, t.number) for t in memory.thoughts(key[2:])]
    if key.startswith("u:"):
        items = records.fetch(
            memory.store.db,
            "NOT deleted AND user_id = ? AND session_id IS NULL",
            [key[2:]],
            order=f"ORDER BY coalesce(event_time, created_at), label LIMIT {LIST_LIMIT}",
        )
        return [Row(i) for i in items]
    return [Row(i) for i in memory.list(limit=LIST_LIMIT)]


def detail(memory: Memory, memory_id: str) -> Detail:
    """The memory with its session, attributes, links (both ways) and full history."""
    item = memory.get(memory_id, include_deleted=True)
    db = memory.store.db
    out = Detail(item, history=memory.history(item.id))
    row = db.fetchone(
        "SELECT session_id, number, branch_id, branch_from, revises FROM thoughts "
        "WHERE memory_id = ?",
        [item.id],
    )
    if row is not None:
        names = ("number", "branch_id", "branch_from", "revises")
        out.thought = dict(zip(names, row[1:], strict=True))
    if item.session_id:
        try:
            out.session = memory.get_session(item.session_id)
        except Exception:  # a memory may name a session that was never started here
            out.session = None
    out.attributes = [
        Attribute(axis, value, int(rank), score, miner)
        for axis, value, rank, score, miner in db.fetchall(
            "SELECT axis, value, rank, score, miner FROM attributes WHERE memory_id = ? "
            "ORDER BY axis, rank, value",
            [item.id],
        )
    ]
    links = db.fetchall(
        "SELECT src, dst, kind, weight, reason FROM links WHERE src = ? OR dst = ? "
        "ORDER BY weight DESC, kind, src, dst",
        [item.id, item.id],
    )
    others = records.fetch_by_ids(db, [dst if src == item.id else src for src, dst, *_ in links])
    for src, dst, kind, weight, reason in links:
        other_id = dst if src == item.id else src
        out.links.append(
            Link(
                "out" if src == item.id else "in",
                kind,
                float(weight),
                reason,
                others.get(other_id),
            )
        )
    return out


def history_value(event: HistoryEvent) -> str:
    """What changed in one history event, on one line."""
    if event.event == "ADD":
        return "created"
    if event.field is None:
        return event.event.lower()
    old = _short(event.old_value)
    new = _short(event.new_value)
    return f"{event.field}: {old} → {new}"


def _short(value: str | None, width: int = 60) -> str:
    if value is None:
        return "∅"
    text = " ".join(value.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def metadata_text(meta: dict[str, Any]) -> str:
    """Metadata as compact JSON for display."""
    return json.dumps(meta, ensure_ascii=False, sort_keys=True) if meta else ""


def age(then: datetime, now: datetime) -> str:
    """How long ago, roughly (``3d``, ``5h``, ``2m``, ``now``)."""
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return "now"
