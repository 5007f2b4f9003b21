-- Mem^p procedural memory. A procedure's trigger is also a memory of kind
-- 'procedure' (memory_id), so it is embedded, indexed and searchable like any memory.
CREATE TABLE procedures (
    id VARCHAR PRIMARY KEY,
    memory_id VARCHAR NOT NULL,
    task_type VARCHAR NOT NULL,
    trigger VARCHAR NOT NULL,
    steps JSON NOT NULL,
    level VARCHAR NOT NULL,
    example VARCHAR,
    caveats JSON,
    source_session_id VARCHAR,
    -- active | retired (retired ones are left out of find and can be restored)
    status VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    use_count INTEGER NOT NULL DEFAULT 0,
    success_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    last_used TIMESTAMP,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    served_by VARCHAR NOT NULL
);

-- every version ever written, the current one included
CREATE TABLE procedure_versions (
    procedure_id VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    task_type VARCHAR NOT NULL,
    trigger VARCHAR NOT NULL,
    steps JSON NOT NULL,
    level VARCHAR NOT NULL,
    example VARCHAR,
    caveats JSON,
    reason VARCHAR,
    served_by VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (procedure_id, version)
);

-- CREATE, USE (with success and the trace), REVISE, RETIRE, RESTORE
CREATE SEQUENCE procedure_event_seq START 1;
CREATE TABLE procedure_events (
    id BIGINT PRIMARY KEY,
    procedure_id VARCHAR NOT NULL,
    event VARCHAR NOT NULL,
    version INTEGER NOT NULL,
    success BOOLEAN,
    info JSON,
    happened_at TIMESTAMP NOT NULL
);
