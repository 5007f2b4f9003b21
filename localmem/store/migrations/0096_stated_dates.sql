-- The dates each memory's text states, as the date parser finds them (localmem/store/dates.py):
-- derived data written by the unit of writing with the memory, so that a search naming a time
-- reads them with the rows instead of parsing ~150 texts. A row counts only while its version,
-- content hash and event day match the memory's (else the text is parsed, as without it).
CREATE TABLE memory_dates (
    label BIGINT NOT NULL,
    version INTEGER NOT NULL,
    content_hash VARCHAR NOT NULL,
    event_day DATE,
    spans VARCHAR NOT NULL
);
