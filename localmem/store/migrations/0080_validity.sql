-- Time validity: a memory is true from valid_from until valid_to (open when NULL).
-- A memory that a newer one contradicts is not erased: it gets valid_to and a superseded_by
-- link to its successor, so search answers "now" without it and `as_of` still finds it.
-- Plain ADD COLUMN statements (no defaults that need a rewrite) so the PostgreSQL backend can
-- run the same DDL.
ALTER TABLE memories ADD COLUMN valid_from TIMESTAMP;
ALTER TABLE memories ADD COLUMN valid_to TIMESTAMP;
ALTER TABLE memories ADD COLUMN superseded_by VARCHAR;
UPDATE memories SET valid_from = coalesce(event_time, created_at);
