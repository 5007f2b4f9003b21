"""MemInsight (seed 000): mine structured attributes for memories and queries, and use them in
search.

- :mod:`~localmem.attributes.labels`: label sets (intents, topics) with descriptions;
- :mod:`~localmem.attributes.phrases`, :mod:`~localmem.attributes.normalise`: key-phrase
  candidates and entity normalisation (case, singular, aliases, stems);
- :mod:`~localmem.attributes.mining`: the model-free and the model-engine miners;
- :mod:`~localmem.attributes.store`: the ``attributes`` table and the SQL that matches a query;
- :mod:`~localmem.attributes.jobs`: the ``mine`` background job, bulk mining;
- :mod:`~localmem.attributes.stage`: the ``attributes`` stage of search (filter / boost).
"""

from __future__ import annotations

from localmem.attributes.labels import LABEL_SETS, Label, LabelSet
from localmem.attributes.mining import Attribute, Mined, miner_for

__all__ = ["LABEL_SETS", "Attribute", "Label", "LabelSet", "Mined", "miner_for"]
