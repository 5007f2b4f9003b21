"""Merging ranked lists into one score: pure functions over labels and scores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RankedList:
    """One retriever's answer: labels best first, their raw scores, and its weight in fusion."""

    name: str
    labels: np.ndarray
    scores: np.ndarray
    weight: float = 1.0


def rrf(lists: Sequence[RankedList], *, k: int = 60) -> dict[int, float]:
    """Reciprocal-rank fusion: sum of ``weight / (k + rank)`` over the lists (rank from 1)."""
    out: dict[int, float] = {}
    for lst in lists:
        for rank, label in enumerate(lst.labels.tolist(), start=1):
            out[label] = out.get(label, 0.0) + lst.weight / (k + rank)
    return out


def zscore(lists: Sequence[RankedList]) -> dict[int, float]:
    """Calibrated fusion: each list's scores standardised (mean 0, sd 1), then weighted and summed.

    A label missing from a list gets that list's lowest standardised score, so appearing in only
    one list is never better than appearing low in both.
    """
    return _calibrated(lists, _standardise)


def minmax(lists: Sequence[RankedList]) -> dict[int, float]:
    """Calibrated fusion with each list scaled to 0..1 (missing labels get 0)."""
    return _calibrated(lists, _scale)


def _standardise(scores: np.ndarray) -> tuple[np.ndarray, float]:
    sd = float(scores.std())
    if sd <= 1e-9:  # one hit, or all alike: being in the list is the evidence
        return np.ones_like(scores), 0.0
    z = (scores - scores.mean()) / sd
    return z, float(z.min())


def _scale(scores: np.ndarray) -> tuple[np.ndarray, float]:
    lo, hi = float(scores.min()), float(scores.max())
    if hi - lo <= 1e-9:
        return np.ones_like(scores), 0.0
    return (scores - lo) / (hi - lo), 0.0


def _calibrated(lists: Sequence[RankedList], norm) -> dict[int, float]:
    """``norm`` gives a list's normalised scores and the score of a label missing from it.

    A list whose scores are all alike (one hit, say: BM25 found the query's rare word in a
    single memory) cannot be standardised; its members then score one unit above the labels it
    lacks, instead of the nothing a zero spread would give them.
    """
    normed = []
    for lst in lists:
        if len(lst.labels) == 0:
            continue
        z, floor = norm(np.asarray(lst.scores, dtype=np.float64))
        normed.append((lst, dict(zip(lst.labels.tolist(), z.tolist(), strict=True)), floor))
    labels = {label for _, mapping, _ in normed for label in mapping}
    return {
        label: sum(lst.weight * mapping.get(label, floor) for lst, mapping, floor in normed)
        for label in labels
    }


FUSERS = {"rrf": rrf, "zscore": zscore, "minmax": minmax}
