"""A query's BM25 scores as a search reads them: the best ``k`` labels, and the score of any
label asked for.

The embedded index scores every document of a query at once (an array by label, from postings
held in memory): :class:`ArrayScores` wraps that array. PostgreSQL at a million memories cannot
read every posting of a common word on each search, so its scores are computed for the labels
asked for only (``localmem.store.postgres.lexical``); both answer through this interface, so
the read pipeline does not know which it has.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Scores:
    """The BM25 scores of one query (0 for a document that does not match)."""

    def top(self, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best labels (only ``allowed`` ones, sorted, if given), best first, with
        their scores; documents that do not match are never returned."""
        raise NotImplementedError

    def at(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """The scores of ``labels`` (float32; 0 for a label that does not match or exist)."""
        raise NotImplementedError


class ArrayScores(Scores):
    """Scores held as one array by label (the embedded index's :meth:`scores`)."""

    def __init__(self, scores: np.ndarray) -> None:
        self.array = scores

    def top(self, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`Scores.top`."""
        return best(self.array, k, allowed=allowed)

    def at(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """As :meth:`Scores.at`."""
        labels = np.asarray(labels, dtype=np.int64)
        out = np.zeros(len(labels), dtype=np.float32)
        inside = (labels >= 0) & (labels < len(self.array))
        out[inside] = self.array[labels[inside]]
        return out


def best(
    scores: np.ndarray, k: int, *, allowed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best labels of an array of scores by label, best first, ties by label (only
    ``allowed`` ones if given; labels that score 0 are never returned)."""
    if allowed is not None:
        allowed = allowed[allowed < len(scores)]
        return pick(allowed, scores[allowed], k)
    labels = np.flatnonzero(scores > 0)
    return _ranked(labels, scores[labels], k)


def pick(labels: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of some labels and their scores, best first, ties by label (labels that
    score 0 are never returned)."""
    nz = np.flatnonzero(scores > 0)
    return _ranked(labels[nz], scores[nz], k)


def _ranked(
    cand_labels: np.ndarray, cand_scores: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    if len(cand_labels) == 0 or k <= 0:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    n = min(k, len(cand_labels))
    # ties broken by label, so any backend that scores the same gives the same list
    kth = np.partition(-cand_scores, n - 1)[n - 1]
    inside = np.flatnonzero(-cand_scores < kth)
    tied = np.flatnonzero(-cand_scores == kth)
    need = n - len(inside)
    if len(tied) > need:  # of the memories at the k-th score, the lowest labels
        tied = tied[np.argpartition(cand_labels[tied], need - 1)[:need]]
    inside = np.concatenate([inside, tied])
    top = inside[np.lexsort((cand_labels[inside], -cand_scores[inside]))]
    return cand_labels[top].astype(np.int64), cand_scores[top]
