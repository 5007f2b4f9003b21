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
