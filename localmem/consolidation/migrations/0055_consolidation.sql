-- Hierarchical consolidation: episodic -> semantic -> meta. New memories carry their
-- level in `memories.level` and their provenance as `links` (kind 'derived_from', new -> source).
-- A run is recorded here with what it did; `consolidated` says which episodic memories a run
-- folded into a semantic fact, so a re-run only looks at the ones not consolidated yet.
CREATE TABLE consolidation_runs (
    id BIGINT PRIMARY KEY,
    user_id VARCHAR,
    agent_id VARCHAR,
    started_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP NOT NULL,
    -- model-free, llama:<model>, http:<model> (several when a run mixed them)
    served_by VARCHAR NOT NULL,
    episodic INTEGER NOT NULL,
    clusters INTEGER NOT NULL,
    semantic_new INTEGER NOT NULL,
    semantic_extended INTEGER NOT NULL,
    meta_new INTEGER NOT NULL,
    meta_replaced INTEGER NOT NULL,
    params JSON
);
CREATE SEQUENCE consolidation_run_seq START 1;

CREATE TABLE consolidated (
    memory_id VARCHAR PRIMARY KEY,
    run_id BIGINT NOT NULL,
    -- the semantic memory it was folded into
    into_id VARCHAR NOT NULL
);
CREATE INDEX consolidated_into ON consolidated (into_id);
