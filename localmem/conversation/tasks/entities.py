"""Entity and relation extraction (the agent's long-term memory), replacing its regex rules.

Entities get a coarse type; relations are (source, relation, target) triples whose ends are
entity names from the same answer, with the relation as a short snake_case verb phrase
(``occurs_in``, ``works_at``, ``studied``) so that repeated extractions agree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from localmem.conversation.entity_rules import extract_graph
from localmem.llm.base import Message
from localmem.llm.schema import JSON_ONLY, SHORT, Phrase, TaskInput, TaskOutput
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 1
ENTITY_TYPES = (
    "person",
    "place",
    "organization",
    "event",
    "object",
    "concept",
    "phenomenon",
    "other",
)
EntityType = Literal[
    "person", "place", "organization", "event", "object", "concept", "phenomenon", "other"
]


class EntitiesInput(TaskInput):
    """Text to mine."""

    text: str = Field(min_length=1)


class Entity(TaskOutput):
    """A named thing."""

    name: Phrase
    type: EntityType


class Relation(TaskOutput):
    """A directed relation between two entities."""

    source: Phrase
    relation: str = Field(min_length=1, max_length=SHORT // 2)
    target: Phrase


class EntityGraph(TaskOutput):
    """Entities and the relations between them."""

    entities: list[Entity] = Field(default_factory=list, max_length=10)
    relations: list[Relation] = Field(default_factory=list, max_length=10)


def build_prompt(inp: EntitiesInput) -> list[Message]:
    system = f"You build a small knowledge graph from text. {JSON_ONLY}"
    user = (
        f"TEXT:\n{inp.text}\n\n"
        "entities: up to 10 people, places, organizations, events, objects, concepts or "
        f"natural phenomena named in the text, each with its type ({', '.join(ENTITY_TYPES)}); "
        "use the fullest name the text gives.\n"
        "relations: up to 10 facts linking two of those entities, as source, relation, "
        "target; the relation is a short snake_case verb phrase such as occurs_in, works_at, "
        "studied, part_of, likes. Only relations the text states."
    )
    return [Message("system", system), Message("user", user)]


def model_free(inp: EntitiesInput, ctx: TaskContext) -> EntityGraph:
    """The seed's rule-based extractor (phenomenon names from the conversation config)."""
    return EntityGraph.model_validate(
        extract_graph(inp.text, phenomena=tuple(ctx.config.conversation.phenomena))
    )


def example() -> EntitiesInput:
    return EntitiesInput(
        text="Blood Falls, in the McMurdo Dry Valleys of Antarctica, was first studied by "
        "the geologist Griffith Taylor in 1911."
    )


SPEC = TaskSpec(
    name="entities",
    version=VERSION,
    inputs=EntitiesInput,
    output=EntityGraph,
    build_prompt=build_prompt,
    description="entities with types and relations between them",
    model_free=model_free,
    max_tokens=512,
    example=example,
)
