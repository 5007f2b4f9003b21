-- The agent's memory. Short-term: a token-budgeted rolling buffer per conversation, kept
-- here so a restarted program continues it. Long-term: facts (question-answer pairs with a
-- salience and a success flag), entities and relations between them, per scope (a user id;
-- '' when the agent has none).
CREATE TABLE stm_messages (
    conversation_id VARCHAR NOT NULL,
    seq BIGINT NOT NULL,
    role VARCHAR NOT NULL,
    content VARCHAR NOT NULL,
    tokens INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (conversation_id, seq)
);

CREATE TABLE ltm_facts (
    id VARCHAR PRIMARY KEY,
    scope VARCHAR NOT NULL,
    conversation_id VARCHAR,
    question VARCHAR NOT NULL,
    answer VARCHAR NOT NULL,
    salience DOUBLE PRECISION NOT NULL,
    success BOOLEAN NOT NULL,
    created_at TIMESTAMP NOT NULL,
    -- the embedded "question answer" text, for the relevance read order
    embedding REAL[],
    metadata JSON
);
CREATE INDEX ltm_facts_scope ON ltm_facts (scope);

CREATE TABLE ltm_entities (
    scope VARCHAR NOT NULL,
    -- the name lower-cased with spaces collapsed: "Blood  falls" and "Blood Falls" are one entity
    key VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    type VARCHAR NOT NULL,
    attributes JSON,
    mentions INTEGER NOT NULL,
    first_seen TIMESTAMP NOT NULL,
    last_seen TIMESTAMP NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE TABLE ltm_relations (
    scope VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    relation VARCHAR NOT NULL,
    target VARCHAR NOT NULL,
    mentions INTEGER NOT NULL,
    first_seen TIMESTAMP NOT NULL,
    last_seen TIMESTAMP NOT NULL,
    PRIMARY KEY (scope, source, relation, target)
);
