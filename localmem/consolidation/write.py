"""Writing a planned run: new memories, provenance links, the consolidated record, replaced
meta memories and the run itself, all in one transaction (the vectors follow the commit, as
for every write of :class:`localmem.Memory`)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from localmem.consolidation.model import DERIVED_FROM, META_KEY, SUPERSEDES, Source
from localmem.consolidation.plan import Plan
from localmem.store import memories
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow
from localmem.types import embedding_text

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel
    from localmem.store.records import NewMemory
    from localmem.store.unit import Write

ACTOR = "consolidation"


def write_plan(
    kernel: Kernel,
    plan: Plan,
    *,
    sources: dict[str, Source],
    user_id: str | None,
    agent_id: str | None,
    counts: tuple[int, int],
    params: dict[str, Any],
) -> tuple[int, dict[str, str]]:
    """Write ``plan``; returns the run id and the ids of the new meta memories by key."""
    from localmem.store.memories import new_id

    db = kernel.db
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
        rows.append(replace(memories.prepare(kernel, item), id=f.id))
    for d in plan.meta:
        info = {"run": run_id, "key": d.key, "pattern": d.kind, "subject": d.subject}
        item = {
            "content": d.content,
            "kind": "summary",
            "level": "meta",
            "metadata": {META_KEY: info},
            **scope,
        }
        rows.append(replace(memories.prepare(kernel, item), id=meta_ids[d.key]))
    replaced = {m.key: m for m in plan.replaced}

    def write_rest(write: Write, _: list[NewMemory]) -> None:
        db = write.db
        reason = f"consolidation run {run_id}"
        links: list[tuple[str, str, str, float, str]] = []
        for f in plan.facts:
            links += [
                (f.id, s, DERIVED_FROM, w, reason)
                for s, w in zip(f.sources, f.weights, strict=True)
            ]
        for fact_id, src, w, why in plan.extend:
            links.append((fact_id, src, DERIVED_FROM, w, f"{reason}: {why}"))
        for d in plan.meta:
            mid = meta_ids[d.key]
            links += [(mid, s, DERIVED_FROM, 1.0, f"{reason}: {d.kind}") for s in d.sources]
            if d.key in replaced:
                links.append((mid, replaced[d.key].id, SUPERSEDES, 1.0, reason))
        _insert_links(db, links)
        _insert_consolidated(db, plan.consolidated, run_id)
        for old in plan.replaced:
            info = {"run": run_id, "replaced_by": meta_ids[old.key]}
            write.soft_delete(old.id, old.label, actor=ACTOR, info=info)
        _insert_history(db, rows, run_id)
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

    if rows:
        vectors = _vectors(kernel, plan, rows)
        memories.add(kernel, rows, extra=write_rest, vectors=vectors)
    else:
        with kernel.writing() as write:
            write_rest(write, [])
    return run_id, meta_ids


def _vectors(kernel: Kernel, plan: Plan, rows: list[NewMemory]) -> np.ndarray:
    """The rows' vectors: the facts' were made while planning; the meta memories' now."""
    meta = [embedding_text(r.content, r.context) for r in rows[len(plan.facts) :]]
    parts = [np.stack([f.vector for f in plan.facts])] if plan.facts else []
    if meta:
        parts.append(np.asarray(kernel.embedder.embed_batch(meta), dtype=np.float32))
    return np.concatenate(parts).astype(np.float32, copy=False)


def _insert_links(db: StoreDatabase, links: list[tuple[str, str, str, float, str]]) -> None:
    """Provenance links in one statement; a link that exists already is kept as it was."""
    unique: dict[tuple[str, str, str], tuple[float, str]] = {}
    for src, dst, kind, weight, reason in links:
        unique.setdefault((src, dst, kind), (float(weight), reason))
    if not unique:
        return
    keys = list(unique)
    table = pa.table(
        {
            "src": [k[0] for k in keys],
            "dst": [k[1] for k in keys],
            "kind": [k[2] for k in keys],
            "weight": pa.array([unique[k][0] for k in keys], pa.float64()),
            "reason": [unique[k][1] for k in keys],
        }
    )
    db.with_arrow(
        table,
        "INSERT INTO links SELECT src, dst, kind, weight, reason, ?::TIMESTAMP FROM _arg "
        "ON CONFLICT (src, dst, kind) DO NOTHING",
        [utcnow()],
    )


def _insert_consolidated(db: StoreDatabase, consolidated: dict[str, str], run_id: int) -> None:
    """Which episodic memory went into which fact (a memory consolidated again moves)."""
    if not consolidated:
        return
    table = pa.table({"memory_id": list(consolidated), "into_id": list(consolidated.values())})
    db.with_arrow(
        table,
        "INSERT INTO consolidated SELECT memory_id, ?, into_id FROM _arg ON CONFLICT (memory_id) "
        "DO UPDATE SET run_id = excluded.run_id, into_id = excluded.into_id",
        [run_id],
    )


def _insert_history(db: StoreDatabase, rows: list[NewMemory], run_id: int) -> None:
    """A CONSOLIDATE event for every new memory, naming the run."""
    if not rows:
        return
    table = pa.table(
        {
            "memory_id": [r.id for r in rows],
            "info": [json.dumps({"run": run_id, "level": r.level}) for r in rows],
        }
    )
    db.with_arrow(
        table,
        "INSERT INTO history SELECT nextval('history_seq'), memory_id, 'CONSOLIDATE', NULL, "
        f"NULL, NULL, '{ACTOR}', ?::TIMESTAMP, info::JSON FROM _arg",
        [utcnow()],
    )
