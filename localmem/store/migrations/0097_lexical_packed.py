"""PostgreSQL's BM25 reads a common term's postings packed in one value (derived data).

Reading every posting of a common word cost ~0.36 us a posting at a million memories, most of
it the executor's work per posting (docs/benchmarks.md, "pg3"); one ``bytea`` of a term's
postings is read with no work per posting. ``lex_packed`` holds, for terms with many postings,
their postings as they were when packed (``localmem/store/postgres/packed.py``), ``upto`` the
last ``posting_seq`` they include; postings written since carry a larger ``posting_seq`` (a
sequence every insert draws from, by default, so writers of any version number theirs) and
are read from ``lex_postings`` by ``(term_id, posting_seq)``. Postings made before this
migration have no number: every pack holds them (packs are made after it).

A deletion of packed postings (a ``remove``, an update, by code of any version) is recorded by
a trigger in ``lex_packed_gone`` in the deleting transaction, and a search leaves those
labels out of the pack; where many of a pack's postings go, or a packed posting is changed in
place, the trigger drops the pack instead (the term is read from ``lex_postings`` until the
next pack). Nothing here on DuckDB: the embedded index holds its postings in memory.
"""

from __future__ import annotations

from typing import Any

#: a pack loses more than this share of its postings: dropped rather than marked
_DROP_SHARE = 8

STATEMENTS = [
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


def migrate(db: Any) -> None:
    """Make the tables, sequence, index and triggers on PostgreSQL; nothing on DuckDB."""
    if getattr(db, "backend", None) != "postgres":
        return
    for statement in STATEMENTS:
        db.execute(statement)
