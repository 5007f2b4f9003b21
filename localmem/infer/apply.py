"""Writing a plan (:mod:`localmem.infer.plan`): every decision of one add in one unit.

Each decision leaves a history row saying what was decided, why and by what (``model-free``,
``llama:<model>``, ``failed``), so a person can see which memories were superseded, when and
why (``localmem show``, the TUI's detail pane).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from localmem.infer.plan import Add, Decision, Invalidate, Skip, Update
from localmem.store import memories
from localmem.store.kernel import Kernel
from localmem.store.memories import JobRequest
from localmem.store.records import NewMemory
from localmem.store.unit import Write
from localmem.text import content_hash
from localmem.types import MemoryItem, embedding_text

ACTOR = "infer"


@dataclass(frozen=True)
class Applied:
    """One decision as written: the event, the memory that now holds the fact, the memory it
    touched (updated, superseded or repeated) and why."""

    event: str
    memory: MemoryItem
    target: MemoryItem | None
    reason: str
    decider: str


def _info(decision: Decision, **more: Any) -> dict[str, Any]:
    info = {
        "reason": decision.reason,
        "decider": decision.decider,
        "extracted_by": decision.fact.extracted_by,
    }
    if decision.fact.note:
        info["note"] = decision.fact.note
    return {**info, **more}


def apply(
    kernel: Kernel,
    decisions: Sequence[Decision],
    base: NewMemory,
    *,
    jobs: Sequence[JobRequest] = (),
) -> list[Applied]:
    """Write the decisions of one add in one unit; inline jobs run after its commit.

    ``base`` is the prepared memory of the add (scope, kind, time, metadata): each stored fact
    is a copy of it with the fact's text.
    """
    done: list[Applied] = []
    inline: list[int] = []
    ended: set[str] = set()  # memories superseded by this plan (a second fact just adds)
    with kernel.writing() as write:
        for d in decisions:
            d = _still_there(write, d)
            if isinstance(d, Skip):
                write.record(d.target.id, "REPEAT", new=d.fact.text, actor=ACTOR, info=_info(d))
                done.append(Applied("NONE", d.target, d.target, d.reason, d.decider))
                continue
            if isinstance(d, Update):
                current = write.current(d.target.id)
                assert current is not None  # _still_there
                if d.text != current.content:
                    text = embedding_text(d.text, current.context)
                    write.update_fields(
                        current,
                        {"content": (current.content, d.text)},
                        kernel.embedder.embed_batch([text])[0],
                        text,
                        actor=ACTOR,
                        event="UPDATE",
                        info=_info(d),
                    )
                done.append(Applied("UPDATE", current, d.target, d.reason, d.decider))
                continue
            text = d.fact.text
            row = replace(
                base,
                id=memories.new_id(),
                content=text,
                content_hash=content_hash(text),
                embed_hash=content_hash(embedding_text(text, base.context)),
            )
            vectors = None if base.context else d.fact.vector[None, :]
            (item,) = memories.add(kernel, [row], vectors=vectors)
            for kind, payload, mode in jobs:
                job = write.enqueue(kind, item.id, payload)
                if mode == "inline":
                    inline.append(job)
            if isinstance(d, Add) or d.target.id in ended or not _current(write, d.target):
                # an already superseded memory keeps the successor it has
                write.record(item.id, "INFER", new="ADD", actor=ACTOR, info=_info(d))
                done.append(Applied("ADD", item, None, d.reason, d.decider))
                continue
            assert isinstance(d, Invalidate)
            ended.add(d.target.id)
            item = _supersede(write, d, item)
            for other in d.also:  # other current values of the slot end too
                if other.id not in ended and _current(write, other) and _end(write, d, item, other):
                    ended.add(other.id)
            done.append(Applied("INVALIDATE", item, d.target, d.reason, d.decider))
    if inline:
        kernel.run_jobs(job_ids=inline)
    for a in done:
        if a.event == "UPDATE":
            kernel.changed(a.memory.id, "content")
    return [replace(a, memory=memories.get(kernel, a.memory.id)) for a in done]


def _current(write: Write, item: MemoryItem) -> bool:
    """Whether a memory is live and still true, as the unit reads it."""
    now = write.current(item.id)
    return now is not None and not now.deleted and now.valid_to is None


def _still_there(write: Write, d: Decision) -> Decision:
    """The decision, or an Add of its fact when the memory it was about was deleted after it
    was taken (by another writer: the decision was taken before this unit)."""
    if isinstance(d, Add):
        return d
    now = write.current(d.target.id)
    if now is not None and not now.deleted:
        return d
    return Add(d.fact, f"{d.reason}; its memory was deleted meanwhile: added", d.decider)


def _end(write: Write, d: Invalidate, item: MemoryItem, other: MemoryItem) -> bool:
    """End ``other`` too (another current value the fact contradicts), unless it began after
    the fact did; whether it ended."""
    new_from = item.valid_from or item.when
    if not _current(write, item) or new_from < (other.valid_from or other.when):
        return False  # the fact itself came late (it ended), or ``other`` is newer than it
    write.supersede(other.id, item.id, new_from, actor=ACTOR, info=_info(d, also=True))
    return True


def _supersede(write: Write, d: Invalidate, item: MemoryItem) -> MemoryItem:
    """The new fact replaces the old from its own start; a fact older than the one it
    contradicts (an old message ingested late) is itself the one that ended."""
    new_from = item.valid_from or item.when
    old_from = d.target.valid_from or d.target.when
    info = _info(d)
    if new_from >= old_from:
        write.record(
            item.id,
            "INFER",
            new="INVALIDATE",
            actor=ACTOR,
            info={**info, "supersedes": d.target.id},
        )
        write.supersede(d.target.id, item.id, new_from, actor=ACTOR, info=info)
        return item
    write.record(item.id, "INFER", new="ADD", actor=ACTOR, info={**info, "late": True})
    write.supersede(item.id, d.target.id, old_from, actor=ACTOR, info={**info, "late": True})
    return item


def summary(applied: Sequence[Applied]) -> Mapping[str, int]:
    """How many decisions of each event."""
    out: dict[str, int] = {}
    for a in applied:
        out[a.event] = out.get(a.event, 0) + 1
    return out
