-- MemInsight attributes (localmem/attributes): what matching and explanations need per row.
--   terms:       entity stems compared by overlap ("redis" matches "redis cache")
--   priority:    position in the memory's priority ranking of its attributes (0 = first)
--   label_set:   the intents/topics set the row was mined with
--   source_hash: content hash of the text mined (a changed memory shows as stale)
--   mined_at:    when
ALTER TABLE attributes ADD COLUMN terms VARCHAR[];
ALTER TABLE attributes ADD COLUMN priority INTEGER;
ALTER TABLE attributes ADD COLUMN label_set VARCHAR;
ALTER TABLE attributes ADD COLUMN source_hash VARCHAR;
ALTER TABLE attributes ADD COLUMN mined_at TIMESTAMP;
