"""Every version of a memory's context, and undoing evolution (recorded as REVERT)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from localmem.errors import InputError
from localmem.evolution import steps
from localmem.evolution.links import remove_link

if TYPE_CHECKING:
    from localmem.memory import Memory
    from localmem.types import HistoryEvent, MemoryItem


@dataclass(frozen=True)
class ContextVersion:
    """One version of a memory's context and the change that made it."""

    number: int  # 0 is the context the memory was added with
    context: str | None
    event: str  # ADD, UPDATE, EVOLVE or REVERT
    event_id: int | None
    actor: str
    at: datetime
    info: dict[str, Any]


def _context_events(memory: Memory, memory_id: str) -> tuple[MemoryItem, list[HistoryEvent]]:
    item = memory.get(memory_id)
    events = [e for e in memory.history(item.id) if e.field == "context"]
    return item, events


def context_versions(memory: Memory, memory_id: str) -> list[ContextVersion]:
    """The context as added, then after every change, oldest first."""
    item, events = _context_events(memory, memory_id)
    added = next(e for e in memory.history(item.id) if e.event == "ADD")
    first = events[0].old_value if events else item.context
    out = [ContextVersion(0, first, "ADD", added.id, added.actor, added.at, {})]
    for n, e in enumerate(events, start=1):
        out.append(ContextVersion(n, e.new_value, e.event, e.id, e.actor, e.at, dict(e.info)))
    return out


def revert(
    memory: Memory, memory_id: str, *, to: int | None = None, actor: str = "user"
) -> MemoryItem:
    """Undo evolution of a memory's context; the undo itself is a REVERT event.

    Without ``to``, the latest context change is undone, which must be an EVOLVE. With ``to``
    (a history event id of a context change of this memory), the context goes back to what it
    was before that event, undoing every change since. Links that the undone evolutions made
    to this memory are removed with it, in the same transaction.

    Raises:
        InputError: nothing to revert, or ``to`` is not a context change of this memory.
        NotFoundError: no such memory.
    """
    item, events = _context_events(memory, memory_id)
    if not events:
        raise InputError(f"memory {item.id} has no context change to revert")
    if to is None:
        last = events[-1]
        if last.event != "EVOLVE":
            raise InputError(
                f"the latest context change of {item.id} is {last.event} #{last.id}, not an "
                "evolution; name the event to go back to (--to EVENT_ID)"
            )
        undone = [last]
    else:
        index = next((i for i, e in enumerate(events) if e.id == to), None)
        if index is None:
            known = ", ".join(f"#{e.id}" for e in events)
            raise InputError(f"event #{to} is not a context change of {item.id} (known: {known})")
        undone = events[index:]
    target = undone[0].old_value
    sources = [e.info["source"] for e in undone if e.event == "EVOLVE" and e.info.get("source")]
    db = memory.store.db

    def unlink() -> None:
        for source in sources:
            remove_link(db, source, item.id)
            steps.mark_reverted(db, source, item.id)

    return memory.update(
        item.id,
        context=target if target is not None else "",
        actor=actor,
        event="REVERT",
        info={"to": undone[0].id, "reverted": [e.id for e in undone], "unlinked": sources},
        also=unlink,
    )


def forget_source(memory: Memory, memory_id: str) -> list[str]:
    """Before a memory is purged: undo the contexts it evolved, so its words leave them too.

    Each context this memory rewrote is reverted (REVERT by ``purge``) when that rewrite is
    still its latest change, and the history of that rewrite loses its text. Returns the ids of
    memories whose context changed again since (or that are deleted): their current context
    may still carry words of the purged memory, and is left for a person to check.
    """
    db = memory.store.db
    rows = db.fetchall(
        "SELECT neighbour, history_id FROM evolution_steps "
        "WHERE source = ? AND status = 'updated' AND history_id IS NOT NULL",
        [memory_id],
    )
    left = []
    for neighbour, history_id in rows:
        deleted = db.scalar("SELECT deleted FROM memories WHERE id = ?", [neighbour])
        latest = db.scalar(
            "SELECT max(id) FROM history WHERE memory_id = ? AND field = 'context'", [neighbour]
        )
        if deleted or latest != history_id:
            left.append(neighbour)
            continue
        revert(memory, neighbour, actor="purge")
        with db.transaction():  # the rewrite and its undo held the purged memory's words
            db.execute(
                "UPDATE history SET new_value = NULL, info = ?::JSON WHERE id = ?",
                [json.dumps({"source": memory_id, "scrubbed": True}), history_id],
            )
            db.execute(
                "UPDATE history SET old_value = NULL WHERE id = (SELECT max(id) FROM history "
                "WHERE memory_id = ? AND event = 'REVERT')",
                [neighbour],
            )
    return left
