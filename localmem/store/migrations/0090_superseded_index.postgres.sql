-- Each search asks whether any memory was superseded (records.py: if none, the "now" filter is
-- skipped). Without an index PostgreSQL answers by scanning the whole memories table: at 100k
-- memories a dense search took 56 ms at p50 instead of about 12 (docs/benchmarks.md
-- `postgres`). The index holds only the superseded rows, so it stays small and writes to
-- current memories never touch it.
CREATE INDEX IF NOT EXISTS memories_superseded ON memories (valid_to) WHERE valid_to IS NOT NULL;
