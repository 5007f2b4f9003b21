"""BM25 on PostgreSQL: the same tables and the same scores as the embedded store's
:class:`~localmem.store.lexical.LexicalIndex`, computed by the database.

The embedded index keeps the postings in memory (numpy rows plus a delta of its own writes):
right for one process, wrong for several processes writing one database, each of which would
miss the others' postings. Here every score is one SQL statement over ``lex_postings`` (by
term) and ``lex_docs``, so a search sees what any process committed; term ids come from a
sequence with ``ON CONFLICT`` on the term, so two processes adding the same new word agree.
The formula, constants and terms are the embedded index's, so the scores are the same up to
float rounding (PostgreSQL adds in double precision).

Why not PostgreSQL's own full-text ranking (``ts_rank``): it is not BM25 (no document-length
normalisation of this kind, no IDF), so LoCoMo recall and the fusion's calibration would differ
from the embedded store's; the same BM25 keeps the two backends' results identical.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from localmem.store.lexical import K1, B, LexicalIndex
from localmem.store.postgres.db import PgDatabase
from localmem.text import term_counts, terms

_SCORES = f"""
WITH q AS (SELECT id FROM lex_terms WHERE term IN (SELECT unnest(?::VARCHAR[]))),
     s AS (SELECT count(*) AS n, coalesce(sum(length), 0) AS total FROM lex_docs),
     df AS (SELECT p.term_id, count(*) AS df FROM lex_postings p JOIN q ON p.term_id = q.id
            GROUP BY p.term_id)
SELECT p.label,
       sum(ln(1.0 + (s.n - df.df + 0.5) / (df.df + 0.5)) * p.tf * {K1 + 1}
           / (p.tf + {K1} * (1 - {B} + {B} * d.length
              / (CASE WHEN s.total > 0 THEN s.total::DOUBLE PRECISION / s.n ELSE 1.0 END))))
FROM lex_postings p
JOIN df ON p.term_id = df.term_id
JOIN lex_docs d ON d.label = p.label
CROSS JOIN s
GROUP BY p.label
"""


class PgLexicalIndex(LexicalIndex):
    """BM25 over the memories of a PostgreSQL store, scored in SQL."""

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)

    def add(self, labels: Sequence[int], texts: Sequence[str]) -> None:
        """Index documents under their labels (in the caller's transaction)."""
        if not labels:
            return
        p_term, p_label, p_tf, d_len = [], [], [], []
        for label, text in zip(labels, texts, strict=True):
            counts = term_counts(text)
            for term, tf in counts.items():
                p_term.append(term)
                p_label.append(int(label))
                p_tf.append(int(tf))
            d_len.append(sum(counts.values()))
        with self.db.transaction():
            if p_term:
                self.db.execute(
                    "INSERT INTO lex_terms SELECT nextval('lex_term_seq'), t "
                    "FROM (SELECT DISTINCT unnest(?::VARCHAR[]) AS t) new ORDER BY t "
                    "ON CONFLICT (term) DO NOTHING",
                    [sorted(set(p_term))],
                )
                self.db.execute(
                    "INSERT INTO lex_postings SELECT t.id, x.label, x.tf "
                    "FROM unnest(?::VARCHAR[], ?::BIGINT[], ?::INTEGER[]) AS x(term, label, tf) "
                    "JOIN lex_terms t ON t.term = x.term",
                    [p_term, p_label, p_tf],
                )
            self.db.execute(
                "INSERT INTO lex_docs SELECT * FROM unnest(?::BIGINT[], ?::INTEGER[])",
                [[int(x) for x in labels], d_len],
            )

    def remove(self, labels: Iterable[int]) -> None:
        """Drop documents from the index (in the caller's transaction)."""
        labels = [int(x) for x in labels]
        if not labels:
            return
        with self.db.transaction():
            for table in ("lex_postings", "lex_docs"):
                self.db.execute(
                    f"DELETE FROM {table} WHERE label IN (SELECT unnest(?::BIGINT[]))", [labels]
                )

    def rollback(self) -> None:
        """Nothing is held in memory: a rolled-back transaction took its postings with it."""

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for ``query``, indexed by label (0: no match)."""
        q_terms = list(dict.fromkeys(terms(query)))
        size = int(self.db.scalar("SELECT coalesce(max(label), -1) + 1 FROM memories"))
        scores = np.zeros(max(size, 1), dtype=np.float32)
        if not q_terms:
            return scores
        rows = self.db.fetchall(_SCORES, [q_terms])
        if rows:
            labels = np.asarray([r[0] for r in rows], dtype=np.int64)
            scores[labels] = np.asarray([r[1] for r in rows], dtype=np.float32)
        return scores

    def document_frequencies(self, stems: Iterable[str]) -> dict[str, int]:
        """How many indexed memories hold each term."""
        wanted = sorted(set(stems))
        rows = self.db.fetchall(
            "SELECT t.term, count(p.label) FROM lex_terms t JOIN lex_postings p "
            "ON p.term_id = t.id WHERE t.term IN (SELECT unnest(?::VARCHAR[])) GROUP BY t.term",
            [wanted],
        )
        found = dict(rows)
        return {t: int(found.get(t, 0)) for t in wanted}

    @property
    def doc_count(self) -> int:
        """Documents in the index."""
        return int(self.db.scalar("SELECT count(*) FROM lex_docs"))
