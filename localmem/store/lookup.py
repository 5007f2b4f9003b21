"""Labels looked up in a sorted array of labels, a binary search each: where each one lies and
whether it is there (a filter's allowed labels, a term's postings, a saved index's labels)."""

from __future__ import annotations

import numpy as np


def find_sorted(sorted_labels: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``labels``, its place in ``sorted_labels`` (the last place when it is past
    the end, where it cannot be) and whether it is there. The place is capped by
    ``np.minimum``, not ``clip``, whose range checks cost ~8 us a call, more than the search
    (a search makes several)."""
    labels = np.asarray(labels)
    if not len(sorted_labels):
        return np.zeros(len(labels), dtype=np.intp), np.zeros(len(labels), dtype=bool)
    at = np.searchsorted(sorted_labels, labels)
    np.minimum(at, len(sorted_labels) - 1, out=at)
    found: np.ndarray = sorted_labels[at] == labels
    return at, found


def members(sorted_labels: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Which of ``labels`` are in ``sorted_labels``."""
    return find_sorted(sorted_labels, labels)[1]
