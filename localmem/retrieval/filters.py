"""The filter stage: scope, kind, level, time, metadata and validity become a set of allowed
labels.

Validity: a search answers for now unless ``as_of`` names a moment. Superseded
memories are *excluded* from a "now" search rather than ranked down: a ranked-down stale fact
still fills one of the k places and reads as true to whoever gets it; it stays in the store and
``as_of`` finds it for the time it was true.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from localmem.retrieval.options import SearchOptions
from localmem.store import records

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel


def needed(kernel: Kernel, options: SearchOptions) -> bool:
    """Whether a search must be narrowed: a filter, ``as_of``, or superseded memories."""
    return options.has_filters or any_superseded(kernel)


def any_superseded(kernel: Kernel) -> bool:
    """Whether the store holds a live superseded memory. Every search asks (a query of about
    half a millisecond); where this process is the only writer the answer is kept until its
    next unit of writing, the only way one can appear (not through ``kernel.state``: that
    waits for a unit of writing to end, and a search must not)."""
    return kernel.kept("any superseded", lambda: records.any_superseded(kernel.db))


def allowed_labels(kernel: Kernel, options: SearchOptions) -> np.ndarray:
    """Labels of the live memories that pass every filter of a search, sorted."""
    return records.filtered_labels(
        kernel.db,
        user_id=options.user_id,
        agent_id=options.agent_id,
        session_id=options.session_id,
        kinds=options.kinds,
        levels=options.levels,
        since=options.since,
        until=options.until,
        metadata=options.metadata,
        as_of=options.as_of,
        now=options.now,
    )
