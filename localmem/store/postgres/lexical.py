"""BM25 on PostgreSQL: the same tables and the same scores as the embedded store's
:class:`~localmem.store.lexical.LexicalIndex`, computed by the database.

The embedded index keeps the postings in memory (numpy rows plus a delta of its own writes):
right for one process, wrong for several processes writing one database, each of which would
miss the others' postings. Here every score is one SQL statement over ``lex_postings`` (by
term) and ``lex_docs``, so a search sees what any process committed; term ids come from a
sequence with ``ON CONFLICT`` on the term, so two processes adding the same new word agree.
The collection's size and total length are kept in the one row of ``lex_stats``, updated in
the same transactions (so it is exact, as the embedded index's counters are).
The formula, constants and terms are the embedded index's, so the scores are the same up to
float rounding (PostgreSQL adds in double precision).

Why not PostgreSQL's own full-text ranking (``ts_rank``): it is not BM25 (no document-length
normalisation of this kind, no IDF), so LoCoMo recall and the fusion's calibration would differ
from the embedded store's; the same BM25 keeps the two backends' results identical.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from localmem.store.lexical import LexicalIndex
from localmem.store.postgres.binary import copy_rows
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.impact import IMPACT_SQL, ImpactScores, impact
from localmem.store.postgres.packing import has_packs
from localmem.text import term_counts, terms


def postings_of(
    labels: Sequence[int], texts: Sequence[str]
) -> tuple[list[str], list[int], list[int], list[int], list[int]]:
    """The documents' postings as columns (term, label, tf, document length) and each
    document's length."""
    p_term: list[str] = []
    p_label: list[int] = []
    p_tf: list[int] = []
    p_dl: list[int] = []
    d_len: list[int] = []
    for label, text in zip(labels, texts, strict=True):
        counts = term_counts(text)
        length = sum(counts.values())
        for term, tf in counts.items():
            p_term.append(term)
            p_label.append(int(label))
            p_tf.append(int(tf))
            p_dl.append(length)
        d_len.append(length)
    return p_term, p_label, p_tf, p_dl, d_len


class PgLexicalIndex(LexicalIndex):
    """BM25 over the memories of a PostgreSQL store, scored in SQL."""

    db: PgDatabase

    def __init__(self, db: PgDatabase) -> None:
        super().__init__(db)
        self._packed: bool | None = None  # whether the store has packs (read once)

    def add(self, labels: Sequence[int], texts: Sequence[str]) -> None:
        """Index documents under their labels (in the caller's transaction)."""
        if not labels:
            return
        p_term, p_label, p_tf, p_dl, d_len = postings_of(labels, texts)
        df = Counter(p_term)
        with self.db.transaction():
            # the collection's row first: writers of postings take their turns here, so two
            # never lock the same terms' rows in opposite orders
            self.db.execute(
                "UPDATE lex_stats SET docs = docs + ?, total = total + ?",
                [len(d_len), int(sum(d_len))],
            )
            with self.db.guarded() as con:
                if p_term:
                    ids = self._upsert_terms(df)
                    copy_rows(
                        con,
                        "lex_postings",
                        ("term_id", "label", "tf", "dl", "impact"),
                        [
                            ("INTEGER", [ids[t] for t in p_term]),
                            ("BIGINT", p_label),
                            ("INTEGER", p_tf),
                            ("INTEGER", p_dl),
                            ("REAL", impact(p_tf, p_dl)),
                        ],
                    )
                copy_rows(
                    con,
                    "lex_docs",
                    ("label", "length"),
                    [("BIGINT", [int(x) for x in labels]), ("INTEGER", d_len)],
                )

    def _upsert_terms(self, df: Counter[str]) -> dict[str, int]:
        """New terms get ids, every term's ``df`` grows by its count: one statement, which
        hands back the ids, so the postings are written with them (by binary ``COPY``, no
        join on the terms' text). Rows are locked in the terms' order."""
        terms_in_order = sorted(df)
        rows = self.db.fetchall(
            "INSERT INTO lex_terms (id, term, df) SELECT nextval('lex_term_seq'), x.term, x.n "
            "FROM unnest(?::VARCHAR[], ?::BIGINT[]) AS x(term, n) ORDER BY x.term "
            "ON CONFLICT (term) DO UPDATE SET df = lex_terms.df + excluded.df "
            "RETURNING term, id",
            [terms_in_order, [df[t] for t in terms_in_order]],
        )
        return {term: int(tid) for term, tid in rows}

    def remove(self, labels: Iterable[int]) -> None:
        """Drop documents from the index (in the caller's transaction)."""
        labels = [int(x) for x in labels]
        if not labels:
            return
        with self.db.transaction():
            self.db.execute("SELECT docs FROM lex_stats FOR UPDATE")  # writers' turn (add)
            self.db.execute(
                "WITH gone AS (DELETE FROM lex_postings "
                "WHERE label IN (SELECT unnest(?::BIGINT[])) RETURNING term_id), "
                "n AS (SELECT term_id, count(*) AS n FROM gone GROUP BY term_id) "
                "UPDATE lex_terms t SET df = t.df - n.n FROM n WHERE t.id = n.term_id",
                [labels],
            )
            self.db.execute(
                "WITH gone AS (DELETE FROM lex_docs WHERE label IN (SELECT unnest(?::BIGINT[])) "
                "RETURNING length) UPDATE lex_stats SET docs = docs - (SELECT count(*) FROM gone), "
                "total = total - (SELECT coalesce(sum(length), 0) FROM gone)",
                [labels],
            )

    def refresh_stats(self) -> None:
        """After a copy wrote the tables: the postings' document lengths from ``lex_docs``
        (a DuckDB store has no such column) and ``lex_stats`` counted again."""
        self.db.execute(
            "UPDATE lex_postings p SET dl = d.length FROM lex_docs d "
            "WHERE d.label = p.label AND p.dl IS NULL"
        )
        self.db.execute(f"UPDATE lex_postings SET impact = {IMPACT_SQL} WHERE impact IS NULL")
        self.db.execute("UPDATE lex_terms SET df = 0")
        self.db.execute(
            "UPDATE lex_terms t SET df = c.n FROM (SELECT term_id, count(*) AS n "
            "FROM lex_postings GROUP BY term_id) c WHERE c.term_id = t.id"
        )
        self.db.execute(
            "UPDATE lex_stats SET docs = (SELECT count(*) FROM lex_docs), "
            "total = (SELECT coalesce(sum(length), 0) FROM lex_docs)"
        )

    def record_terms(self) -> None:
        """Nothing: PostgreSQL tokenises the reranker's texts (another process, of another
        version, may add postings at any time), so its stores record no tokeniser version."""

    def rollback(self) -> None:
        """Nothing is held in memory: a rolled-back transaction took its postings with it."""

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every document for ``query``, indexed by label (0: no match)."""
        return self.scored(query)._all().array

    def scored(self, query: str) -> ImpactScores:
        """The query's scores, computed for the labels a search asks about only: its best ``k``
        from the postings ordered by impact (:mod:`localmem.store.postgres.impact`)."""
        if self._packed is None:
            self._packed = has_packs(self.db)
        return ImpactScores(self.db, list(dict.fromkeys(terms(query))), packed=self._packed)

    def document_frequencies(self, stems: Iterable[str]) -> dict[str, int]:
        """How many indexed memories hold each term (kept in ``lex_terms.df``)."""
        wanted = sorted(set(stems))
        rows = self.db.fetchall(
            "SELECT term, df FROM lex_terms WHERE term IN (SELECT unnest(?::VARCHAR[]))",
            [wanted],
        )
        found: dict[str, int] = dict(rows)
        return {t: int(found.get(t, 0)) for t in wanted}

    def held_terms(
        self, labels: Sequence[int] | np.ndarray, stems: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """None: the postings live in the database (another process may have written them);
        the reranker tokenises the texts instead."""
        return None

    @property
    def doc_count(self) -> int:
        """Documents in the index (kept in ``lex_stats``: counting ``lex_docs`` took tens of
        milliseconds a search at a million memories)."""
        return int(self.db.scalar("SELECT docs FROM lex_stats"))
