-- A-Mem evolution. One row per (new memory, neighbour) step of an evolution: the
-- plan is written first (status 'planned'), then each step's outcome is written in the same
-- transaction as what it changed (context + history + link), so a resumed job never applies a
-- step twice and the metrics (share updated, tokens per add) are read from here.
CREATE TABLE evolution_steps (
    source VARCHAR NOT NULL,
    neighbour VARCHAR NOT NULL,
    rank INTEGER NOT NULL,
    similarity DOUBLE NOT NULL,
    -- planned | updated | linked | unchanged | gone | over-budget | reverted
    status VARCHAR NOT NULL,
    served_by VARCHAR,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    reason VARCHAR,
    -- the EVOLVE history event of the neighbour, when its context changed
    history_id BIGINT,
    job_id BIGINT,
    planned_at TIMESTAMP NOT NULL,
    decided_at TIMESTAMP,
    PRIMARY KEY (source, neighbour)
);

-- link expansion looks links up from both ends
CREATE INDEX links_dst ON links (dst);
