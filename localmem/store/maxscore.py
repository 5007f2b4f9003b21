"""BM25's best ``k`` memories without scoring every posting of a common word (MaxScore).

Scoring a query by adding every posting of its terms into an array as long as the store
costs, at a million memories, a few milliseconds for a query with a common word: most of a
plain search's growth from 100k to 1M (docs/benchmarks.md, `bm25-maxscore`). Each term has
an upper bound on what one of its postings can weigh (its largest tf and its shortest
document, :func:`weight` being increasing in tf and decreasing in length). The memories of
the rarest-bound list are read and scored term by term, largest bound first (looked up by label
in each sorted list), dropping those whose sum plus the bounds of the terms to come stays under
the ``k``-th best sum so far. When the other terms' bounds add up to less than that floor, no
memory outside the list can reach the top ``k``: the other lists are never read whole. A query
that list does not settle, whose list is long, or of more than :data:`MOST_TERMS` terms, is
scored the dense way (:meth:`LexicalIndex.scores`).

The survivors' weights are then added in the query's term order, as the dense array adds
them (a memory without a term adds 0.0, which leaves a float as it is), so every score, and so
every ranking and tie, is the same bit for bit (tests/test_maxscore.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localmem.store.scores import ArrayScores, Scores, best, pick

K1 = 1.2
B = 0.75
#: slack on the bounds: float32 sums round, each by at most an ulp of a few terms
SLACK = 1e-5
#: memories below which every posting is scored into one array: at 100k both ways cost the same
#: (0.22 ms a query) and the reranker then reads its pool's scores from the array; at 1M pruning
#: is the faster (2.14 against 1.44 ms; docs/benchmarks.md, `bm25-maxscore`)
PRUNE_FROM = 250_000
#: queries of more terms are scored densely; fewer are tried once, from their rarest-bound
#: list: one that list does not settle seldom settles with more lists read, and each try scores
#: what was read against every term (at 1M, two to six unrelated questions joined, 5-14 terms:
#: 1.3-3.5x slower than dense when every list could be read, 242 terms 12x; tried once, with
#: this limit, 1.0-1.4x)
MOST_TERMS = 8


def weight(
    idf: float | np.ndarray, tfs: np.ndarray, lengths: np.ndarray, avgdl: float
) -> np.ndarray:
    """BM25's weight of postings (``tfs`` and the documents' ``lengths`` as float32 arrays;
    ``idf`` their term's, or each posting's); the one formula the dense and the pruned
    scoring and PostgreSQL's use, so they agree to the bit."""
    return idf * tfs * (K1 + 1) / (tfs + K1 * (1 - B + B * lengths / avgdl))


@dataclass(frozen=True)
class TermPostings:
    """One query term's postings as a search reads them: labels sorted, their tfs, the term's
    idf and the most one posting can weigh."""

    labels: np.ndarray
    tfs: np.ndarray
    idf: float
    bound: float


class PrunedScores(Scores):
    """A query's BM25 scores, computed for the labels asked for (:meth:`at`) and for the best
    ``k`` without reading every posting (:meth:`top`).

    The query's postings are those held when it was scored; a document's length is read when
    a score is asked for, so a memory removed meanwhile by another thread is scored as having
    no length (as PostgreSQL's scores read the table when asked)."""

    def __init__(self, terms: list[TermPostings], lengths: np.ndarray, avgdl: float) -> None:
        self.terms = terms  # in the query's order: the order scores are added in
        self.lengths = lengths
        self.avgdl = avgdl
        self._dense: np.ndarray | None = None
        #: memories the last :meth:`top` read (None: it scored every document)
        self.read: int | None = None

    def at(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """As :meth:`Scores.at`."""
        if self._dense is not None:  # scored every document already: read them
            return ArrayScores(self._dense).at(labels)
        return self._scores_of(np.asarray(labels, dtype=np.int64))

    def _scores_of(self, labels: np.ndarray) -> np.ndarray:
        """The scores of ``labels``, each looked up in the query's lists."""
        out = np.zeros(len(labels), dtype=np.float32)
        if not len(labels):
            return out
        inside = None
        if labels.min() < 0 or labels.max() >= len(self.lengths):
            inside = (labels >= 0) & (labels < len(self.lengths))
        in_order = len(labels) > 256 and bool(np.all(labels[1:] > labels[:-1]))
        for term in self.terms:
            found, rows = _find(labels, term.labels, in_order)
            if inside is not None:
                keep = inside[found]
                found, rows = found[keep], rows[keep]
            if len(rows):
                out[found] += weight(
                    term.idf, term.tfs[rows], self.lengths[labels[found]], self.avgdl
                )
        return out

    def top(self, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`Scores.top`."""
        if allowed is not None:
            allowed = np.asarray(allowed, dtype=np.int64)
            if len(allowed) > self._few():
                self.read = None
                return best(self.dense(), k, allowed=allowed)
            allowed = allowed[allowed < len(self.lengths)]
            self.read = len(allowed)
            return pick(allowed, self.at(allowed), k)
        if k <= 0 or not self.terms:
            self.read = 0
            return np.empty(0, np.int64), np.empty(0, np.float32)
        if len(self.lengths) < PRUNE_FROM:
            self.read = None
            return best(self.dense(), k)
        rarest = max(self.terms, key=lambda t: t.bound)
        if len(self.terms) <= MOST_TERMS and len(rarest.labels) <= self._few():
            labels, scores, floor = self._best_read(rarest.labels, k)
            # what a memory without the rarest-bound term may score: the other terms' bounds
            unread = sum(t.bound for t in self.terms) - rarest.bound
            if unread * (1 + SLACK) < floor or len(self.terms) == 1:
                self.read = len(rarest.labels)  # no memory outside them can reach the k best
                return pick(labels, scores, k)
        self.read = None
        return best(self.dense(), k)

    def _best_read(self, read: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, float]:
        """The memories of ``read`` (sorted) that can be among its best ``k``, with their
        exact scores, and a score the ``k``-th best of ``read`` reaches at least (0: fewer than
        ``k``). Each term's weights are looked up largest bound first; after each, the ``k``-th
        best sum so far is such a floor, and a memory whose sum plus the bounds of the terms to
        come stays under it is dropped. The survivors' scores are then added in the query's
        order, as the dense array adds them (a memory without a term adds 0: the same float)."""
        by_bound = sorted(range(len(self.terms)), key=lambda j: -self.terms[j].bound)
        to_come = np.append(np.cumsum([self.terms[j].bound for j in by_bound][::-1])[::-1][1:], 0.0)
        labels, sums = read, np.zeros(len(read))
        weights: dict[int, np.ndarray] = {}
        floor = 0.0
        for step, j in enumerate(by_bound):
            term = self.terms[j]
            if term.labels is labels:  # the list read first, before any memory is dropped
                mine = weight(term.idf, term.tfs, self.lengths[labels], self.avgdl)
            else:
                found, rows = _find(labels, term.labels, in_order=True)
                mine = np.zeros(len(labels))
                mine[found] = weight(
                    term.idf, term.tfs[rows], self.lengths[labels[found]], self.avgdl
                )
            weights[j] = mine
            sums += mine
            last = step + 1 == len(by_bound)
            if len(sums) <= k or (not last and sums.min() + to_come[step] >= sums.max()):
                continue  # nothing can fall under the k-th best yet (the floor: at the end)
            # the k-th best sum (sums only grow; a float32 sum of these rounds within SLACK)
            # (the k-th smallest of the negated: 3-6x faster than the k-th from the end when
            # many memories share a score)
            floor = max(floor, -float(np.partition(-sums, k - 1)[k - 1]) * (1 - SLACK))
            keep = (sums + to_come[step]) * (1 + SLACK) >= floor
            if not keep.all():
                labels, sums = labels[keep], sums[keep]
                weights = {t: w[keep] for t, w in weights.items()}
        scores = np.zeros(len(labels), dtype=np.float32)
        for j in range(len(self.terms)):  # float32 += float64, rounded at each term
            scores += weights[j]
        return labels, scores, floor

    def dense(self) -> np.ndarray:
        """Every memory's score, as :meth:`LexicalIndex.scores` makes it (made once)."""
        if self._dense is None:
            out = np.zeros(len(self.lengths), dtype=np.float32)
            for term in self.terms:
                out[term.labels] += weight(
                    term.idf, term.tfs, self.lengths[term.labels], self.avgdl
                )
            self._dense = out
        return self._dense

    def _few(self) -> int:
        """Memories read past which scoring every posting is cheaper than looking them up."""
        return max(4096, len(self.lengths) // 16)


def _find(
    labels: np.ndarray, postings: np.ndarray, in_order: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Where ``labels`` are among a term's sorted ``postings``: the indexes of the labels
    found and their rows in the postings. Many labels in order are merged with the postings
    (linear); a few, or unordered ones, are looked up by bisection."""
    if in_order and len(labels) * 8 >= len(postings):
        both = np.concatenate([labels, postings])
        order = np.argsort(both, kind="stable")  # labels before postings at equal values
        same = np.flatnonzero(both[order[1:]] == both[order[:-1]])
        return order[same], order[same + 1] - len(labels)
    at = np.searchsorted(postings, labels)
    at[at == len(postings)] = 0
    found = np.flatnonzero(postings[at] == labels)
    return found, at[found]
