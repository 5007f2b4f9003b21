"""Packing common terms' postings (``packed.py``): the tables (:func:`ensure_packs`), which
terms, and the step that packs them.

Reading every posting of a common word row by row cost ~0.36 us a posting at a million
memories, the executor's work per posting (docs/benchmarks.md, "pg3"). ``lex_packed`` holds,
for terms with many postings, their postings as they were when packed, ``upto`` the last
``posting_seq`` they include; postings written since carry a larger ``posting_seq`` (a sequence
every insert draws from by default, so writers of any version number theirs) and are read from
``lex_postings`` by ``(term_id, posting_seq)``. A deletion of packed postings is recorded by a
trigger in ``lex_packed_gone`` in the deleting transaction, and a search leaves those labels
out of the pack.

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
#: a statement deleting more than this share of a pack's postings drops it rather than mark
#: them all (a pack is made again by the next upkeep)
_DROP_SHARE = 8

#: the pack tables, sequence, index and triggers (one transaction, :func:`ensure_packs`)
SCHEMA = [
    # postings made before have no number: every pack holds them (packs are made after this)
    "ALTER TABLE lex_postings ADD COLUMN posting_seq BIGINT",
    # one value at a time (no per-session cache): a later draw is always the larger number
    "CREATE SEQUENCE lex_posting_seq",
    "ALTER TABLE lex_postings ALTER COLUMN posting_seq SET DEFAULT nextval('lex_posting_seq')",
    "CREATE INDEX lex_postings_since ON lex_postings (term_id, posting_seq) "
    "INCLUDE (label, tf, dl) WHERE posting_seq IS NOT NULL",
    "CREATE TABLE lex_packed (term_id INTEGER PRIMARY KEY, postings BYTEA NOT NULL, "
    "count BIGINT NOT NULL, upto BIGINT NOT NULL)",
    # read whole on every search of the term: stored uncompressed (no pglz on the read path)
    "ALTER TABLE lex_packed ALTER COLUMN postings SET STORAGE EXTERNAL",
    "CREATE TABLE lex_packed_gone (term_id INTEGER NOT NULL "
    "REFERENCES lex_packed (term_id) ON DELETE CASCADE, label BIGINT NOT NULL)",
    "CREATE INDEX lex_packed_gone_term ON lex_packed_gone (term_id) INCLUDE (label)",
    # packed postings deleted (a remove, an update, by code of any version): marked, in the
    # deleting transaction; over an eighth of a pack at once: the pack goes
    f"""CREATE FUNCTION lex_packed_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lex_packed k USING (
        SELECT o.term_id, count(*) AS n FROM lex_gone_rows o JOIN lex_packed p
        ON p.term_id = o.term_id AND (o.posting_seq IS NULL OR o.posting_seq <= p.upto)
        GROUP BY o.term_id) h
    WHERE k.term_id = h.term_id AND h.n * {_DROP_SHARE} > k.count;
    INSERT INTO lex_packed_gone (term_id, label)
        SELECT o.term_id, o.label FROM lex_gone_rows o JOIN lex_packed p
        ON p.term_id = o.term_id AND (o.posting_seq IS NULL OR o.posting_seq <= p.upto);
    RETURN NULL;
END $$""",
    # a packed posting changed in place (a copy's lengths filled in): its pack goes
    """CREATE FUNCTION lex_packed_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lex_packed k USING lex_gone_rows o
    WHERE k.term_id = o.term_id AND (o.posting_seq IS NULL OR o.posting_seq <= k.upto);
    RETURN NULL;
END $$""",
    """CREATE FUNCTION lex_packed_emptied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lex_packed;
    RETURN NULL;
END $$""",
    "CREATE TRIGGER lex_packed_deleted AFTER DELETE ON lex_postings "
    "REFERENCING OLD TABLE AS lex_gone_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION lex_packed_deleted()",
    "CREATE TRIGGER lex_packed_changed AFTER UPDATE ON lex_postings "
    "REFERENCING OLD TABLE AS lex_gone_rows FOR EACH STATEMENT "
    "EXECUTE FUNCTION lex_packed_changed()",
    "CREATE TRIGGER lex_packed_emptied AFTER TRUNCATE ON lex_postings "
    "FOR EACH STATEMENT EXECUTE FUNCTION lex_packed_emptied()",
]


def has_packs(db: PgDatabase) -> bool:
    """Whether the store has the pack tables: a store made by older code, or opened read-only
    before a writable open made them, reads every posting from ``lex_postings``."""
    return bool(db.scalar("SELECT to_regclass('lex_packed') IS NOT NULL"))


def ensure_packs(db: PgDatabase) -> bool:
    """Make the pack tables, their sequence, index and triggers where missing (a writable
    open, under the migration lock, one transaction); returns whether it made them. Not a
    migration, as ``indexes.py``'s indexes are not: DuckDB would need a no-op twin, and an
    embedded store opened read-only by code that knows a migration it lacks refuses to open.
    At a million memories the index over the postings takes ~45 s to build, once."""
    if has_packs(db):
        return False
    with db.advisory_lock():
        if has_packs(db):  # another process made them while this one waited
            return False
        with db.transaction():
            for statement in SCHEMA:
                db.execute(statement)
    return True


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
