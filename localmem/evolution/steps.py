"""The ``evolution_steps`` table: the plan of an evolution and the outcome of each step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from localmem.store import records
from localmem.store.backend import StoreDatabase
from localmem.store.db import utcnow

PLANNED = "planned"
UPDATED = "updated"  # context rewritten (and linked)
LINKED = "linked"  # linked, context left as it was (NO_UPDATE)
UNCHANGED = "unchanged"  # neither
GONE = "gone"  # the neighbour was deleted before its step ran
OVER_BUDGET = "over-budget"  # the add's token budget was spent
REVERTED = "reverted"  # a person undid it (`localmem revert`)
STATUSES = (PLANNED, UPDATED, LINKED, UNCHANGED, GONE, OVER_BUDGET, REVERTED)

_COLUMNS = (
    "source, neighbour, rank, similarity, status, served_by, prompt_tokens, completion_tokens, "
    "reason, history_id, job_id, planned_at, decided_at"
)
#: a row of those columns
_Row = tuple[
    str,
    str,
    int,
    float,
    str,
    str | None,
    int,
    int,
    str | None,
    int | None,
    int | None,
    datetime,
    datetime | None,
]


@dataclass(frozen=True)
class Step:
    """One (new memory, neighbour) step of an evolution."""

    source: str
    neighbour: str
    rank: int
    similarity: float
    status: str
    served_by: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reason: str | None = None
    history_id: int | None = None
    job_id: int | None = None
    planned_at: datetime | None = None
    decided_at: datetime | None = None

    @property
    def tokens(self) -> int:
        """Model tokens this step spent."""
        return self.prompt_tokens + self.completion_tokens


class Cost(TypedDict):
    """What a decided step spent and why: the keywords :func:`record` takes with it."""

    served_by: str | None
    prompt_tokens: int
    completion_tokens: int
    reason: str | None


def _step(row: _Row) -> Step:
    return Step(*row[:11], records.aware(row[11]), records.aware(row[12]))


def plan(
    db: StoreDatabase, source: str, job_id: int, neighbours: Sequence[tuple[str, float]]
) -> None:
    """Write the plan: one ``planned`` step per neighbour, in rank order."""
    now = utcnow()
    for rank, (neighbour, sim) in enumerate(neighbours, start=1):
        db.execute(
            "INSERT INTO evolution_steps (source, neighbour, rank, similarity, status, job_id, "
            "planned_at) VALUES (?, ?, ?, ?, 'planned', ?, ?) ON CONFLICT DO NOTHING",
            [source, neighbour, rank, float(sim), job_id, now],
        )


def steps_of(db: StoreDatabase, source: str) -> list[Step]:
    """The steps of the evolution a memory caused, in rank order."""
    rows = db.fetchall(
        f"SELECT {_COLUMNS} FROM evolution_steps WHERE source = ? ORDER BY rank", [source]
    )
    return [_step(r) for r in rows]


def steps_on(db: StoreDatabase, neighbour: str) -> list[Step]:
    """The steps in which other memories evolved this one, oldest first."""
    rows = db.fetchall(
        f"SELECT {_COLUMNS} FROM evolution_steps WHERE neighbour = ? ORDER BY planned_at, source",
        [neighbour],
    )
    return [_step(r) for r in rows]


def rewrites_by(db: StoreDatabase, source: str) -> list[tuple[str, int]]:
    """(neighbour, history event) of every context this memory rewrote and that stands."""
    rows = db.fetchall(
        "SELECT neighbour, history_id FROM evolution_steps "
        "WHERE source = ? AND status = 'updated' AND history_id IS NOT NULL",
        [source],
    )
    return [(r[0], int(r[1])) for r in rows]


def forget(db: StoreDatabase, memory_id: str) -> None:
    """Remove every step a memory took part in (it is being purged)."""
    db.execute(
        "DELETE FROM evolution_steps WHERE source = ? OR neighbour = ?", [memory_id, memory_id]
    )


def mark_reverted(db: StoreDatabase, source: str, neighbour: str) -> None:
    """Note that a person undid the step ``source -> neighbour``."""
    db.execute(
        "UPDATE evolution_steps SET status = 'reverted' WHERE source = ? AND neighbour = ?",
        [source, neighbour],
    )


def record(
    db: StoreDatabase,
    step: Step,
    status: str,
    *,
    served_by: str | None = None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    reason: str | None = None,
    history_id: int | None = None,
) -> None:
    """Write a step's outcome (inside the transaction that applies it)."""
    db.execute(
        "UPDATE evolution_steps SET status = ?, served_by = ?, prompt_tokens = ?, "
        "completion_tokens = ?, reason = ?, history_id = ?, decided_at = ? "
        "WHERE source = ? AND neighbour = ?",
        [
            status,
            served_by,
            int(prompt_tokens),
            int(completion_tokens),
            reason,
            history_id,
            utcnow(),
            step.source,
            step.neighbour,
        ],
    )


@dataclass(frozen=True)
class Totals:
    """What evolution did in a store: steps by status, model tokens, who decided, and the
    first rewrites with the context each step wrote."""

    steps: dict[str, int]
    tokens: int
    served_by: list[str]
    rewrites: list[tuple[str, str, str | None]]  # (new memory, neighbour, context written)


def totals(db: StoreDatabase, *, rewrites: int = 3) -> Totals:
    """Totals over every evolution step of a store."""
    steps = {
        str(k): int(v)
        for k, v in db.fetchall("SELECT status, count(*) FROM evolution_steps GROUP BY 1")
    }
    tokens = int(
        db.scalar("SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM evolution_steps")
    )
    served = sorted(
        r[0]
        for r in db.fetchall(
            "SELECT DISTINCT served_by FROM evolution_steps WHERE served_by IS NOT NULL"
        )
    )
    rows = db.fetchall(  # the context as each step wrote it (later steps add more)
        "SELECT s.source, s.neighbour, h.new_value FROM evolution_steps s "
        "JOIN history h ON h.id = s.history_id WHERE s.status = 'updated' "
        "ORDER BY s.planned_at, s.rank LIMIT ?",
        [rewrites],
    )
    return Totals(steps, tokens, served, [(r[0], r[1], r[2]) for r in rows])
