"""Model-free attribute mining for the ``attributes`` task: key phrases + zero-shot labels.

The work is done by :class:`localmem.attributes.mining.ModelFreeMiner` (see there); this module
adapts it to the task interface: the labels of the input (described by the config's label set
when it knows them), the embedder of the :class:`~localmem.llm.tasks.TaskContext`, and the
task's output schema. Miners are kept per embedder and label set, so their caches survive
between calls.
"""

from __future__ import annotations

import threading
from typing import Any

_MINERS: dict[tuple[int, str, str], Any] = {}
_LOCK = threading.Lock()


def _miner(embedder, labels, config):
    from localmem.attributes.mining import ModelFreeMiner

    key = (id(embedder), labels.key, repr(sorted(config.aliases.items())))
    with _LOCK:
        miner = _MINERS.get(key)
        if miner is None:
            miner = _MINERS[key] = ModelFreeMiner(embedder, labels, config)
    return miner


def model_free(inp, ctx):
    """The attributes of ``inp.text`` without a model (deterministic)."""
    from localmem.attributes.labels import label_set_for
    from localmem.llm.prompts.attributes import attributes_schema

    embedder = ctx.embedder
    if embedder is None:
        from localmem.embed import make_embedder

        embedder = make_embedder(ctx.config.embedder)
    cfg = ctx.config.attributes
    labels = label_set_for(cfg).restricted(tuple(inp.intents), tuple(inp.topics))
    mined = _miner(embedder, labels, cfg).mine(inp.text, query=inp.is_query)
    schema = attributes_schema(tuple(inp.intents), tuple(inp.topics))
    values = {
        "entities": [a.value[:60] for a in mined.axis("entities")],
        "intent": mined.first("intent"),
        "topic": mined.first("topic"),
        "priority": [a.value[:60] for a in mined.priority][:5],
    }
    if not values["entities"]:  # a text with no content words: valid, though the schema
        return schema.model_construct(**values)  # asks a model for at least one entity
    return schema.model_validate(values)
