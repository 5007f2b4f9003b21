"""BM25 on PostgreSQL from the postings ordered by impact: the best ``k`` memories of a query
without reading every posting of its terms, and the same answer as scoring them all.

Each posting carries ``impact = tf / ((1 - b) * A0 + b * dl)`` with a fixed ``A0``
(:data:`A0`): BM25's term weight is ``(k1 + 1) * g * A / (g * A + k1)`` with
``g = tf / ((1 - b) * A + b * dl)`` and ``A`` the collection's average length, increasing in
``g``, and ``g <= impact * max(1, A0 / A)`` for every posting. A search (the threshold
algorithm, Fagin et al., with reads that need no visit to the table):

1. reads each query term's ``n`` postings of highest impact with their tf and document length
   (an index-only scan of ``(term_id, impact DESC, label) INCLUDE (tf, dl)``) and scores
   exactly what it read: each memory found has a known part, and for each list it was not
   found in that goes on, at most the weight at that list's last impact;
2. bounds what a memory not found at all could score: the sum of those last weights;
3. looks up by label (index only) just the memories whose known part plus those maxima reach
   the k-th best known part, and only if the k-th best upper bound beats the bound (else the
   round cannot settle the query: reading deeper is cheaper than looking up) and they are
   at most :data:`LOOKUPS_MOST` (else scoring every posting is cheaper);
4. stops when its ``k``-th best exact score beats the bound; otherwise reads four times
   deeper, until the rounds would have read :data:`ROUNDS_SHARE` of what reading every
   posting costs (a packed posting, ``packed.py``, counts :data:`PACKED_COST` of a row):
   then every posting is scored here, read as numpy arrays in one statement
   (:mod:`~localmem.store.postgres.postings`; ~2x cheaper a posting than the server's hash
   aggregate, which this replaced, and the rounds' reads and lookups cost more a posting than
   that, so they get a small share).

On texts whose memories tie (the synthetic benchmark texts: tf 1, a few lengths, so every
posting of a word has one of a few impacts), the bound falls below the k-th score only past
the k-th memory's length in every list, so common words cost what the rounds read; measured
at a million memories in docs/benchmarks.md ("PostgreSQL at 1M: BM25 from index-only
postings"). A query whose terms have few postings in all (:data:`FULL_BELOW`) has them all
scored at once.

The scores of other labels (the reranker's pool, their neighbours) are read for those labels
only (or from the array, once every posting was scored). Scores are added as the embedded
index adds them, to the last bit, so the ranking is the embedded index's, ties included
(tests/test_pg_lexical.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from localmem.store.lookup import members
from localmem.store.maxscore import K1, B
from localmem.store.maxscore import weight as weight_of
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.postings import each_term
from localmem.store.scores import ArrayScores, Scores

#: the average document length the stored impacts assume (memories hold about 10 index terms)
A0 = 10.0
#: the SQL that computes a posting's impact (the migration and a copy's refresh use it)
IMPACT_SQL = f"tf::REAL / ({(1 - B) * A0} + {B} * coalesce(dl, 0))"
#: postings of each term read at first (times k), and the most before scoring them all
FIRST = 4
SHALLOWEST = 64
#: rounds stop (and every posting is scored) past this share of the query's postings: at 1M
#: a first round (280 postings a term) settles most queries of 5-30k postings, a second
#: some of 100-250k, and deeper ones cost more than scoring every posting (docs/benchmarks.md,
#: "pg3": 0.5 against 0.03, 0.1 and 0)
ROUNDS_SHARE = 0.03
#: a round looks up at most this many memories by label (index only); past it every posting
#: is scored instead (at 1M rounds that looked up 5-16k memories took 150-900 ms, more than
#: every posting of the query read and scored here, docs/benchmarks.md "pg3")
LOOKUPS_MOST = 3_000
#: what reading a packed posting costs against reading a row (packed.py: at 1M the packs of a
#: query's ~430k postings read and scored in ~21 ms, the rows in ~240 ms; docs/benchmarks.md
#: "pg4"): the rounds' share is of the full read's cost, so a packed query skips them
PACKED_COST = 0.1
#: how much deeper each round reads
GROWTH = 4
DEEPEST = 20_000
#: a filter that leaves at most this many memories has them scored directly
FEW = 4096
#: a query whose terms have at most this many postings in all has them all scored at once
#: (a few milliseconds either way; at 1M the rounds settled queries of 10-30k postings in
#: 2-4 ms against 27-35 ms scoring them all, docs/benchmarks.md)
FULL_BELOW = 5_000


#: what a round that does not settle the query asks for: a deeper round, or every posting
_DEEPER, _EVERY = "deeper", "every posting"


def impact(tf: Sequence[int], dl: Sequence[int]) -> np.ndarray:
    """The stored impact of postings (float32, as the column keeps it)."""
    tf64 = np.asarray(tf, dtype=np.float64)
    return (tf64 / ((1 - B) * A0 + B * np.asarray(dl, dtype=np.float64))).astype(np.float32)


def _beats(score: float, bound: float) -> bool:
    """Whether ``score`` is surely above anything ``bound`` bounds, float32 rounding (the
    scores handed on) included: a tie at the k-th place is decided by label, so a memory
    whose score only rounds to the same float32 must not be left out."""
    return score > bound * (1 + 1e-6) + 1e-12


def weight(g: np.ndarray | float, avgdl: float) -> np.ndarray | float:
    """BM25's term weight (without the idf) of a posting with ``g = tf / ((1-b) A + b dl)``."""
    return (K1 + 1) * g * avgdl / (g * avgdl + K1)


class ImpactScores(Scores):
    """One query's BM25 scores on PostgreSQL, read as a search asks for them."""

    def __init__(self, db: PgDatabase, terms: list[str], *, packed: bool = False) -> None:
        self.db = db
        self.terms = terms
        self.packed = packed  # the store has packs of common terms' postings (packing.py)
        self._known: dict[int, float] = {}  # label -> score (float32 value), read so far
        self._array: np.ndarray | None = None  # every score, when they were all read
        self._stats: tuple[dict[int, float], float, float] | None = None
        self._df: dict[int, int] = {}  # term id -> its postings
        self._position: dict[int, int] = {}  # term id -> its place in the query
        self._postings = 0  # of the query's terms (their document frequencies' sum)
        self._full_cost = 0.0  # reading them all, in postings read from rows (PACKED_COST)
        self._some_packed = False  # a term of the query had a pack when its stats were read
        # what the search read (for benchmarks and tests): rounds of the threshold
        # algorithm, postings read by impact, memories looked up by label
        self.rounds = 0
        self.postings_read = 0
        self.looked_up = 0

    def _collection(self) -> tuple[dict[int, float], float, float]:
        """(term id -> idf, number of documents, average length), read once."""
        if self._stats is None:
            # with packs: whether each term has one (the full read's cost, the statement)
            packed, packs = (
                ("k.term_id IS NOT NULL", " LEFT JOIN lex_packed k ON k.term_id = t.id")
                if self.packed
                else ("false", "")
            )
            rows = self.db.fetchall(
                f"SELECT t.id, t.df, s.docs, s.total, t.term, {packed} FROM lex_stats s "
                "LEFT JOIN lex_terms t ON t.term IN (SELECT unnest(?::VARCHAR[])) AND t.df > 0"
                + packs,
                [self.terms],
            )
            n = float(rows[0][2]) if rows else 0.0
            total = float(rows[0][3]) if rows else 0.0
            avgdl = total / n if total > 0 and n > 0 else 1.0
            idf = {
                int(tid): float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))
                for tid, df, _, _, _, _ in rows
                if tid is not None
            }
            # the embedded index adds the terms' weights in the query's order
            order = {term: i for i, term in enumerate(self.terms)}
            self._position = {int(r[0]): order[r[4]] for r in rows if r[0] is not None}
            self._stats = (idf, n, avgdl)
            self._df = {int(r[0]): int(r[1]) for r in rows if r[0] is not None}
            self._postings = sum(self._df.values())
            self._full_cost = sum(
                float(r[1]) * (PACKED_COST if r[5] else 1.0) for r in rows if r[0] is not None
            )
            self._some_packed = any(r[5] for r in rows if r[0] is not None)
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
        idf = self._collection()[0]
        for label in labels:
            self._known[label] = 0.0
        if not idf or not labels:
            return
        rows = self.db.fetchall(
            "SELECT term_id, label, tf, coalesce(dl, 0) FROM lex_postings "
            "WHERE term_id = ANY(?::INTEGER[]) AND label IN (SELECT unnest(?::BIGINT[]))",
            [list(idf), labels],
        )
        self._add(rows)

    def _add(self, rows: Any) -> None:
        """Record the scores of the memories whose every posting of the query's terms is in
        ``rows`` (term id, label, tf, dl)."""
        if rows:
            labels, sums = self._row_sums(rows)
            self._known.update(zip(labels.tolist(), sums.tolist(), strict=True))

    def _row_sums(self, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_sums` of postings fetched as (term id, label, tf, dl) rows."""
        cols = np.asarray(rows, dtype=np.float64)
        return self._sums(cols[:, 0].astype(np.int64), cols[:, 1], cols[:, 2], cols[:, 3])

    def _sums(
        self, tids: np.ndarray, labels: np.ndarray, tf: np.ndarray, dl: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(labels, float32 scores) from all their postings of the query's terms, computed as
        the embedded index computes them, to the last bit: tf and lengths in float32, each
        term's weight in double, added to a float32 sum term by term in the query's order (a
        sum in double rounded once differs in the last bit now and then, and that reorders
        memories whose scores nearly tie)."""
        idf, _, avgdl = self._collection()
        out, at = np.unique(labels.astype(np.int64), return_inverse=True)
        sums = np.zeros(len(out), dtype=np.float32)
        tf32, dl32 = tf.astype(np.float32), dl.astype(np.float32)
        # each term's idf and place looked up once, then spread over its postings
        terms, of_term = np.unique(tids, return_inverse=True)
        w = np.asarray([idf[t] for t in terms.tolist()], dtype=np.float64)[of_term]
        part = weight_of(w, tf32, dl32, avgdl)
        place = np.asarray([self._position[t] for t in terms.tolist()], dtype=np.int64)[of_term]
        for p in np.unique(place).tolist():
            rows = place == p
            sums[at[rows]] += part[rows]
        return out, sums

    def top(self, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`Scores.top`, by the threshold algorithm (module docstring)."""
        idf, _, _ = self._collection()
        if not idf or k <= 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        if self._postings <= FULL_BELOW:
            return self._full_top(k) if allowed is None else self._all().top(k, allowed)
        if allowed is not None and len(allowed) <= FEW:  # a narrow filter: score its memories
            self.at(allowed)
            return self._best(set(allowed.tolist()), k, allowed)
        depth = max(FIRST * k, SHALLOWEST)
        while depth <= DEEPEST:
            # rounds cost what they read (and re-read), the full scoring what every posting
            # costs: past a share of that, scoring them all is cheaper (measured at 1M)
            planned = sum(min(depth, df) for df in self._df.values())
            if self.postings_read + planned > ROUNDS_SHARE * self._full_cost:
                break
            found, bound = self._round(depth, k, allowed)
            if found is _EVERY:  # settling it would look up too many memories
                break
            if isinstance(found, set):  # else the next round reads deeper (_DEEPER)
                labels, scores = self._best(found, k, allowed)
                if not np.isfinite(bound) or (
                    len(labels) == k and _beats(float(scores[-1]), bound)
                ):
                    return labels, scores
            depth *= GROWTH
        # a query no shallow read settles (a filter that leaves few memories, say): every
        # posting of its terms, as the embedded index scores them
        return self._full_top(k) if allowed is None else self._all().top(k, allowed)

    def _full_top(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` from every posting of the query's terms, scored here
        (:meth:`_all`)."""
        return self._all().top(k)

    def _round(
        self, depth: int, k: int, allowed: np.ndarray | None
    ) -> tuple[set[int] | str, float]:
        """Read each term's ``depth`` postings of highest impact (index only: they carry tf
        and the document length) and score exactly the memories that could still be among the
        best ``k``; returns them and the bound on any memory not read (inf: every list read
        to its end, so nothing is left unread), or :data:`_DEEPER` for them when this depth
        cannot settle the query (even the k-th best upper bound does not beat the bound): no
        memory is looked up then, the next round reads deeper; or :data:`_EVERY` when settling
        it would look up more than :data:`LOOKUPS_MOST` memories: every posting is scored
        instead.

        A memory read in some lists has a known part (those lists' exact weights) and, for each
        list it was not read in that goes on, at most the weight at that list's last impact.
        Only memories whose known part plus those maxima reach the k-th best known part are
        looked up by label; the others cannot enter the best k (every known part is a lower
        bound, so the k-th best exact score is at least the k-th best known part)."""
        idf, _, avgdl = self._collection()
        slack = max(1.0, A0 / avgdl) * (1 + 1e-6)  # float32 impacts: a hair of room
        tids = list(idf)
        rows = self.db.fetchall(
            "SELECT q.i, p.label, p.tf, coalesce(p.dl, 0), p.impact, "
            "count(*) OVER (PARTITION BY q.i) "
            "FROM unnest(?::INTEGER[]) WITH ORDINALITY AS q(tid, i) CROSS JOIN LATERAL ("
            "SELECT label, tf, dl, impact FROM lex_postings WHERE term_id = q.tid "
            "ORDER BY impact DESC, label LIMIT ?) p",
            [tids, depth],
        )
        self.rounds += 1
        self.postings_read += len(rows)
        if not rows:
            return set(), np.inf
        cols = np.array(rows, dtype=np.float64)
        term = cols[:, 0].astype(np.int64) - 1
        label = cols[:, 1].astype(np.int64)
        tf, dl, imp, n = cols[:, 2], cols[:, 3], cols[:, 4], cols[:, 5]
        # each list that goes on: the weight at its last impact bounds the rest of it
        goes_on = np.zeros(len(tids))
        for i in np.unique(term[n >= depth]).tolist():
            last = float(imp[term == i].min())
            goes_on[i] = idf[tids[i]] * float(weight(last * slack, avgdl))
        bound = float(goes_on.sum()) if goes_on.any() else np.inf
        if allowed is not None:
            keep = np.isin(label, allowed)
            term, label, tf, dl = term[keep], label[keep], tf[keep], dl[keep]
        w = np.asarray([idf[t] for t in tids])[term]
        part = weight_of(w, tf, dl, avgdl)
        labels, at = np.unique(label, return_inverse=True)
        known = np.bincount(at, weights=part, minlength=len(labels))
        # what the lists a memory was not read in (and that go on) could still add to it
        in_open_lists = np.bincount(at, weights=goes_on[term], minlength=len(labels))
        missing = np.maximum(goes_on.sum() - in_open_lists, 0.0)
        reads = np.bincount(at, weights=(goes_on[term] > 0), minlength=len(labels))
        exact = reads == np.count_nonzero(goes_on)  # read in every list that goes on
        whole = exact[at]  # the rows of the memories read in every list that goes on
        done, sums = self._sums(np.asarray(tids)[term[whole]], label[whole], tf[whole], dl[whole])
        self._known.update(zip(done.tolist(), sums.tolist(), strict=True))
        most = known + missing
        if np.isfinite(bound) and (
            len(labels) < k or not _beats(float(np.partition(most, len(most) - k)[-k]), bound)
        ):
            return _DEEPER, bound
        open_ = ~exact
        if len(labels) >= k:  # the k-th best known part: a memory that cannot reach it is out
            kth = float(np.partition(known, len(labels) - k)[len(labels) - k])
            open_ &= ~(kth > most * (1 + 1e-6) + 1e-12)
        if np.isfinite(bound) and open_.sum() > LOOKUPS_MOST:  # scoring them all is cheaper
            return _EVERY, bound
        self.looked_up += int(open_.sum())
        self.at(labels[open_])
        return set(labels[exact | open_].tolist()), bound

    def _all(self) -> ArrayScores:
        """Every posting of the query's terms read (one statement, as numpy arrays or packs:
        :mod:`~localmem.store.postgres.postings`) and scored here as the embedded index scores
        them all (``PrunedScores.dense``: each term's weights added to a float32 array by
        label, term by term in the query's order); an array by label."""
        if self._array is None:
            idf, _, avgdl = self._collection()
            tids = sorted(idf, key=self._position.__getitem__)
            sums = np.zeros(0, dtype=np.float32)

            def add(place: int, labels: np.ndarray, tf: np.ndarray, dl: np.ndarray) -> None:
                nonlocal sums
                top = int(labels.max()) + 1
                if top > len(sums):
                    grown = np.zeros(max(top, len(sums) * 3 // 2), dtype=np.float32)
                    grown[: len(sums)] = sums
                    sums = grown
                idf_t = np.float64(idf[tids[place]])
                sums[labels] += weight_of(
                    idf_t, tf.astype(np.float32), dl.astype(np.float32), avgdl
                )
                self.postings_read += len(labels)

            # either statement reads every posting (the rows are the truth; a pack made or
            # dropped since the stats were read changes nothing): the packs' is read where a
            # term had one, the simpler one (planned faster) elsewhere
            each_term(self.db, tids, add, packed=self._some_packed)
            self.rounds += 1
            self._array = sums
        return ArrayScores(self._array)

    def _best(
        self, found: set[int], k: int, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        labels = np.array(sorted(x for x in found if self._known.get(x, 0.0) > 0), np.int64)
        if allowed is not None and len(labels):
            labels = labels[members(allowed, labels)]
        scores = np.array([self._known[x] for x in labels.tolist()], dtype=np.float32)
        order = np.lexsort((labels, -scores))[:k]
        return labels[order], scores[order]
