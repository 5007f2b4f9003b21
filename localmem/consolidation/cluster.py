"""Clustering episodic memories by embedding similarity (pure, deterministic).

Average-linkage agglomerative clustering on cosine similarity: the two clusters whose members
are most similar on average merge, until no pair reaches ``threshold``. Constraints are
"cannot-link" pairs (different sessions, events too far apart in time) given as a boolean mask;
with average linkage a single forbidden pair keeps two clusters apart for good, because the
forbidden similarity is -inf and averages with -inf stay -inf. Ties are broken by index, so
the same input always gives the same clusters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

#: above this many memories a group is clustered in chunks of consecutive memories (the
#: similarity matrix is n x n; chunks keep a run's memory and time bounded)
MAX_CHUNK = 1200


@dataclass(frozen=True)
class ClusterParams:
    """How memories are grouped.

    Attributes:
        threshold: Least average cosine similarity for two clusters to merge.
        max_size: Largest cluster (a fact should stay about one thing).
        within_session: Never put memories of different sessions together.
        window_days: Never put memories further apart in event time than this (None: no bound).
    """

    threshold: float = 0.55
    max_size: int = 8
    within_session: bool = False
    window_days: float | None = None


def cannot_link(
    sessions: Sequence[str | None],
    times: Sequence[datetime | None],
    params: ClusterParams,
) -> np.ndarray | None:
    """The pairs that must stay apart, as an n x n boolean mask (None: no constraint)."""
    n = len(sessions)
    mask = np.zeros((n, n), dtype=bool)
    used = False
    if params.within_session:
        codes = {s: i for i, s in enumerate(dict.fromkeys(sessions))}
        sid = np.array([codes[s] for s in sessions])
        mask |= sid[:, None] != sid[None, :]
        used = True
    if params.window_days is not None:
        known = np.array([t is not None for t in times])
        secs = np.array([t.timestamp() if t is not None else 0.0 for t in times])
        apart = np.abs(secs[:, None] - secs[None, :]) > params.window_days * 86400.0
        mask |= apart & known[:, None] & known[None, :]  # unknown times constrain nothing
        used = True
    return mask if used else None


def agglomerate(
    vectors: np.ndarray, params: ClusterParams, *, forbid: np.ndarray | None = None
) -> list[list[int]]:
    """Clusters of row indices of ``vectors`` (unit-normalised here), biggest first.

    Every row ends in exactly one cluster (singletons included). Within a cluster the indices are
    ascending; clusters of equal size are ordered by their first index.
    """
    n = len(vectors)
    if n == 0:
        return []
    if n > MAX_CHUNK:
        out: list[list[int]] = []
        for start in range(0, n, MAX_CHUNK):
            part = slice(start, start + MAX_CHUNK)
            sub = None if forbid is None else forbid[part, part]
            for cluster in agglomerate(vectors[part], params, forbid=sub):
                out.append([start + i for i in cluster])
        return _ordered(out)
    unit = _normalise(vectors)
    sim = (unit @ unit.T).astype(np.float64)
    if forbid is not None:
        sim[forbid] = -np.inf
    np.fill_diagonal(sim, -np.inf)
    if params.max_size < 2:
        return [[i] for i in range(n)]
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    sizes = np.ones(n, dtype=np.int64)
    # each row's most similar partner, kept up to date so a step costs O(n), not O(n^2)
    best_idx = np.argmax(sim, axis=1)
    best_val = sim[np.arange(n), best_idx]
    while True:
        i = int(np.argmax(best_val))  # first maximum: deterministic
        if not np.isfinite(best_val[i]) or best_val[i] < params.threshold:
            break
        a, b = sorted((i, int(best_idx[i])))
        na, nb = sizes[a], sizes[b]
        merged = (na * sim[a] + nb * sim[b]) / (na + nb)  # Lance-Williams, average linkage
        sizes[a] += nb
        sizes[b] = 0
        merged[sizes + sizes[a] > params.max_size] = -np.inf  # the merge would grow too big
        merged[a] = merged[b] = -np.inf
        sim[a, :] = merged
        sim[:, a] = merged
        sim[b, :] = -np.inf
        sim[:, b] = -np.inf
        members[a] = sorted(members[a] + members.pop(b))
        best_val[b] = -np.inf
        stale = np.union1d(np.flatnonzero((best_idx == a) | (best_idx == b)), [a])
        stale = stale[(stale != b) & (sizes[stale] > 0)]
        best_idx[stale] = np.argmax(sim[stale], axis=1)
        best_val[stale] = sim[stale, best_idx[stale]]
        better = sim[:, a] > best_val
        best_idx[better] = a
        best_val[better] = sim[better, a]
    return _ordered(list(members.values()))


def centroid(vectors: np.ndarray) -> np.ndarray:
    """The unit mean direction of some vectors."""
    mean = _normalise(vectors).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def _normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


def _ordered(clusters: list[list[int]]) -> list[list[int]]:
    return sorted(clusters, key=lambda c: (-len(c), c[0]))
