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
        from localmem.store.lexical import LexicalIndex

        return LexicalIndex.top(self.array, k, allowed=allowed)

    def at(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """As :meth:`Scores.at`."""
        labels = np.asarray(labels, dtype=np.int64)
        out = np.zeros(len(labels), dtype=np.float32)
        inside = (labels >= 0) & (labels < len(self.array))
        out[inside] = self.array[labels[inside]]
        return out
