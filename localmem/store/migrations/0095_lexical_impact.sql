-- PostgreSQL's BM25 reads its candidates from postings ordered by impact and keeps each term's
-- document frequency (0095_lexical_impact.postgres.sql). The embedded index holds its postings
-- in memory and counts them there: nothing to do here.
SELECT 1;
