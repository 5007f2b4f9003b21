"""Attribute mining (MemInsight, seed 000): entities, intent, topic and a priority ranking.

Changes from the seed's prompt: the label sets come from the config (and the grammar allows
only those labels), entities must be short noun phrases taken from the text, a query is
described by what it looks for, and ``priority`` ranks the values themselves, most useful for
retrieval first.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field

from localmem.config import AttributeConfig
from localmem.llm.base import Message
from localmem.llm.prompts._shared import (
    JSON_ONLY,
    SHORT,
    Phrase,
    TaskInput,
    TaskOutput,
    derive,
)
from localmem.llm.tasks import TaskSpec
from localmem.text import content_hash

VERSION = 1
_DEFAULTS = AttributeConfig()


class AttributesInput(TaskInput):
    """A memory (or a query) and the label sets to choose from."""

    text: str = Field(min_length=1)
    is_query: bool = False
    intents: tuple[str, ...] = Field(_DEFAULTS.intents, min_length=1)
    topics: tuple[str, ...] = Field(_DEFAULTS.topics, min_length=1)


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
        f"- intent: its main purpose, one of: {', '.join(inp.intents)}\n"
        f"- topic: its main domain, one of: {', '.join(inp.topics)}\n"
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


SPEC = TaskSpec(
    name="attributes",
    version=VERSION,
    inputs=AttributesInput,
    output=Attributes,
    build_prompt=build_prompt,
    description="entities, intent, topic and priority of a memory or query (MemInsight)",
    schema_for=_schema,
    model_free=None,  # model-free: the attributes issue (key phrases + zero-shot labels)
    max_tokens=256,
    example=example,
)
