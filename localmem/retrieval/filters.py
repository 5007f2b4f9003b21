"""The filter stage: scope, kind, level, time and metadata become a set of allowed labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from localmem.retrieval.options import SearchOptions
from localmem.store import records

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel


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
    )
