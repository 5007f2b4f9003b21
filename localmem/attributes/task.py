"""Attribute mining (MemInsight): entities, intent, topic and a priority ranking.

Changes from the seed's prompt: the label sets come from the config (and the grammar allows
only those labels), each label is shown with its description (what "analysis" or "reflection"
means is not obvious), entities must be short noun phrases taken from the text, a query is
described by what it looks for, and ``priority`` ranks the values themselves, most useful for
retrieval first.

The model-free implementation (:func:`model_free`, below) is the key-phrase + zero-shot miner
of :mod:`localmem.attributes.mining`, kept per embedder and label set so its caches survive.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field

from localmem.attributes.labels import LABEL_SETS, SOFTWARE, label_set_for
from localmem.attributes.modelfree import ModelFreeMiner
from localmem.llm.base import Message
from localmem.llm.schema import (
    JSON_ONLY,
    SHORT,
    Phrase,
    TaskInput,
    TaskOutput,
    derive,
)
from localmem.llm.tasks import TaskSpec
from localmem.text import content_hash

VERSION = 2


class AttributesInput(TaskInput):
    """A memory (or a query) and the label sets to choose from (default: the seed's)."""

    text: str = Field(min_length=1)
    is_query: bool = False
    intents: tuple[str, ...] = Field(SOFTWARE.names("intent"), min_length=1)
    topics: tuple[str, ...] = Field(SOFTWARE.names("topic"), min_length=1)
    descriptions: dict[str, str] = Field(
        default_factory=dict,
        description="label -> what it means; built-in labels have theirs already",
    )

    def describe(self, label: str) -> str:
        """A label with its description, as the prompt lists it."""
        text = self.descriptions.get(label) or _BUILTIN_DESCRIPTIONS.get(label)
        return f"{label} ({text})" if text and text != label else label


_BUILTIN_DESCRIPTIONS: dict[str, str] = {}
for _set in (SOFTWARE, *LABEL_SETS.values()):  # the seed's set wins a shared name ("planning")
    for _label in (*_set.intents, *_set.topics):
        _BUILTIN_DESCRIPTIONS.setdefault(_label.name, _label.description)


class Attributes(TaskOutput):
    """Retrieval attributes of one text."""

    entities: list[Phrase] = Field(min_length=1, max_length=5)
    intent: str = Field(max_length=SHORT)
    topic: str = Field(max_length=SHORT)
    priority: list[Phrase] = Field(min_length=1, max_length=5)


@lru_cache(maxsize=64)
def attributes_schema(intents: tuple[str, ...], topics: tuple[str, ...]) -> type[Attributes]:
    """The output schema for these label sets (intent and topic limited to them)."""
    return derive(
        Attributes,
        content_hash("|".join(intents) + "||" + "|".join(topics))[:8],
        intent=(Literal[intents], ...),
        topic=(Literal[topics], ...),
    )


def build_prompt(inp: AttributesInput) -> list[Message]:
    what = "search query" if inp.is_query else "note"
    focus = (
        "Describe what the query is looking for, not the act of searching."
        if inp.is_query
        else "Describe what the note is about."
    )
    system = (
        f"You index notes for a memory system so that they can be found again. {focus} {JSON_ONLY}"
    )
    user = (
        f"Extract retrieval attributes from this {what}.\n"
        "- entities: 3 to 5 key concepts, tools, components, people or places it mentions, "
        "as short noun phrases in the text's own words (fewer if the text is short)\n"
        f"- intent: its main purpose, one of: {'; '.join(map(inp.describe, inp.intents))}\n"
        f"- topic: its main domain, one of: {'; '.join(map(inp.describe, inp.topics))}\n"
        "- priority: the entity, intent and topic values that matter most for finding it "
        "again, most important first\n\n"
        f"{what.upper()}:\n{inp.text}"
    )
    return [Message("system", system), Message("user", user)]


def _schema(inp: AttributesInput, _shown: int) -> type[Attributes]:
    return attributes_schema(tuple(inp.intents), tuple(inp.topics))


def example() -> AttributesInput:
    return AttributesInput(
        text="The rate limiter drops bursts because the Redis fixed-window counter resets "
        "every minute; a sliding window would smooth it out."
    )


# -- model-free: the key-phrase + zero-shot miner -------------------------------------------
_MINERS: dict[tuple[int, str, str], Any] = {}
_LOCK = threading.Lock()


def _miner(embedder, labels, config):
    key = (id(embedder), labels.key, repr(sorted(config.aliases.items())))
    with _LOCK:
        miner = _MINERS.get(key)
        if miner is None:
            miner = _MINERS[key] = ModelFreeMiner(embedder, labels, config)
    return miner


def model_free(inp, ctx):
    """The attributes of ``inp.text`` without a model (deterministic)."""
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
    if not values["entities"] or None in (values["intent"], values["topic"]):
        # a text with no content words, or an axis the miner abstained on: valid, though the
        # schema asks a model for at least one entity and a label on each axis
        return schema.model_construct(**values)
    return schema.model_validate(values)


SPEC = TaskSpec(
    name="attributes",
    version=VERSION,
    inputs=AttributesInput,
    output=Attributes,
    build_prompt=build_prompt,
    description="entities, intent, topic and priority of a memory or query (MemInsight)",
    schema_for=_schema,
    model_free=model_free,
    max_tokens=256,
    example=example,
)
