"""What the screens read from a store, gathered in one call each (run in worker threads).

These functions use the Memory API where it has what a view needs and the store's tables
(attributes, links) where it does not yet; they never write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

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
    out = [Source("all", "All memories", memory.count())]
    out += [Source(f"s:{s.id}", s.title, s.thought_count, s) for s in memory.sessions(limit=200)]
    out += [Source(f"u:{user}", f"user {user}", n) for user, n in memory.users(limit=200)]
    return out


def rows(memory: Memory, key: str) -> list[Row]:
    """The memories of one browse entry: a session's thoughts in order, else newest first."""
    if key.startswith("s:"):
        return [Row(t.memory, t.number) for t in memory.thoughts(key[2:])]
    if key.startswith("u:"):
        items = memory.list(user_id=key[2:], in_session=False, oldest_first=True, limit=LIST_LIMIT)
        return [Row(i) for i in items]
    return [Row(i) for i in memory.list(limit=LIST_LIMIT)]


def detail(memory: Memory, memory_id: str) -> Detail:
    """The memory with its session, attributes, links (both ways) and full history."""
    item = memory.get(memory_id, include_deleted=True)
    out = Detail(item, history=memory.history(item.id))
    out.thought = memory.thought_of(item.id)
    if item.session_id:
        try:
            out.session = memory.get_session(item.session_id)
        except Exception:  # a memory may name a session that was never started here
            out.session = None
    mined = memory.attributes_of([item.id]).get(item.id)
    if mined is not None:
        out.attributes = sorted(
            (
                Attribute(a.axis, a.value, a.rank, a.score, mined.mined.miner)
                for a in mined.mined.attributes
            ),
            key=lambda a: (a.axis, a.rank, a.value),
        )
    links = sorted(
        memory.links(item.id),
        key=lambda ln: (
            -ln.weight,
            ln.kind,
            *((item.id, ln.other) if ln.direction == "to" else (ln.other, item.id)),
        ),
    )
    others = {i.id: i for i in memory.get_many(sorted({ln.other for ln in links}))}
    for ln in links:
        out.links.append(
            Link(
                "out" if ln.direction == "to" else "in",
                ln.kind,
                ln.weight,
                ln.reason,
                others.get(ln.other),
            )
        )
    return out


def history_value(event: HistoryEvent) -> str:
    """What changed in one history event, on one line."""
    why = ""
    if event.info and event.info.get("reason"):  # an inference decision says why and by what
        why = f"  ({_short(event.info['reason'], 50)}; {event.info.get('decider', '?')})"
    if event.event == "ADD":
        return "created"
    if event.field is None:
        return event.event.lower() + why
    old = _short(event.old_value)
    new = _short(event.new_value)
    return f"{event.field}: {old} → {new}{why}"


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
