"""The one percentile every benchmark script reports (p50, p95, p90...).

Linear interpolation between the two nearest ranks, numpy's default (``method="linear"``,
Hyndman and Fan's type 7): with the values sorted as ``x[0..n-1]``, the q-th percentile sits at
position ``q / 100 * (n - 1)`` and between two ranks is the straight line between them. So p50
is the ordinary median (the mean of the middle two for an even count), and a p95 over few
samples lies between two measured values rather than on one of them. One definition, so that a
p95 in one section of docs/benchmarks.md compares with a p95 in another; before 2026-11-26 some
scripts took a nearest rank instead (docs/benchmarks.md, "Current results", says which).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0 <= q <= 100) of ``values``, linearly interpolated.

    NaN for no values (a table cell says "nan" rather than the script failing after a long
    run); ValueError for q outside [0, 100].
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within [0, 100], got {q}")
    xs = np.asarray(list(values), dtype=float)
    if xs.size == 0:
        return float("nan")
    return float(np.percentile(xs, q))
