"""Copy a store into another, empty one, whatever their backends (``localmem migrate-store``):
DuckDB -> PostgreSQL and back.

Every table both stores have (the core's and the mechanisms') is copied row for row in pyarrow
batches, with the same ids, labels and numbers, so links, history, jobs and the mechanisms'
rows keep pointing at the same memories; then the sequences of the destination are moved past
the copied numbers. The destination's vector index follows from its rows: pgvector's is built
once after them, hnswlib's when the store is next opened (it catches up from ``vec_seq``).
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from localmem.errors import StoreError
from localmem.store.lexical import TERMS_META, UNRECORDED
from localmem.store.store import Store

#: sequence -> the column whose numbers it hands out
SEQUENCES = {
    "label_seq": ("memories", "label"),
    "vec_seq": ("memories", "vec_seq"),
    "history_seq": ("history", "id"),
    "job_seq": ("jobs", "id"),
    "procedure_event_seq": ("procedure_events", "id"),
    "consolidation_run_seq": ("consolidation_runs", "id"),
    "lex_term_seq": ("lex_terms", "id"),  # PostgreSQL's term ids (DuckDB's come from memory)
}
#: not copied: the migrations are each store's own; ``lex_stats`` (PostgreSQL's BM25 counts) is
#: recounted from the copied rows; ``lex_packed*`` (PostgreSQL's packed postings) are derived,
#: made again by the destination's upkeep
SKIPPED = {"schema_migrations", "lex_stats", "lex_packed", "lex_packed_gone"}
#: not copied or exported: PostgreSQL's ``vector_pending`` says whether a row is in *this*
#: database's HNSW index yet; a load builds the index over every row it writes;
#: ``posting_seq`` numbers postings in the order *this* database got them (its packs rely on it)
DERIVED_COLUMNS = frozenset({"vector_pending", "posting_seq"})
#: columns only PostgreSQL's BM25 tables carry, each counted from the others (a posting's
#: document length and impact, a term's number of postings): a folder store leaves them out of
#: a copy or an import, and PostgreSQL fills in what it was not given (``refresh_stats``)
RECOUNTED_COLUMNS = {"lex_postings": frozenset({"dl", "impact"}), "lex_terms": frozenset({"df"})}


def columns_of(store: Store, table: str) -> list[tuple[str, str]]:
    """A table's columns as (name, type), in order."""
    return [
        (name, str(kind))
        for name, kind in store.db.fetchall(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = ? AND table_schema = current_schema() ORDER BY ordinal_position",
            [table],
        )
    ]


def copy_store(
    src: Store,
    dst: Store,
    *,
    batch_rows: int = 20_000,
    progress: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """Copy every row of ``src`` into the empty store ``dst``; returns rows per table.

    Raises:
        StoreError: ``dst`` already holds memories, or the two stores' tables differ (opened
            with different mechanisms or versions).
    """
    if dst.db.scalar("SELECT count(*) FROM memories"):
        raise StoreError(f"the destination {dst.location} is not empty; copy into a new store")
    src_tables = {name for _, name, _ in src.db.user_tables()} - SKIPPED
    dst_tables = {name for _, name, _ in dst.db.user_tables()} - SKIPPED
    if src_tables - dst_tables:
        raise StoreError(
            f"the destination lacks tables of the source: {sorted(src_tables - dst_tables)}"
        )
    counts: dict[str, int] = {}
    with dst.write_lock, dst.bulk_loading():
        for table in sorted(src_tables):
            dst.db.execute(f"DELETE FROM {table}")  # meta of a new store: the source's wins
            # the columns both have (PostgreSQL's postings carry an extra one, filled after)
            have = {c for c, _ in columns_of(src, table)} - DERIVED_COLUMNS
            columns = [(c, kind) for c, kind in columns_of(dst, table) if c in have]
            names = ", ".join(f'"{c}"' for c, _ in columns)
            # PostgreSQL takes text into a JSON column only by an explicit cast
            select = ", ".join(
                f'"{c}"::JSON' if kind.lower() == "json" else f'"{c}"' for c, kind in columns
            )
            n = 0
            for batch in src.db.arrow_batches(f"SELECT {names} FROM {table}", rows=batch_rows):
                if batch.num_rows:
                    dst.db.insert_arrow(
                        f"{table} ({names})", pa.Table.from_batches([batch]), select
                    )
                    n += batch.num_rows
                    if progress is not None:
                        progress(table, n)
            counts[table] = n
        advance_sequences(dst)
        forget_terms_on_postgres(dst)
        dst.lexical.refresh_stats()
    return counts


def advance_sequences(dst: Store) -> None:
    """Move the store's sequences past the numbers its copied rows hold."""
    tables = {name for _, name, _ in dst.db.user_tables()}
    for seq, (table, column) in SEQUENCES.items():
        if table in tables and (seq != "lex_term_seq" or dst.db.backend == "postgres"):
            top = dst.db.scalar(f"SELECT max({column}) FROM {table}")
            if top is not None:
                dst.db.restart_sequence(seq, int(top) + 1)


def forget_terms_on_postgres(dst: Store) -> None:
    """A PostgreSQL store records no tokeniser version for its postings (processes of other
    versions may add to them): the source's record is not copied there (its row says so
    instead, so that both stores keep the same rows; a copy back carries that)."""
    if dst.db.backend == "postgres":
        dst.db.execute("UPDATE meta SET value = ? WHERE key = ?", [UNRECORDED, TERMS_META])


def table_counts(store: Store) -> dict[str, int]:
    """Rows per table (what a copy must reproduce)."""
    return {name: n for _, name, n in store.db.user_tables() if name not in SKIPPED}
