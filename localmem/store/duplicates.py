"""Which memories about to be added are already in the store (``add(..., dedupe=True)``).

The rule: a memory duplicates a live one when both have the same text (content hash), the same
kind, the same scope (user, agent and session) and the same event time (both none counts as the
same). Deleted memories do not count: re-adding a deleted text stores it again.

The check runs just before a batch's transaction, not inside it (the batch is embedded in
between): two threads adding the same text at the same moment may both store it. One import
at a time, the case this is for, never does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from localmem.store.backend import StoreDatabase
from localmem.store.records import NewMemory, aware

#: (content hash, kind, user, agent, session, event time)
Key = tuple[str, str, str | None, str | None, str | None, datetime | None]


def key(row: NewMemory) -> Key:
    """What makes two memories the same memory under the dedupe rule."""
    return (row.content_hash, row.kind, row.user_id, row.agent_id, row.session_id, row.event_time)


def existing(db: StoreDatabase, rows: Sequence[NewMemory]) -> dict[Key, str]:
    """For every key of ``rows`` that a live memory already has: that memory's id (the oldest)."""
    hashes = sorted({row.content_hash for row in rows})
    if not hashes:
        return {}
    found = db.fetchall(
        "SELECT id, content_hash, kind, user_id, agent_id, session_id, event_time FROM memories "
        "WHERE NOT deleted AND content_hash IN (SELECT unnest(?::VARCHAR[])) ORDER BY label",
        [hashes],
    )
    out: dict[Key, str] = {}
    for mid, chash, kind, user, agent, session, when in found:
        out.setdefault((chash, kind, user, agent, session, aware(when)), mid)
    return out
