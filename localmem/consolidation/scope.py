"""Reading a scope for consolidation: its episodic memories and what earlier runs wrote."""

from __future__ import annotations

import json

import numpy as np

from localmem.consolidation.model import DERIVED_FROM, META_KEY, KnownFact, KnownMeta, Source
from localmem.consolidation.statements import split_speaker
from localmem.errors import NotFoundError
from localmem.store import records
from localmem.store.backend import StoreDatabase

_SCOPE = "user_id IS NOT DISTINCT FROM ? AND (CAST(? AS VARCHAR) IS NULL OR agent_id = ?)"
_M_SCOPE = "m.user_id IS NOT DISTINCT FROM ? AND (CAST(? AS VARCHAR) IS NULL OR m.agent_id = ?)"


def scope_params(user_id: str | None, agent_id: str | None) -> list:
    return [user_id, agent_id, agent_id]


def check_scope(db: StoreDatabase, user_id: str | None, agent_id: str | None) -> None:
    """A named user (or agent) with no memories at all is a mistake, not an empty run.

    Raises:
        NotFoundError: ``user_id`` or ``agent_id`` was given and owns no live memory.
    """
    if user_id is None and agent_id is None:
        return
    n = db.scalar(
        f"SELECT count(*) FROM memories WHERE NOT deleted AND {_SCOPE}",
        scope_params(user_id, agent_id),
    )
    if not n:
        who = " ".join(
            f"{name} {value!r}"
            for name, value in (("user", user_id), ("agent", agent_id))
            if value is not None
        )
        raise NotFoundError(f"no memories of {who}")


def episodic(db: StoreDatabase, user_id: str | None, agent_id: str | None) -> list[Source]:
    """Live episodic memories of the scope with their vectors, in the order they happened."""
    rows = db.fetchall(
        "SELECT id, label, content, session_id, event_time, metadata, embedding FROM memories "
        f"WHERE NOT deleted AND level = 'episodic' AND kind <> 'procedure' AND {_SCOPE} "
        "AND embedding IS NOT NULL ORDER BY coalesce(event_time, created_at), label",
        scope_params(user_id, agent_id),
    )
    out = []
    for mid, label, content, session, when, meta, emb in rows:
        speaker = (_json(meta).get("speaker") if meta else None) or split_speaker(content)[0]
        out.append(
            Source(
                id=mid,
                label=int(label),
                content=content,
                session_id=session,
                event_time=records.aware(when),
                speaker=speaker if isinstance(speaker, str) else None,
                vector=np.asarray(emb, dtype=np.float32),
            )
        )
    return out


def consolidated_ids(db: StoreDatabase, user_id: str | None, agent_id: str | None) -> set[str]:
    """Episodic memories of the scope already folded into a live semantic memory."""
    rows = db.fetchall(
        "SELECT c.memory_id FROM consolidated c JOIN memories m ON m.id = c.into_id "
        f"WHERE NOT m.deleted AND {_M_SCOPE}",
        scope_params(user_id, agent_id),
    )
    return {r[0] for r in rows}


def known_facts(db: StoreDatabase, user_id: str | None, agent_id: str | None) -> list[KnownFact]:
    """Semantic memories of the scope that consolidation wrote, with their sources."""
    rows = db.fetchall(
        "SELECT id, content, context, content_hash, embedding FROM memories "
        f"WHERE NOT deleted AND level = 'semantic' AND {_SCOPE} AND embedding IS NOT NULL "
        f"AND json_extract(metadata, '$.{META_KEY}') IS NOT NULL ORDER BY label",
        scope_params(user_id, agent_id),
    )
    sources = sources_of(db, [r[0] for r in rows])
    return [
        KnownFact(
            id=r[0],
            content=r[1],
            context=r[2],
            content_hash=r[3],
            vector=np.asarray(r[4], dtype=np.float32),
            sources=tuple(sources.get(r[0], ())),
        )
        for r in rows
    ]


def known_meta(
    db: StoreDatabase, user_id: str | None, agent_id: str | None
) -> dict[str, KnownMeta]:
    """Meta memories of the scope that consolidation wrote, by their key."""
    rows = db.fetchall(
        "SELECT id, label, content, json_extract_string(metadata, "
        f"'$.{META_KEY}.key') FROM memories WHERE NOT deleted AND level = 'meta' AND {_SCOPE} "
        f"AND json_extract(metadata, '$.{META_KEY}.key') IS NOT NULL ORDER BY label",
        scope_params(user_id, agent_id),
    )
    return {r[3]: KnownMeta(r[0], int(r[1]), r[3], r[2]) for r in rows}


def sources_of(db: StoreDatabase, ids: list[str]) -> dict[str, list[str]]:
    """The memories each of ``ids`` was derived from (strongest link first)."""
    if not ids:
        return {}
    out: dict[str, list[str]] = {}
    for src, dst in db.fetchall(
        "SELECT src, dst FROM links WHERE kind = ? AND src IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY src, weight DESC, dst",
        [DERIVED_FROM, list(ids)],
    ):
        out.setdefault(src, []).append(dst)
    return out


def derived_into(db: StoreDatabase, memory_id: str) -> list[str]:
    """The live memories derived from ``memory_id``."""
    rows = db.fetchall(
        "SELECT l.src FROM links l JOIN memories m ON m.id = l.src "
        "WHERE l.kind = ? AND l.dst = ? AND NOT m.deleted ORDER BY m.label",
        [DERIVED_FROM, memory_id],
    )
    return [r[0] for r in rows]


def _json(raw) -> dict:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
