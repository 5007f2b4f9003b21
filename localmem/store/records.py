"""Reading and writing memory rows (SQL lives here, not in the API); their history is in
:mod:`localmem.store.history`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, overload

import numpy as np
import pyarrow as pa

from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow
from localmem.types import MemoryItem

#: Set in an UPDATE of ``memories`` that turns a text column from NULL to a value without
#: changing the embedding (``superseded_by``, ``metadata``): a list column in the SET makes
#: DuckDB rewrite the row (delete + insert) rather than update the column in place. DuckDB
#: 2.0.1 loses such an in-place update when it replays its WAL after a crash, if an earlier
#: transaction of the WAL rewrote a row of the table (the column reads NULL again; a
#: supersession kept its ``valid_to`` and lost its successor,
#: ``scripts/duckdb_wal_update.py``). PostgreSQL writes a new row version either way.
REWRITE_ROW = "embedding = embedding"

MEMORY_COLUMNS = (
    "id, label, kind, user_id, agent_id, session_id, content, context, level, created_at, "
    "event_time, updated_at, metadata, content_hash, deleted, valid_from, valid_to, superseded_by"
)


@dataclass(frozen=True)
class NewMemory:
    """A memory about to be written (validated and embedded by the caller)."""

    id: str
    label: int
    kind: str
    content: str
    content_hash: str
    embed_hash: str
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    context: str | None = None
    level: str = "episodic"
    event_time: datetime | None = None
    metadata: dict[str, Any] | None = None


@overload
def aware(ts: datetime) -> datetime: ...
@overload
def aware(ts: None) -> None: ...
def aware(ts: datetime | None) -> datetime | None:
    """A naive UTC timestamp from DuckDB as an aware datetime."""
    return ts.replace(tzinfo=timezone.utc) if ts is not None else None


@overload
def to_db_time(ts: datetime) -> datetime: ...
@overload
def to_db_time(ts: None) -> None: ...
def to_db_time(ts: datetime | None) -> datetime | None:
    """An aware datetime as the naive UTC value DuckDB keeps."""
    return ts.astimezone(timezone.utc).replace(tzinfo=None) if ts is not None else None


@overload
def _as_given(ts: datetime) -> datetime: ...
@overload
def _as_given(ts: None) -> None: ...
def _as_given(ts: datetime | None) -> datetime | None:
    return ts


def row_to_item(row: Sequence[Any], *, times_aware: bool = False) -> MemoryItem:
    """A row selected with :data:`MEMORY_COLUMNS` as a :class:`MemoryItem` (``times_aware``:
    its times are aware UTC datetimes already, as :mod:`localmem.store.mirror` makes them)."""
    at = _as_given if times_aware else aware
    (
        mid,
        label,
        kind,
        user,
        agent,
        session,
        content,
        context,
        level,
        created,
        event,
        updated,
        metadata,
        chash,
        deleted,
        valid_from,
        valid_to,
        superseded_by,
    ) = row
    return MemoryItem(
        id=mid,
        label=int(label),
        kind=kind,
        user_id=user,
        agent_id=agent,
        session_id=session,
        content=content,
        context=context,
        level=level,
        created_at=at(created),
        event_time=at(event),
        updated_at=at(updated),
        metadata=json.loads(metadata) if metadata else {},
        content_hash=chash,
        deleted=bool(deleted),
        valid_from=at(valid_from),
        valid_to=at(valid_to),
        superseded_by=superseded_by,
    )


def item_from_new(row: NewMemory, now: datetime) -> MemoryItem:
    """The memory a just-written new row became (created at ``now``)."""
    created = aware(now)
    return MemoryItem(
        id=row.id,
        label=row.label,
        kind=row.kind,
        content=row.content,
        context=row.context,
        level=row.level,
        user_id=row.user_id,
        agent_id=row.agent_id,
        session_id=row.session_id,
        created_at=created,
        event_time=row.event_time,
        updated_at=created,
        metadata=dict(row.metadata or {}),
        content_hash=row.content_hash,
        valid_from=row.event_time or created,
    )


def insert_memories(db: StoreDatabase, rows: Sequence[NewMemory], vectors: np.ndarray) -> datetime:
    """Write new memory rows and their ADD history (inside the caller's transaction)."""
    now = utcnow()
    n = len(rows)
    first_seq = db.scalar("SELECT nextval('vec_seq')")
    dim = vectors.shape[1]
    emb = pa.FixedSizeListArray.from_arrays(
        pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel()), dim
    )
    table = pa.table(
        {
            "id": [r.id for r in rows],
            "label": pa.array([r.label for r in rows], pa.int64()),
            "kind": [r.kind for r in rows],
            "user_id": pa.array([r.user_id for r in rows], pa.string()),
            "agent_id": pa.array([r.agent_id for r in rows], pa.string()),
            "session_id": pa.array([r.session_id for r in rows], pa.string()),
            "content": [r.content for r in rows],
            "context": pa.array([r.context for r in rows], pa.string()),
            "level": [r.level for r in rows],
            "created_at": pa.array([now] * n, pa.timestamp("us")),
            "event_time": pa.array([to_db_time(r.event_time) for r in rows], pa.timestamp("us")),
            "metadata": pa.array(
                [json.dumps(r.metadata) if r.metadata else None for r in rows], pa.string()
            ),
            "embedding": emb,
            "content_hash": [r.content_hash for r in rows],
            "embed_hash": [r.embed_hash for r in rows],
            "vec_seq": pa.array([first_seq] * n, pa.int64()),
            "valid_from": pa.array(
                [to_db_time(r.event_time) or now for r in rows], pa.timestamp("us")
            ),
        }
    )
    db.insert_arrow(
        "memories",
        table,
        "id, label, kind, user_id, agent_id, session_id, content, context, level, created_at, "
        "event_time, created_at, metadata::JSON, embedding::FLOAT[], content_hash, embed_hash, "
        "false, vec_seq, valid_from, NULL, NULL",
    )
    hist = pa.table({"memory_id": [r.id for r in rows]})
    db.insert_arrow(
        "history",
        hist,
        "nextval('history_seq'), memory_id, 'ADD', NULL, NULL, NULL, 'user', "
        f"TIMESTAMP '{now.isoformat(sep=' ')}', NULL",
    )
    return now


def next_labels(db: StoreDatabase, n: int) -> list[int]:
    """``n`` fresh hnswlib labels."""
    if n == 0:
        return []
    rows = db.fetchall(f"SELECT nextval('label_seq') FROM range({n})")
    return sorted(int(r[0]) for r in rows)


def fetch(
    db: StoreDatabase, where: str, params: Sequence[Any] = (), *, order: str = ""
) -> list[MemoryItem]:
    """Memories matching a WHERE clause."""
    sql = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {where} {order}"
    return [row_to_item(r) for r in db.fetchall(sql, list(params))]


def fetch_locked(db: StoreDatabase, memory_id: str) -> MemoryItem | None:
    """A memory by exact id, read inside the caller's transaction with its row locked until
    the commit (``FOR UPDATE`` on PostgreSQL, where several processes write; DuckDB has one
    writing process, whose store lock already keeps its writers apart)."""
    found = fetch(db, "id = ?", [memory_id], order=db.row_lock)
    return found[0] if found else None


def fetch_by_labels(db: StoreDatabase, labels: Sequence[int]) -> dict[int, MemoryItem]:
    """Live or deleted memories by hnswlib label."""
    if len(labels) == 0:
        return {}
    # a list parameter, not a registered Arrow table: registering costs several ms per call,
    # most of a search's own time (scripts/bench_peers.py, docs/benchmarks.md "peers")
    rows = db.fetchall(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE label IN (SELECT unnest(?::BIGINT[]))",
        [[int(x) for x in labels]],
    )
    return {int(r[1]): row_to_item(r) for r in rows}


def fetch_by_ids(db: StoreDatabase, ids: Sequence[str]) -> dict[str, MemoryItem]:
    """Memories by id."""
    if not ids:
        return {}
    rows = db.fetchall(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN (SELECT unnest(?::VARCHAR[]))",
        [[str(x) for x in ids]],
    )
    return {r[0]: row_to_item(r) for r in rows}


def json_key(key: str) -> str:
    """The JSON pointer of a top-level metadata key, any characters (``a.b`` is one key)."""
    return "/" + key.replace("~", "~0").replace("/", "~1")


def metadata_rows(
    db: StoreDatabase, keys: Sequence[str], *, where: dict[str, str], with_label: bool = False
) -> list[tuple[Any, ...]]:
    """``(id, [label,] value of each key)`` of every live memory whose metadata has the given
    string values (``where``: key -> value), oldest first."""
    conditions = ["NOT deleted"] + ["json_extract_string(metadata, ?) = ?" for _ in where]
    values = ", ".join("json_extract_string(metadata, ?)" for _ in keys)
    params = [json_key(k) for k in keys]
    params += [v for name, value in where.items() for v in (json_key(name), value)]
    label = "label, " if with_label else ""
    return db.fetchall(
        f"SELECT id, {label}{values} FROM memories WHERE {' AND '.join(conditions)} ORDER BY label",
        params,
    )


def metadata_conditions(metadata: Mapping[str, Any] | None) -> tuple[list[str], list[Any]]:
    """SQL conditions (and their parameters) for memories whose metadata holds these
    top-level values (strings, numbers, booleans; compared as JSON text)."""
    where: list[str] = []
    params: list[Any] = []
    for key, value in (metadata or {}).items():
        where.append("json_extract_string(metadata, ?) = ?")
        params.append(json_key(key))
        params.append(
            value
            if isinstance(value, str)
            else str(value).lower()
            if isinstance(value, bool)
            else str(value)
        )
    return where, params


#: the memories true at a moment (two parameters: the moment, twice)
VALID_AT = [
    "coalesce(valid_from, event_time, created_at) <= ?",
    "(valid_to IS NULL OR valid_to > ?)",
]
#: the memories not superseded at a moment (one parameter: the moment)
VALID_NOW = ["(valid_to IS NULL OR valid_to > ?)"]


def any_superseded(db: StoreDatabase) -> bool:
    """Whether any live memory has stopped being true (so "now" searches must filter)."""
    return bool(
        db.fetchall("SELECT 1 FROM memories WHERE valid_to IS NOT NULL AND NOT deleted LIMIT 1")
    )


def true_now_as_at(
    db: StoreDatabase,
    moment: datetime,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    now: datetime | None = None,
) -> bool:
    """Whether the live memories (of a user and agent, when given) true now are surely those
    true at ``moment``: none begins after it and none stopped being true after it or after now
    (one indexed query; a False answer may be wrong, a True one is not)."""
    moment = to_db_time(moment)
    later = min(moment, to_db_time(now) if now is not None else utcnow())
    where = [
        "NOT deleted",
        "(coalesce(valid_from, event_time, created_at) > ? "
        "OR (valid_to IS NOT NULL AND valid_to > ?))",
    ]
    params: list[Any] = [moment, later]
    for col, value in (("user_id", user_id), ("agent_id", agent_id)):
        if value is not None:
            where.append(f"{col} = ?")
            params.append(value)
    return not db.fetchall(f"SELECT 1 FROM memories WHERE {' AND '.join(where)} LIMIT 1", params)


def filtered_labels(
    db: StoreDatabase,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: str | None = None,
    kinds: Sequence[str] | None = None,
    levels: Sequence[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    metadata: dict[str, Any] | None = None,
    as_of: datetime | None = None,
    now: datetime | None = None,
    validity: bool = True,
) -> np.ndarray:
    """Labels of the live, embedded memories that pass every filter given, sorted.

    With ``validity`` (the default), only the memories true at ``as_of`` (valid_from <= as_of
    < valid_to), or, without ``as_of``, those not superseded by ``now`` (default: the current
    time; a memory about a planned event stays findable before its time).
    """
    where: list[str] = ["NOT deleted", "embedding IS NOT NULL"]
    params: list[Any] = []
    if validity:
        where += VALID_AT if as_of is not None else VALID_NOW
        params += [to_db_time(as_of)] * 2 if as_of is not None else [to_db_time(now or utcnow())]
    for col, value in (("user_id", user_id), ("agent_id", agent_id), ("session_id", session_id)):
        if value is not None:
            where.append(f"{col} = ?")
            params.append(value)
    for col, values in (("kind", kinds), ("level", levels)):
        if values is not None:
            where.append(f"{col} IN ({', '.join('?' for _ in values)})")
            params += list(values)
    if since is not None:
        where.append("coalesce(event_time, created_at) >= ?")
        params.append(to_db_time(since))
    if until is not None:
        where.append("coalesce(event_time, created_at) <= ?")
        params.append(to_db_time(until))
    more, more_params = metadata_conditions(metadata)
    where += more
    params += more_params
    tbl = db.arrow(f"SELECT label FROM memories WHERE {' AND '.join(where)} ORDER BY label", params)
    labels: np.ndarray = tbl.column(0).to_numpy().astype(np.int64)
    return labels


def older_labels(
    db: StoreDatabase, label: int, column: str | None = None, value: str | None = None
) -> np.ndarray:
    """Labels of the live, embedded memories added before ``label`` (and, when ``column`` is
    ``user_id``, ``agent_id`` or ``session_id``, with the same ``value`` there, None included)."""
    where = ["NOT deleted", "embedding IS NOT NULL", "label < ?"]
    params: list[Any] = [label]
    if column is not None:
        if column not in ("user_id", "agent_id", "session_id"):
            raise ValueError(f"not a scope column: {column}")
        where.append(f"{column} IS NOT DISTINCT FROM ?")
        params.append(value)
    rows = db.fetchall(f"SELECT label FROM memories WHERE {' AND '.join(where)}", params)
    return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))


#: where a memory sits: ``(session_id, user_id, agent_id, when, deleted)``
Placement = tuple[str | None, str | None, str | None, datetime, bool]
_PLACEMENT_COLUMNS = "session_id, user_id, agent_id, coalesce(event_time, created_at), deleted"


def placement_by_labels(db: StoreDatabase, labels: Sequence[int]) -> dict[int, Placement]:
    """``(session_id, user_id, agent_id, when, deleted)`` of memories by label: where each sits,
    without its text (the reranker's neighbour test reads only this; a full row costs ~3x)."""
    if len(labels) == 0:
        return {}
    rows = db.fetchall(
        f"SELECT label, {_PLACEMENT_COLUMNS} "
        "FROM memories WHERE label IN (SELECT unnest(?::BIGINT[]))",
        [[int(x) for x in labels]],
    )
    return {int(r[0]): _placement(r[1:]) for r in rows}


def fetch_with_placement(
    db: StoreDatabase, labels: Sequence[int], placed: Sequence[int]
) -> tuple[dict[int, MemoryItem], dict[int, Placement]]:
    """The rows of ``labels`` (as :func:`fetch_by_labels`) and the placement of ``placed`` (as
    :func:`placement_by_labels`) in one round trip: a search's reranker needs both, and each
    query costs about a millisecond before it reads a row."""
    if len(placed) == 0:
        return fetch_by_labels(db, labels), {}
    if len(labels) == 0:
        return {}, placement_by_labels(db, placed)
    blanks = ", ".join("NULL" for _ in range(5))
    row_blanks = ", ".join("label" if c == "label" else "NULL" for c in MEMORY_COLUMNS.split(", "))
    rows = db.fetchall(
        f"SELECT {MEMORY_COLUMNS}, {blanks}, TRUE FROM memories "
        "WHERE label IN (SELECT unnest(?::BIGINT[])) UNION ALL "
        f"SELECT {row_blanks}, {_PLACEMENT_COLUMNS}, FALSE FROM memories "
        "WHERE label IN (SELECT unnest(?::BIGINT[]))",
        [[int(x) for x in labels], [int(x) for x in placed]],
    )
    width = MEMORY_COLUMNS.count(",") + 1
    items = {int(r[1]): row_to_item(r[:width]) for r in rows if r[-1]}
    places = {int(r[1]): _placement(r[width:-1]) for r in rows if not r[-1]}
    return items, places


def _placement(r: Sequence[Any]) -> Placement:
    return (r[0], r[1], r[2], aware(r[3]), bool(r[4]))


def placement_of(item: MemoryItem) -> Placement:
    """Where a memory already made sits (its fields, as :func:`placement_by_labels` reads them)."""
    return (item.session_id, item.user_id, item.agent_id, item.when, item.deleted)


def session_order(db: StoreDatabase, sessions: Sequence[str]) -> list[tuple[int, str]]:
    """(label, session) of the live memories of these sessions, in each session's order
    (event time, then insertion)."""
    rows = db.fetchall(
        "SELECT label, session_id FROM memories WHERE NOT deleted AND embedding IS NOT NULL "
        "AND session_id IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY session_id, coalesce(event_time, created_at), label",
        [list(sessions)],
    )
    return [(int(label), sid) for label, sid in rows]


def bump_vec_seq(db: StoreDatabase, memory_id: str) -> None:
    """Mark a memory's vector as changed, so an index saved earlier catches up on open."""
    db.execute("UPDATE memories SET vec_seq = nextval('vec_seq') WHERE id = ?", [memory_id])
