"""The agent's memory: a short-term buffer per conversation and a long-term store of facts,
entities and relations per user, with the two model tasks that fill it.

- :mod:`~localmem.conversation.short_term`: :class:`ShortTermMemory`, the rolling buffer;
- :mod:`~localmem.conversation.long_term`: :class:`LongTermMemory` and its read policy;
- :mod:`~localmem.conversation.entity_rules`: the rule-based entity and relation extractor;
- :mod:`~localmem.conversation.facts`: model-free facts from a text;
- :mod:`~localmem.conversation.tasks`: the ``entities`` and ``facts`` model tasks;
- :mod:`~localmem.conversation.plugin`: what the mechanism adds to a store.

The RAG agent that reads and writes them is :mod:`localmem.agent`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from localmem.lazy import lazy_exports

if TYPE_CHECKING:
    from localmem.conversation.long_term import (
        Entity,
        Fact,
        LongTermMemory,
        Relation,
        entity_key,
        pick_facts,
        rank_entities,
        rank_relations,
    )
    from localmem.conversation.short_term import (
        ShortTermMemory,
        StmMessage,
        conversations,
        evictions,
        truncate_tokens,
    )

# imported on first use: the plugin (localmem.conversation.plugin) is imported with every
# store, and most processes never hold a conversation
_LAZY = {
    "Entity": "localmem.conversation.long_term",
    "Fact": "localmem.conversation.long_term",
    "LongTermMemory": "localmem.conversation.long_term",
    "Relation": "localmem.conversation.long_term",
    "entity_key": "localmem.conversation.long_term",
    "pick_facts": "localmem.conversation.long_term",
    "rank_entities": "localmem.conversation.long_term",
    "rank_relations": "localmem.conversation.long_term",
    "ShortTermMemory": "localmem.conversation.short_term",
    "StmMessage": "localmem.conversation.short_term",
    "conversations": "localmem.conversation.short_term",
    "evictions": "localmem.conversation.short_term",
    "truncate_tokens": "localmem.conversation.short_term",
}

__getattr__ = lazy_exports(__name__, _LAZY, globals())

__all__ = [
    "Entity",
    "Fact",
    "LongTermMemory",
    "Relation",
    "ShortTermMemory",
    "StmMessage",
    "conversations",
    "entity_key",
    "evictions",
    "pick_facts",
    "rank_entities",
    "rank_relations",
    "truncate_tokens",
]
