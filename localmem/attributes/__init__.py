"""MemInsight: mine structured attributes for memories and queries, and use them in
search.

- :mod:`~localmem.attributes.labels`: label sets (intents, topics) with descriptions;
- :mod:`~localmem.attributes.phrases`, :mod:`~localmem.attributes.normalise`: key-phrase
  candidates and entity normalisation (case, singular, aliases, stems);
- :mod:`~localmem.attributes.mined`: what mining yields; :mod:`~localmem.attributes.modelfree`
  and :mod:`~localmem.attributes.mining`: the model-free and the model-engine miners;
- :mod:`~localmem.attributes.task`: the ``attributes`` model task (prompt, schema, model-free);
- :mod:`~localmem.attributes.rows`: the ``attributes`` table and the SQL that matches a query;
- :mod:`~localmem.attributes.jobs`: the ``mine`` background job, bulk mining;
- :mod:`~localmem.attributes.stage`: the ``attributes`` stage of search (filter / boost);
- :mod:`~localmem.attributes.plugin`: what the mechanism adds to a store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from localmem.lazy import lazy_exports

if TYPE_CHECKING:
    from localmem.attributes.jobs import mine_now, mine_pending, queue_mining
    from localmem.attributes.labels import LABEL_SETS, Label, LabelSet
    from localmem.attributes.mined import Attribute, Mined, StoredAttributes
    from localmem.attributes.mining import miner_for
    from localmem.store.kernel import HasKernel, Kernel

# imported on first use: a client of a server decodes StoredAttributes (.mined) and must not
# import the store (DuckDB, pyarrow) and the miners with this package
_LAZY = {
    "mine_now": "localmem.attributes.jobs",
    "mine_pending": "localmem.attributes.jobs",
    "queue_mining": "localmem.attributes.jobs",
    "LABEL_SETS": "localmem.attributes.labels",
    "Label": "localmem.attributes.labels",
    "LabelSet": "localmem.attributes.labels",
    "Attribute": "localmem.attributes.mined",
    "Mined": "localmem.attributes.mined",
    "StoredAttributes": "localmem.attributes.mined",
    "miner_for": "localmem.attributes.mining",
}

__getattr__ = lazy_exports(__name__, _LAZY, globals())


def stored(memory: Kernel | HasKernel, memory_ids: Sequence[str]) -> dict[str, StoredAttributes]:
    """The attributes mined for some memories (those never mined are left out)."""
    from localmem.attributes import rows
    from localmem.store.kernel import kernel_of

    return rows.read(kernel_of(memory).db, list(memory_ids))


def counts(memory: Kernel | HasKernel) -> dict[str, Any]:
    """How many live memories are mined, not mined, or stale; and by which miner."""
    from localmem.attributes import rows
    from localmem.store.kernel import kernel_of

    return rows.counts(kernel_of(memory).db)


__all__ = [
    "LABEL_SETS",
    "Attribute",
    "Label",
    "LabelSet",
    "Mined",
    "StoredAttributes",
    "counts",
    "mine_now",
    "mine_pending",
    "miner_for",
    "queue_mining",
    "stored",
]
