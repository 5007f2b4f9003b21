-- The table of 0096_stated_dates.sql, so that a store copies between the backends. PostgreSQL
-- stores write no rows to it (their searches ask the database and parse, as before).
CREATE TABLE memory_dates (
    label BIGINT NOT NULL,
    version INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    event_day DATE,
    spans TEXT NOT NULL
);
