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
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    alive = np.ones(n, dtype=bool)
    while True:
        best = _best_pair(sim, alive, members, params.max_size)
        if best is None or sim[best] < params.threshold:
            break
        a, b = best
        na, nb = len(members[a]), len(members[b])
        merged = (na * sim[a] + nb * sim[b]) / (na + nb)  # Lance-Williams, average linkage
        merged[a] = -np.inf
        sim[a, :] = merged
        sim[:, a] = merged
        sim[b, :] = -np.inf
        sim[:, b] = -np.inf
        alive[b] = False
        members[a] = sorted(members[a] + members.pop(b))
    return _ordered(list(members.values()))


def _best_pair(
    sim: np.ndarray, alive: np.ndarray, members: dict[int, list[int]], max_size: int
) -> tuple[int, int] | None:
    """The most similar pair whose merge stays within ``max_size`` (lowest indices on ties)."""
    sizes = np.zeros(len(sim), dtype=np.int64)
    for i, m in members.items():
        sizes[i] = len(m)
    allowed = (sizes[:, None] + sizes[None, :] <= max_size) & alive[:, None] & alive[None, :]
    masked = np.where(allowed, sim, -np.inf)
    flat = int(np.argmax(masked))  # first maximum in row-major order: deterministic
    a, b = divmod(flat, len(sim))
    if not np.isfinite(masked[a, b]):
        return None
    return (min(a, b), max(a, b))


def centroid(vectors: np.ndarray) -> np.ndarray:
    """The unit mean direction of some vectors."""
    mean = _normalise(vectors).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else mean


def centrality(vectors: np.ndarray) -> np.ndarray:
    """Cosine of each vector to the group's centroid (1 = the most typical member)."""
    return _normalise(vectors) @ centroid(vectors)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


def _ordered(clusters: list[list[int]]) -> list[list[int]]:
    return sorted(clusters, key=lambda c: (-len(c), c[0]))
