-- Hits are read back by hnswlib label (records.fetch_by_labels). Without an index DuckDB scans
-- the label column of every row group for each search: at 100k memories that took 40 ms of a
-- search's wall time against 3 ms with the index (scripts/bench_scale.py, docs/benchmarks.md).
-- Not UNIQUE: uniqueness already comes from the label sequence, and DuckDB checks unique
-- indexes eagerly when an UPDATE rewrites a row (list columns are updated as delete + insert).
CREATE INDEX IF NOT EXISTS memories_label ON memories (label);
