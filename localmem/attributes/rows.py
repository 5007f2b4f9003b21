"""The ``attributes`` table: writing a memory's attributes, reading them, matching a query.

One row per attribute: ``(memory_id, axis, value, rank, score, miner, terms, priority,
label_set, source_hash, mined_at)``. Matching a query against candidates is one SQL statement
(:func:`match`): entity rows match by the overlap of their stems, label rows by equality.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from localmem.attributes.mined import Attribute, Mined, StoredAttributes
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow

COLUMNS = (
    "memory_id, axis, value, rank, score, miner, terms, priority, label_set, source_hash, mined_at"
)


def priority_weight(position: int | None) -> float:
    """How much an attribute at this priority position counts: 1, 1/2, 1/3, ..."""
    return 1.0 / (1.0 + (position if position is not None else 9))


def write(db: StoreDatabase, memory_id: str, mined: Mined, source_hash: str) -> None:
    """Replace a memory's attributes (call inside the caller's transaction)."""
    db.execute("DELETE FROM attributes WHERE memory_id = ?", [memory_id])
    if not mined.attributes:
        return
    now = utcnow()
    n = len(mined.attributes)
    table = pa.table(
        {
            "memory_id": pa.array([memory_id] * n, pa.string()),
            "axis": pa.array([a.axis for a in mined.attributes], pa.string()),
            "value": pa.array([a.value for a in mined.attributes], pa.string()),
            "rank": pa.array([a.rank for a in mined.attributes], pa.int32()),
            "score": pa.array([float(a.score) for a in mined.attributes], pa.float64()),
            "miner": pa.array([mined.miner] * n, pa.string()),
            "terms": pa.array([list(a.terms) for a in mined.attributes], pa.list_(pa.string())),
            "priority": pa.array([a.priority for a in mined.attributes], pa.int32()),
            "label_set": pa.array([mined.label_set] * n, pa.string()),
            "source_hash": pa.array([source_hash] * n, pa.string()),
            "mined_at": pa.array([now] * n, pa.timestamp("us")),
        }
    )
    db.insert_arrow("attributes", table, COLUMNS)


def delete(db: StoreDatabase, memory_id: str) -> None:
    """Remove a memory's attributes."""
    db.execute("DELETE FROM attributes WHERE memory_id = ?", [memory_id])


def read(db: StoreDatabase, memory_ids: Sequence[str]) -> dict[str, StoredAttributes]:
    """The stored attributes of some memories (memories without any are left out)."""
    if not memory_ids:
        return {}
    rows = db.fetchall(
        "SELECT memory_id, axis, value, rank, score, priority, terms, miner, label_set, "
        "source_hash, mined_at FROM attributes WHERE memory_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY memory_id, axis, rank",
        [list(memory_ids)],
    )
    grouped: dict[str, list[tuple]] = {}
    for row in rows:
        grouped.setdefault(row[0], []).append(row)
    out = {}
    for mid, group in grouped.items():
        attrs = tuple(
            Attribute(r[1], r[2], int(r[3]), float(r[4] or 0.0), r[5], tuple(r[6] or ()))
            for r in group
        )
        first = group[0]
        out[mid] = StoredAttributes(
            mid, Mined(attrs, first[7] or "", first[8] or ""), first[9], first[10]
        )
    return out


def source_of(db: StoreDatabase, memory_id: str) -> tuple[str, str | None, str, Any, bool] | None:
    """What mining a memory reads: (content, context, content hash, stored vector, deleted)."""
    return db.fetchone(
        "SELECT content, context, content_hash, embedding, deleted FROM memories WHERE id = ?",
        [memory_id],
    )


def is_live(db: StoreDatabase, memory_id: str) -> bool:
    """Whether a memory exists and is not deleted."""
    return bool(db.scalar("SELECT NOT deleted FROM memories WHERE id = ?", [memory_id]))


def queued_texts(db: StoreDatabase, limit: int) -> list[str]:
    """The texts of the next live memories waiting for a ``mine`` job, in queue order."""
    rows = db.fetchall(
        "SELECT m.content FROM jobs j JOIN memories m ON m.id = j.memory_id "
        "WHERE j.kind = 'mine' AND j.status IN ('pending', 'running') AND NOT m.deleted "
        "ORDER BY j.id LIMIT ?",
        [limit],
    )
    return [r[0] for r in rows]


def pending_mining(db: StoreDatabase) -> dict[str, tuple[int, dict[str, Any]]]:
    """The waiting ``mine`` job of each memory that has one: ``{memory: (job id, payload)}``."""
    found: dict[str, tuple[int, dict[str, Any]]] = {}
    for memory_id, job_id, payload in db.fetchall(
        "SELECT memory_id, id, payload FROM jobs WHERE kind = 'mine' AND status = 'pending' "
        "ORDER BY id"
    ):
        found.setdefault(memory_id, (int(job_id), json.loads(payload) if payload else {}))
    return found


def counts(db: StoreDatabase) -> dict[str, Any]:
    """How many live memories are mined, not mined, or stale; and by which miner."""
    total = int(db.scalar("SELECT count(*) FROM memories WHERE NOT deleted") or 0)
    by_miner: dict[str, int] = dict(
        db.fetchall(
            "SELECT a.miner, count(DISTINCT a.memory_id) FROM attributes a "
            "JOIN memories m ON m.id = a.memory_id WHERE NOT m.deleted GROUP BY 1 ORDER BY 1"
        )
    )
    stale = int(
        db.scalar(
            "SELECT count(DISTINCT a.memory_id) FROM attributes a JOIN memories m "
            "ON m.id = a.memory_id WHERE NOT m.deleted AND a.source_hash <> m.content_hash"
        )
        or 0
    )
    mined = sum(by_miner.values())
    return {
        "memories": total,
        "mined": mined,
        "unmined": total - mined,
        "stale": stale,
        "by_miner": by_miner,
    }


def to_mine(db: StoreDatabase, *, which: str = "missing", limit: int | None = None) -> list[str]:
    """Ids of live memories to mine: ``missing`` (never mined), ``stale`` (text changed since),
    ``outdated`` (both) or ``all``; oldest first."""
    missing = "NOT EXISTS (SELECT 1 FROM attributes a WHERE a.memory_id = m.id)"
    stale = (
        "EXISTS (SELECT 1 FROM attributes a WHERE a.memory_id = m.id "
        "AND a.source_hash <> m.content_hash)"
    )
    conditions = {
        "missing": missing,
        "stale": stale,
        "outdated": f"({missing} OR {stale})",
        "all": "TRUE",
    }
    where = conditions[which]
    sql = f"SELECT id FROM memories m WHERE NOT deleted AND {where} ORDER BY label"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [r[0] for r in db.fetchall(sql)]


@dataclass(frozen=True)
class AxisMatch:
    """How a candidate matched the query on one axis."""

    strength: float  # entities: best term overlap; labels: 1.0
    weight: float  # strength x priority weights of the two attributes (1 without priority)
    value: str  # the memory's value that matched best


def query_rows(query: Mined, axes: Sequence[str], *, strategy: str, min_confidence: float):
    """The query attributes a search matches on (refined: the confident main labels only)."""
    rows = []
    for a in query.attributes:
        if a.axis not in axes:
            continue
        if (
            strategy == "refined"
            and a.axis != "entities"
            and (a.rank > 0 or a.score < min_confidence)
        ):
            continue
        rows.append(a)
    return rows


def match(
    db: StoreDatabase,
    labels: Sequence[int],
    query: Sequence[Attribute],
    *,
    strategy: str,
    min_confidence: float,
    entity_match: float,
    priority: bool,
) -> tuple[dict[int, dict[str, AxisMatch]], dict[int, str]]:
    """Match candidates (by memory label) against query attributes, in one SQL statement.

    Returns:
        ``{label: {axis: AxisMatch}}`` for every candidate that matches on some axis, and
        ``{label: label set}`` for the candidates that have attributes at all (the others were
        never mined).
    """
    if not labels:
        return {}, {}
    q = pa.table(
        {
            "axis": pa.array([a.axis for a in query], pa.string()),
            "value": pa.array([a.value for a in query], pa.string()),
            "terms": pa.array([list(a.terms) for a in query], pa.list_(pa.string())),
            "wq": pa.array(
                [priority_weight(a.priority) if priority else 1.0 for a in query], pa.float64()
            ),
        }
    )
    condition = (
        "(a.axis = 'entities' OR (a.rank = 0 AND a.score >= ?))"
        if strategy == "refined"
        else "CAST(? AS FLOAT8) IS NOT NULL"  # comprehensive: every row (parameter unused)
    )
    sql = f"""
        WITH cand AS (
            SELECT id, label FROM memories WHERE label IN (SELECT unnest(?::BIGINT[]))
        ),
        pairs AS (
            SELECT c.label, a.axis, a.value,
                CASE WHEN a.axis = 'entities'
                     THEN len(list_intersect(a.terms, q.terms::VARCHAR[]))::FLOAT8
                          / greatest(least(len(a.terms), len(q.terms)), 1)
                     ELSE 1.0 END AS strength,
                q.wq * (CASE WHEN ? THEN 1.0 / (1 + coalesce(a.priority, 9)) ELSE 1.0 END) AS w
            FROM cand c
            JOIN attributes a ON a.memory_id = c.id
            JOIN _arg q ON q.axis = a.axis AND (a.axis = 'entities' OR a.value = q.value)
            WHERE {condition}
        )
        SELECT label, axis, max(strength), max(strength * w), arg_max(value, strength * w)
        FROM pairs WHERE strength >= ? GROUP BY label, axis
    """
    rows = db.with_arrow(
        q, sql, [list(map(int, labels)), bool(priority), float(min_confidence), float(entity_match)]
    )
    out: dict[int, dict[str, AxisMatch]] = {}
    for label, axis, strength, weight, value in rows:
        out.setdefault(int(label), {})[axis] = AxisMatch(float(strength), float(weight), value)
    mined = db.fetchall(
        "SELECT DISTINCT m.label, a.label_set FROM memories m JOIN attributes a "
        "ON a.memory_id = m.id WHERE m.label IN (SELECT unnest(?::BIGINT[]))",
        [list(map(int, labels))],
    )
    return out, {int(r[0]): r[1] for r in mined}
