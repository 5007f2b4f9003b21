"""The filter stage: scope, kind, level, time and metadata become a set of allowed labels."""

from __future__ import annotations

from typing import Any

import numpy as np

from localmem.retrieval.options import SearchOptions
from localmem.store.records import to_db_time


def where_clause(options: SearchOptions) -> tuple[str, list[Any]]:
    """SQL conditions (over ``memories``) for the filters of a search, with their parameters."""
    where, params = ["NOT deleted", "embedding IS NOT NULL"], []
    for col in ("user_id", "agent_id", "session_id"):
        value = getattr(options, col)
        if value is not None:
            where.append(f"{col} = ?")
            params.append(value)
    for col, values in (("kind", options.kinds), ("level", options.levels)):
        if values is not None:
            where.append(f"{col} IN ({', '.join('?' for _ in values)})")
            params += list(values)
    if options.since is not None:
        where.append("coalesce(event_time, created_at) >= ?")
        params.append(to_db_time(options.since))
    if options.until is not None:
        where.append("coalesce(event_time, created_at) <= ?")
        params.append(to_db_time(options.until))
    for key, value in (options.metadata or {}).items():
        where.append(f"json_extract_string(metadata, '$.{key}') = ?")
        params.append(
            value
            if isinstance(value, str)
            else str(value).lower()
            if isinstance(value, bool)
            else str(value)
        )
    return " AND ".join(where), params


def allowed_labels(memory, options: SearchOptions) -> np.ndarray:
    """Labels of the live memories that pass every filter, sorted."""
    where, params = where_clause(options)
    tbl = memory.store.db.arrow(f"SELECT label FROM memories WHERE {where} ORDER BY label", params)
    return tbl.column(0).to_numpy().astype(np.int64)
