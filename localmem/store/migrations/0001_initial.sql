-- The core tables. Vectors live in hnswlib; DuckDB keeps a copy of every embedding so the
-- index can always be rebuilt from here.
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
    embedding FLOAT[],
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
    weight DOUBLE NOT NULL DEFAULT 1.0,
    reason VARCHAR,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (src, dst, kind)
);

CREATE TABLE attributes (
    memory_id VARCHAR NOT NULL,
    axis VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    rank INTEGER NOT NULL DEFAULT 0,
    score DOUBLE,
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
    tf INTEGER NOT NULL
);
CREATE TABLE lex_docs (
    label BIGINT NOT NULL,
    length INTEGER NOT NULL
);
