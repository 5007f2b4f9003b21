-- The core tables on PostgreSQL (the same as 0001_initial.sql but for the types DuckDB spells
-- differently), plus pgvector, the BM25 tables' keys and what the shared SQL needs of DuckDB.
CREATE TABLE meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

CREATE SEQUENCE label_seq START 0 MINVALUE 0;
CREATE SEQUENCE vec_seq START 1;

CREATE TABLE memories (
    id VARCHAR PRIMARY KEY,
    label BIGINT NOT NULL,
    kind VARCHAR NOT NULL,
    user_id VARCHAR,
    agent_id VARCHAR,
    session_id VARCHAR,
    content VARCHAR NOT NULL,
    context VARCHAR,
    level VARCHAR NOT NULL DEFAULT 'episodic',
    created_at TIMESTAMP NOT NULL,
    event_time TIMESTAMP,
    updated_at TIMESTAMP NOT NULL,
    metadata JSON,
    embedding REAL[],
    content_hash VARCHAR NOT NULL,
    -- hash of the exact text the vector was computed from (content + evolved context)
    embed_hash VARCHAR,
    deleted BOOLEAN NOT NULL DEFAULT FALSE,
    -- bumped whenever the vector changes (add, re-embed, delete): the index catches up from it
    vec_seq BIGINT NOT NULL
);

CREATE SEQUENCE history_seq START 1;
CREATE TABLE history (
    id BIGINT PRIMARY KEY,
    memory_id VARCHAR NOT NULL,
    event VARCHAR NOT NULL,
    field VARCHAR,
    old_value VARCHAR,
    new_value VARCHAR,
    actor VARCHAR NOT NULL,
    changed_at TIMESTAMP NOT NULL,
    info JSON
);

CREATE TABLE links (
    src VARCHAR NOT NULL,
    dst VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    weight DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    reason VARCHAR,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (src, dst, kind)
);

CREATE TABLE attributes (
    memory_id VARCHAR NOT NULL,
    axis VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    rank INTEGER NOT NULL DEFAULT 0,
    score DOUBLE PRECISION,
    miner VARCHAR
);

CREATE TABLE sessions (
    id VARCHAR PRIMARY KEY,
    title VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    outcome VARCHAR,
    created_at TIMESTAMP NOT NULL,
    completed_at TIMESTAMP,
    user_id VARCHAR,
    agent_id VARCHAR,
    metadata JSON
);

CREATE TABLE thoughts (
    memory_id VARCHAR PRIMARY KEY,
    session_id VARCHAR NOT NULL,
    number INTEGER NOT NULL,
    branch_id VARCHAR,
    branch_from INTEGER,
    revises INTEGER
);

CREATE SEQUENCE job_seq START 1;
CREATE TABLE jobs (
    id BIGINT PRIMARY KEY,
    kind VARCHAR NOT NULL,
    memory_id VARCHAR,
    payload JSON,
    status VARCHAR NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    error VARCHAR,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- BM25: terms get small ids; postings are (term, memory label, term frequency)
CREATE TABLE lex_terms (
    id INTEGER PRIMARY KEY,
    term VARCHAR NOT NULL
);
CREATE TABLE lex_postings (
    term_id INTEGER NOT NULL,
    label BIGINT NOT NULL,
    tf INTEGER NOT NULL,
    -- PostgreSQL only: the document's length, so BM25 reads the postings alone (lexical.py)
    dl INTEGER
);
CREATE TABLE lex_docs (
    label BIGINT NOT NULL,
    length INTEGER NOT NULL
);

-- vectors: an HNSW index over memories.embedding::vector(dim) is made once the store records
-- its embedding model (localmem/store/postgres/store.py)
CREATE EXTENSION IF NOT EXISTS vector;

-- BM25 on several processes: term ids come from the database, not from one process's memory
CREATE SEQUENCE lex_term_seq START 0 MINVALUE 0;
CREATE UNIQUE INDEX lex_terms_term ON lex_terms (term);
CREATE INDEX lex_postings_term ON lex_postings (term_id);
CREATE INDEX lex_postings_label ON lex_postings (label);
CREATE UNIQUE INDEX lex_docs_label ON lex_docs (label);
CREATE INDEX jobs_status ON jobs (status, id);
-- the collection's size and total length for BM25, kept with every add and remove, so a search
-- never counts lex_docs
CREATE TABLE lex_stats (docs BIGINT NOT NULL, total BIGINT NOT NULL);
INSERT INTO lex_stats VALUES (0, 0);

-- DuckDB functions the shared SQL uses, as PostgreSQL functions (no semicolon inside a body:
-- migrations are split on them)
CREATE FUNCTION range(n BIGINT) RETURNS SETOF BIGINT LANGUAGE sql IMMUTABLE
AS $$ SELECT generate_series(0, n - 1) $$;

-- a JSON pointer ('/key', ~1 for '/', ~0 for '~': localmem asks for top-level keys only) or a
-- '$.a.b' path, as DuckDB's json_extract_string takes both
CREATE FUNCTION json_extract_string(j JSON, path TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE
AS $$ SELECT CASE WHEN left(path, 1) = '$' THEN j #>> string_to_array(substr(path, 3), '.')
                  ELSE j ->> replace(replace(substr(path, 2), '~1', '/'), '~0', '~') END $$;

-- a '$.a.b' path
CREATE FUNCTION json_extract(j JSON, path TEXT) RETURNS JSON LANGUAGE sql IMMUTABLE
AS $$ SELECT j #> string_to_array(substr(path, 3), '.') $$;

CREATE FUNCTION len(a ANYARRAY) RETURNS INTEGER LANGUAGE sql IMMUTABLE
AS $$ SELECT cardinality(a) $$;

CREATE FUNCTION list_intersect(a ANYARRAY, b ANYARRAY) RETURNS ANYARRAY LANGUAGE sql IMMUTABLE
AS $$ SELECT coalesce(array_agg(DISTINCT x), a[0:0]) FROM unnest(a) x WHERE x = ANY(b) $$;

-- arg_max(value, key): the value of the row with the largest key
CREATE TYPE arg_max_state AS (k DOUBLE PRECISION, v TEXT);
CREATE FUNCTION arg_max_step(s arg_max_state, v TEXT, k DOUBLE PRECISION) RETURNS arg_max_state
LANGUAGE sql IMMUTABLE
AS $$ SELECT CASE WHEN k IS NOT NULL AND (s IS NULL OR (s).k IS NULL OR k > (s).k)
                  THEN ROW(k, v)::arg_max_state ELSE s END $$;
CREATE FUNCTION arg_max_final(s arg_max_state) RETURNS TEXT LANGUAGE sql IMMUTABLE
AS $$ SELECT (s).v $$;
CREATE AGGREGATE arg_max(TEXT, DOUBLE PRECISION) (
    SFUNC = arg_max_step, STYPE = arg_max_state, FINALFUNC = arg_max_final
);
