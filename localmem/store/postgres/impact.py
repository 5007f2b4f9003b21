"""BM25 on PostgreSQL from the postings ordered by impact: the best ``k`` memories of a query
without reading every posting of its terms, and the same answer as scoring them all.

Each posting carries ``impact = tf / ((1 - b) * A0 + b * dl)`` with a fixed ``A0``
(:data:`A0`): BM25's term weight is ``(k1 + 1) * g * A / (g * A + k1)`` with
``g = tf / ((1 - b) * A + b * dl)`` and ``A`` the collection's average length, increasing in
``g``, and ``g <= impact * max(1, A0 / A)`` for every posting. A search (the threshold
algorithm, Fagin et al.):

1. reads each query term's ``n`` postings of highest impact (an index scan of
   ``(term_id, impact DESC)``), and every posting of the query's terms for the memories found
   there, and scores those memories exactly;
2. bounds what a memory it has not seen could score: for each term whose list goes on, the
   weight at the last impact read;
3. stops when its ``k``-th best score beats that bound; otherwise reads four times deeper
   (past :data:`DEEPEST` postings a term it scores every posting, as before).

A query whose terms have few postings in all (:data:`FULL_BELOW`) has them all scored in one
statement, as before: at 20k synthetic memories the rounds cost twice that (136 against 73 ms
at p50, load 20), since on those texts the bound is beaten only a few rounds deep.

The scores of other labels (the reranker's pool, their neighbours) are read for those labels
only. Scores are in double precision and handed on as float32, as the full scoring did, so
the ranking is the embedded index's (tests/test_pg_lexical.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from localmem.store.lexical import K1, B
from localmem.store.postgres.db import PgDatabase
from localmem.store.scores import ArrayScores, Scores

#: the average document length the stored impacts assume (memories hold about 10 index terms)
A0 = 10.0
#: the SQL that computes a posting's impact (the migration and a copy's refresh use it)
IMPACT_SQL = f"tf::REAL / ({(1 - B) * A0} + {B} * coalesce(dl, 0))"
#: postings of each term read at first (times k), and the most before scoring them all
FIRST = 4
SHALLOWEST = 64
DEEPEST = 20_000
#: a filter that leaves at most this many memories has them scored directly
FEW = 4096
#: a query whose terms have at most this many postings in all has them all scored (one
#: statement, as before: cheaper than reading by impact in rounds; measured at 20k memories)
FULL_BELOW = 50_000


def impact(tf: Sequence[int], dl: Sequence[int]) -> np.ndarray:
    """The stored impact of postings (float32, as the column keeps it)."""
    tf64 = np.asarray(tf, dtype=np.float64)
    return (tf64 / ((1 - B) * A0 + B * np.asarray(dl, dtype=np.float64))).astype(np.float32)


def weight(g: np.ndarray | float, avgdl: float) -> np.ndarray | float:
    """BM25's term weight (without the idf) of a posting with ``g = tf / ((1-b) A + b dl)``."""
    return (K1 + 1) * g * avgdl / (g * avgdl + K1)


class ImpactScores(Scores):
    """One query's BM25 scores on PostgreSQL, read as a search asks for them."""

    def __init__(
        self, db: PgDatabase, terms: list[str], score_all: Callable[[str], np.ndarray]
    ) -> None:
        self.db = db
        self.terms = terms
        self._score_all = score_all
        self._known: dict[int, float] = {}  # label -> score (float32 value), read so far
        self._array: np.ndarray | None = None  # every score, when they were all read
        self._stats: tuple[dict[int, float], float, float] | None = None
        self._postings = 0  # of the query's terms (their document frequencies' sum)

    def _collection(self) -> tuple[dict[int, float], float, float]:
        """(term id -> idf, number of documents, average length), read once."""
        if self._stats is None:
            rows = self.db.fetchall(
                "SELECT t.id, t.df, s.docs, s.total FROM lex_stats s LEFT JOIN lex_terms t "
                "ON t.term IN (SELECT unnest(?::VARCHAR[])) AND t.df > 0",
                [self.terms],
            )
            n = float(rows[0][2]) if rows else 0.0
            total = float(rows[0][3]) if rows else 0.0
            avgdl = total / n if total > 0 and n > 0 else 1.0
            idf = {
                int(tid): float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))
                for tid, df, _, _ in rows
                if tid is not None
            }
            self._stats = (idf, n, avgdl)
            self._postings = sum(int(df) for tid, df, _, _ in rows if tid is not None)
        return self._stats

    def at(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """As :meth:`Scores.at`: labels not read yet are scored in one query."""
        labels = np.asarray(labels, dtype=np.int64)
        if self._array is not None:
            return ArrayScores(self._array).at(labels)
        missing = sorted({int(x) for x in labels.tolist() if x >= 0} - set(self._known))
        if missing:
            self._score(missing)
        return np.array([self._known.get(int(x), 0.0) for x in labels], dtype=np.float32)

    def _score(self, labels: list[int]) -> None:
        """Score ``labels`` exactly from all their postings of the query's terms."""
        idf, _, avgdl = self._collection()
        for label in labels:
            self._known[label] = 0.0
        if not idf or not labels:
            return
        rows = self.db.fetchall(
            "SELECT term_id, label, tf, dl FROM lex_postings WHERE term_id = ANY(?::INTEGER[]) "
            "AND label IN (SELECT unnest(?::BIGINT[]))",
            [list(idf), labels],
        )
        self._add(rows, idf, avgdl)

    def _add(self, rows: Any, idf: dict[int, float], avgdl: float) -> None:
        sums: dict[int, float] = {}
        for tid, label, tf, dl in rows:  # the formula of the embedded index, in doubles
            part = idf[int(tid)] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * (dl or 0) / avgdl))
            sums[int(label)] = sums.get(int(label), 0.0) + part
        for label, value in sums.items():
            self._known[label] = float(np.float32(value))

    def top(self, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`Scores.top`, by the threshold algorithm (module docstring)."""
        idf, _, avgdl = self._collection()
        if not idf or k <= 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        if self._postings <= FULL_BELOW:
            return self._all().top(k, allowed)
        if allowed is not None and len(allowed) <= FEW:  # a narrow filter: score its memories
            self.at(allowed)
            return self._best(set(allowed.tolist()), k, allowed)
        depth = max(FIRST * k, SHALLOWEST)
        slack = max(1.0, A0 / avgdl) * (1 + 1e-6)  # float32 impacts: a hair of room
        while depth <= DEEPEST:
            rows = self.db.fetchall(
                "SELECT q.tid, p.label, p.impact, count(*) OVER (PARTITION BY q.tid) "
                "FROM unnest(?::INTEGER[]) AS q(tid) CROSS JOIN LATERAL ("
                "SELECT label, impact FROM lex_postings WHERE term_id = q.tid "
                "ORDER BY impact DESC, label LIMIT ?) p",
                [list(idf), depth],
            )
            last: dict[int, float] = {}
            found: set[int] = set()
            for tid, label, value, n in rows:
                found.add(int(label))
                if n >= depth:  # the list goes on: its last impact bounds the rest
                    last[int(tid)] = min(last.get(int(tid), np.inf), float(value))
            self.at(sorted(found))
            bound = sum(idf[t] * float(weight(v * slack, avgdl)) for t, v in last.items())
            labels, scores = self._best(found, k, allowed)
            if (len(labels) == k and float(scores[-1]) > bound) or not last:
                return labels, scores
            depth *= 4
        # a query no shallow read settles (a filter that leaves few memories, say): every
        # posting of its terms, as the embedded index scores them
        return self._all().top(k, allowed)

    def _all(self) -> ArrayScores:
        """Every posting of the query's terms scored (the statement used before impact ordering)."""
        if self._array is None:
            self._array = self._score_all(" ".join(self.terms))
        return ArrayScores(self._array)

    def _best(
        self, found: set[int], k: int, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        labels = np.array(sorted(x for x in found if self._known.get(x, 0.0) > 0), np.int64)
        if allowed is not None and len(labels):
            at = np.searchsorted(allowed, labels).clip(0, max(len(allowed) - 1, 0))
            labels = labels[(allowed[at] == labels) if len(allowed) else np.zeros(0, bool)]
        scores = np.array([self._known[x] for x in labels.tolist()], dtype=np.float32)
        order = np.lexsort((labels, -scores))[:k]
        return labels[order], scores[order]
