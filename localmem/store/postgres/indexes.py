"""Indexes a writable open of a PostgreSQL store makes sure of, beyond its migrations.

Not migrations: a migration must exist for DuckDB too (a no-op there), and an embedded store
opened read-only by code of another version refuses to open while one is missing. An index
is only a faster path to the same rows, so a store without them (opened read-only, or by
older code) reads the same results, slower. Each is made under the migration lock, so of
several processes opening the store one builds it.

- ``lex_postings_impact``, ``lex_postings_label``: the postings' indexes carry tf and the
  document length, so BM25 reads postings by index-only scans (by term in impact order, every
  posting of a term, a memory's postings). Before, each posting read visited its heap page
  (postings lie in the order their memories were added: 17,001 pages for 37,578 postings at a
  million memories, ~4 us a posting). Rebuilt in 18 and 9 s at 1M.
- ``memories_embed_hash``: an add looks up the texts it embeds among the stored ones (the
  store is the embeddings' cache, ``store/embedcache.py``); without an index that was a scan
  of the whole table, 1.2 of the 2.1 s of adding 1,000 memories at a million.

docs/benchmarks.md, "PostgreSQL at 1M: BM25 from index-only postings".
"""

from __future__ import annotations

from localmem.store.postgres.db import PgDatabase

#: name -> (table, columns): rebuilt when the definition lacks ``must_hold``
INDEXES = {
    "lex_postings_impact": ("lex_postings", "(term_id, impact DESC, label) INCLUDE (tf, dl)"),
    "lex_postings_label": ("lex_postings", "(label, term_id) INCLUDE (tf, dl)"),
    "memories_embed_hash": ("memories", "(embed_hash)"),
}


def ensure_indexes(db: PgDatabase) -> list[str]:
    """Make (or remake) each of :data:`INDEXES` whose definition differs; returns their names.
    The table is locked for writes while one builds."""
    made: list[str] = []
    with db.advisory_lock():
        for name, (table, columns) in INDEXES.items():
            found = db.scalar("SELECT pg_get_indexdef(to_regclass(?))", [name])
            if found is not None and found.endswith(f"USING btree {columns}"):
                continue
            with db.transaction():
                db.execute(f"CREATE INDEX {name}_new ON {table} {columns}")
                db.execute(f"DROP INDEX IF EXISTS {name}")
                db.execute(f"ALTER INDEX {name}_new RENAME TO {name}")
            made.append(name)
    return made
