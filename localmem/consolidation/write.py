"""Writing a planned run: new memories, provenance links, the consolidated record, replaced
meta memories and the run itself, all in one transaction (the vectors follow the commit, as
for every write of :class:`localmem.Memory`)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from localmem.consolidation.model import DERIVED_FROM, META_KEY, SUPERSEDES, Source
from localmem.consolidation.plan import Plan
from localmem.store import records
from localmem.store.db import Database, utcnow

if TYPE_CHECKING:
    from localmem.memory import Memory
    from localmem.store.records import NewMemory

ACTOR = "consolidation"


def write_plan(
    memory: Memory,
    plan: Plan,
    *,
    sources: dict[str, Source],
    user_id: str | None,
    agent_id: str | None,
    counts: tuple[int, int],
    params: dict[str, Any],
) -> tuple[int, dict[str, str]]:
    """Write ``plan``; returns the run id and the ids of the new meta memories by key."""
    from localmem.memory import _remove_derived, new_id

    db = memory.store.db
    started = utcnow()
    run_id = int(db.scalar("SELECT nextval('consolidation_run_seq')"))
    meta_ids = {d.key: new_id() for d in plan.meta}
    scope = {"user_id": user_id, "agent_id": agent_id}
    rows: list[NewMemory] = []
    for f in plan.facts:
        cited = [sources[s] for s in f.sources if s in sources]
        sessions = {s.session_id for s in cited}
        times = [s.event_time for s in cited if s.event_time is not None]
        info = {"run": run_id, "served_by": f.served_by, "sources": len(f.sources)}
        item = {
            "content": f.content,
            "context": f.context,
            "kind": "fact",
            "level": "semantic",
            "session_id": sessions.pop() if len(sessions) == 1 else None,
            "event_time": max(times) if times else None,
            "metadata": {META_KEY: info},
            **scope,
        }
        rows.append(replace(memory._prepare(item, {}), id=f.id))
    for d in plan.meta:
        info = {"run": run_id, "key": d.key, "pattern": d.kind, "subject": d.subject}
        item = {
            "content": d.content,
            "kind": "summary",
            "level": "meta",
            "metadata": {META_KEY: info},
            **scope,
        }
        rows.append(replace(memory._prepare(item, {}), id=meta_ids[d.key]))
    replaced = {m.key: m for m in plan.replaced}

    def write_rest(_: list[NewMemory]) -> None:
        reason = f"consolidation run {run_id}"
        for f in plan.facts:
            for src, w in zip(f.sources, f.weights, strict=True):
                _link(db, f.id, src, DERIVED_FROM, w, reason)
        for fact_id, src, w, why in plan.extend:
            _link(db, fact_id, src, DERIVED_FROM, w, f"{reason}: {why}")
        for d in plan.meta:
            for src in d.sources:
                _link(db, meta_ids[d.key], src, DERIVED_FROM, 1.0, f"{reason}: {d.kind}")
            old = replaced.get(d.key)
            if old is not None:
                _link(db, meta_ids[d.key], old.id, SUPERSEDES, 1.0, reason)
        for member, into in plan.consolidated.items():
            db.execute(
                "INSERT INTO consolidated VALUES (?, ?, ?) ON CONFLICT (memory_id) "
                "DO UPDATE SET run_id = excluded.run_id, into_id = excluded.into_id",
                [member, run_id, into],
            )
        for old in plan.replaced:
            db.execute(
                "UPDATE memories SET deleted = true, updated_at = ?, "
                "vec_seq = nextval('vec_seq') WHERE id = ?",
                [utcnow(), old.id],
            )
            memory.store.lexical.remove([old.label])
            _remove_derived(db, old.id)
            info = {"run": run_id, "replaced_by": meta_ids[old.key]}
            records.record_history(db, old.id, "DELETE", actor=ACTOR, info=info)
        for row in rows:
            info = {"run": run_id, "level": row.level}
            records.record_history(db, row.id, "CONSOLIDATE", actor=ACTOR, info=info)
        db.execute(
            "INSERT INTO consolidation_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::JSON)",
            [
                run_id,
                user_id,
                agent_id,
                started,
                utcnow(),
                ",".join(sorted(plan.served_by)) or "model-free",
                counts[0],
                counts[1],
                len(plan.facts),
                len(plan.extend),
                len(plan.meta),
                len(plan.replaced),
                json.dumps(params),
            ],
        )

    store = memory.store
    if rows:
        memory._write(rows, mine=None, evolve=None, extra=write_rest)
    else:
        with store._write_lock:
            try:
                with db.transaction():
                    write_rest([])
            except BaseException:
                store.lexical.rollback()
                raise
    if plan.replaced:  # the commit is done: the old vectors leave the index
        with store._write_lock:
            store.vectors.mark_deleted([m.label for m in plan.replaced])
            store.index_changed(len(plan.replaced))
    return run_id, meta_ids


def _link(db: Database, src: str, dst: str, kind: str, weight: float, reason: str) -> None:
    db.execute(
        "INSERT INTO links VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (src, dst, kind) DO NOTHING",
        [src, dst, kind, float(weight), reason, utcnow()],
    )
