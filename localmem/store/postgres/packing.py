"""Packing common terms' postings (``packed.py``): which terms, and the step that packs them.

Why a pack's ``upto`` is safe under several writers: every writer of postings (``add``,
``remove``) first locks the one row of ``lex_stats``, and :func:`pack_terms` takes that lock
before it reads a term's postings. So while it reads, no writer holds a ``posting_seq`` it has
not committed; every posting it did not see is written after and draws a larger number (the
sequence hands out one value at a time). A crash while packing rolls the pack's transaction
back: the term keeps its old pack or none, and either reads what ``lex_postings`` holds.

Called by the store's upkeep (``PgStore.drain_vectors``, with a budget) and by
``localmem doctor --fix`` (every stale term).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.packed import pack
from localmem.store.postgres.postings import each_term

#: terms with at least this many postings are packed (below it, reading the rows costs a few
#: milliseconds at most; docs/benchmarks.md "pg4")
PACK_MIN_DF = 5_000
#: a pack whose term has changed (postings written or deleted since) by more than this share
#: of it is made again
STALE_SHARE = 0.1
#: the migration that makes the pack tables
PACK_MIGRATION = "0097_lexical_packed"


def has_packs(db: PgDatabase) -> bool:
    """Whether the store has the pack tables (migration 0097): a store made by older code, or
    opened read-only before that migration ran, reads every posting from ``lex_postings``."""
    return PACK_MIGRATION in db.applied_migrations()


@dataclass
class PackReport:
    """What :func:`pack_terms` did."""

    terms: int = 0
    postings: int = 0
    seconds: float = 0.0


def stale_terms(db: PgDatabase, min_df: int, stale: float) -> list[tuple[int, int]]:
    """(term id, postings) of the terms to pack: at least ``min_df`` postings, and no pack
    yet or one whose term changed by more than ``stale`` of it since; most changed first."""
    rows = db.fetchall(
        "SELECT t.id, t.df, k.count, (SELECT count(*) FROM lex_packed_gone g "
        "WHERE g.term_id = t.id) FROM lex_terms t LEFT JOIN lex_packed k ON k.term_id = t.id "
        "WHERE t.df >= ?",
        [int(min_df)],
    )
    found = []
    for tid, df, count, gone in rows:
        if count is None:
            found.append((int(tid), int(df), float("inf")))
            continue
        written = int(df) - (int(count) - int(gone))  # postings past ``upto``
        changed = written + int(gone)
        if changed > stale * int(count):
            found.append((int(tid), int(df), changed / max(int(count), 1)))
    found.sort(key=lambda r: -r[2])
    return [(tid, df) for tid, df, _ in found]


def _postings(db: PgDatabase, tid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every posting of one term, from the rows (label, tf, length)."""
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    each_term(db, [tid], lambda _, *cols: parts.append(cols), packed=False)
    return parts[0] if parts else (np.empty(0, np.int64),) * 3


def pack_terms(
    db: PgDatabase,
    *,
    min_df: int | None = None,
    stale: float | None = None,
    budget: int | None = None,
) -> PackReport:
    """Pack (or pack again) the terms :func:`stale_terms` names, each in a transaction of its
    own under the writers' lock, until about ``budget`` postings are packed (None: all).
    Writers wait for one term's pack at most (the largest at a million memories: ~0.3 s).
    ``min_df`` and ``stale``: :data:`PACK_MIN_DF` and :data:`STALE_SHARE` when not given."""
    report = PackReport()
    if db.read_only or not has_packs(db):
        return report
    t0 = time.perf_counter()
    min_df = PACK_MIN_DF if min_df is None else min_df
    stale = STALE_SHARE if stale is None else stale
    for tid, df in stale_terms(db, min_df, stale):
        if budget is not None and report.postings and report.postings + df > budget:
            break
        with db.transaction():
            db.execute("SELECT docs FROM lex_stats FOR UPDATE")  # no writer is in flight now
            upto = db.scalar(
                "SELECT coalesce(max(posting_seq), 0) FROM lex_postings "
                "WHERE term_id = ? AND posting_seq IS NOT NULL",
                [tid],
            )
            labels, tf, dl = _postings(db, tid)
            db.execute("DELETE FROM lex_packed WHERE term_id = ?", [tid])  # its gone rows too
            db.execute(
                "INSERT INTO lex_packed (term_id, postings, count, upto) VALUES (?, ?, ?, ?)",
                [tid, pack(labels, tf, dl), len(labels), int(upto)],
            )
        report.terms += 1
        report.postings += len(labels)
    report.seconds = time.perf_counter() - t0
    return report
