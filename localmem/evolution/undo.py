"""Every version of a memory's context, and undoing evolution (recorded as REVERT)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from localmem.errors import InputError
from localmem.evolution import steps
from localmem.store import history as history_rows
from localmem.store import memories
from localmem.store.kernel import HasKernel, Kernel, kernel_of
from localmem.store.links import remove_link

if TYPE_CHECKING:
    from localmem.store.unit import Write
    from localmem.types import HistoryEvent, MemoryItem

log = logging.getLogger("localmem")


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


def _context_events(kernel: Kernel, memory_id: str) -> tuple[MemoryItem, list[HistoryEvent]]:
    item = memories.get(kernel, memory_id)
    events = [e for e in memories.history(kernel, item.id) if e.field == "context"]
    return item, events


def context_versions(memory: Kernel | HasKernel, memory_id: str) -> list[ContextVersion]:
    """The context as added, then after every change, oldest first."""
    kernel = kernel_of(memory)
    item, events = _context_events(kernel, memory_id)
    added = next(e for e in memories.history(kernel, item.id) if e.event == "ADD")
    first = events[0].old_value if events else item.context
    out = [ContextVersion(0, first, "ADD", added.id, added.actor, added.at, {})]
    for n, e in enumerate(events, start=1):
        out.append(ContextVersion(n, e.new_value, e.event, e.id, e.actor, e.at, dict(e.info)))
    return out


def revert(
    memory: Kernel | HasKernel, memory_id: str, *, to: int | None = None, actor: str = "user"
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
    kernel = kernel_of(memory)
    item, events = _context_events(kernel, memory_id)
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
    db = kernel.db

    def unlink() -> None:
        for source in sources:
            remove_link(db, source, item.id)
            steps.mark_reverted(db, source, item.id)

    return memories.update(
        kernel,
        item.id,
        context=target if target is not None else "",
        actor=actor,
        event="REVERT",
        info={"to": undone[0].id, "reverted": [e.id for e in undone], "unlinked": sources},
        also=unlink,
    )


def forget_source(kernel: Kernel, memory_id: str) -> list[str]:
    """Before a memory is purged: undo the contexts it evolved, so its words leave them too.

    Each context this memory rewrote is reverted (REVERT by ``purge``) when that rewrite is
    still its latest change, and the history of that rewrite loses its text. Returns the ids of
    memories whose context changed again since (or that are deleted): their current context
    may still carry words of the purged memory, and is left for a person to check.
    """
    db = kernel.db
    left = []
    for neighbour, history_id in steps.rewrites_by(db, memory_id):
        item = memories.by_ids(kernel, [neighbour]).get(neighbour)
        latest = history_rows.latest_history_id(db, neighbour, field="context")
        if item is None or item.deleted or latest != history_id:
            left.append(neighbour)
            continue
        revert(kernel, neighbour, actor="purge")
        with kernel.writing() as write:  # the rewrite and its undo held the purged memory's words
            history_rows.scrub_history(
                write.db, history_id, new=True, info={"source": memory_id, "scrubbed": True}
            )
            undo = history_rows.latest_history_id(write.db, neighbour, event="REVERT")
            if undo is not None:
                history_rows.scrub_history(write.db, undo, old=True)
    return left


def before_purge(kernel: Kernel, memory_id: str) -> None:
    """The purge hook: contexts the memory evolved lose its words (see :func:`forget_source`)."""
    for other in forget_source(kernel, memory_id):
        log.warning("purge: the context of %s changed since %s evolved it", other, memory_id)


def on_purge(write: Write, memory_id: str) -> None:
    """The purge hook inside the purge's unit: the memory's evolution steps go."""
    steps.forget(write.db, memory_id)
