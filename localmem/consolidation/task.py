"""Hierarchical consolidation (mem0 improved): episodic -> semantic -> meta.

From a batch of episodic memories (specific events with dates) the model writes semantic
facts (general, lasting knowledge) and meta patterns (preferences, habits, traits,
relationships, goals), each citing the numbered memories it generalises, so that the new
memories can be linked to their sources.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field

from localmem.llm.base import Message
from localmem.llm.schema import (
    JSON_ONLY,
    LINE,
    MemoryLine,
    Sentence,
    TaskInput,
    TaskOutput,
    derive,
    list_of,
    memory_lines,
    ref,
)
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 2
MAX_MEMORIES = 40
#: a fact may cite every member of a cluster (localmem.consolidation keeps clusters this small)
MAX_SOURCES = 8


class ConsolidateInput(TaskInput):
    """Episodic memories to consolidate, and what is already known (to avoid repeats)."""

    memories: tuple[MemoryLine, ...] = Field(min_length=1, max_length=MAX_MEMORIES)
    known: tuple[str, ...] = ()
    subject: str | None = Field(None, description="Whom the memories are about, if one person.")


class SemanticFact(TaskOutput):
    """General knowledge distilled from several events."""

    fact: Sentence
    sources: list[int] = Field(min_length=1, max_length=MAX_SOURCES)


class MetaPattern(TaskOutput):
    """A preference, habit, trait, relationship or goal seen across memories."""

    kind: Literal["preference", "habit", "trait", "relationship", "goal"]
    pattern: Sentence
    sources: list[int] = Field(min_length=1, max_length=MAX_SOURCES)


class Consolidation(TaskOutput):
    """Semantic facts and meta patterns."""

    facts: list[SemanticFact] = Field(default_factory=list, max_length=8)
    patterns: list[MetaPattern] = Field(default_factory=list, max_length=4)


@lru_cache(maxsize=MAX_MEMORIES + 1)
def consolidation_schema(n: int) -> type[Consolidation]:
    """The schema when ``n`` memories are shown (sources 1..n)."""
    sources = (list_of(ref(n)), Field(min_length=1, max_length=min(n, MAX_SOURCES)))
    fact = derive(SemanticFact, f"n{n}", sources=sources)
    pattern = derive(MetaPattern, f"n{n}", sources=sources)
    return derive(
        Consolidation,
        f"n{n}",
        facts=(list_of(fact), Field(default_factory=list, max_length=8)),
        patterns=(list_of(pattern), Field(default_factory=list, max_length=4)),
    )


def build_prompt(inp: ConsolidateInput) -> list[Message]:
    system = (
        f"You consolidate a memory: from specific events you distil lasting knowledge. {JSON_ONLY}"
    )
    about = f" about {inp.subject}" if inp.subject else ""
    known = ""
    if inp.known:
        known = "\nALREADY KNOWN (do not repeat):\n" + "\n".join(f"- {k}" for k in inp.known)
    user = (
        f"EPISODIC MEMORIES{about}, with dates:\n{{memories}}\n{known}\n\n"
        "facts: up to 8 general facts these events establish (who someone is, what they do, "
        "own, know or plan), each one sentence without dates unless the date is the point, "
        "with the numbers of the memories it comes from.\n"
        "patterns: up to 4 preferences, habits, traits, relationships or goals that show in "
        "more than one memory, each with its kind and the numbers of its memories.\n"
        "Only what the memories support; fewer is better than invented."
    )
    return [Message("system", system), Message("user", user, memories=memory_lines(inp.memories))]


def model_free(inp: ConsolidateInput, ctx: TaskContext) -> Consolidation:
    """Extraction (see :mod:`localmem.consolidation.extract`): one fact of the cluster's most
    central statements, citing every member; patterns are found across facts, not here."""
    from localmem.consolidation.extract import extract_fact

    texts = [m.text for m in inp.memories]
    found = extract_fact(texts, subject=inp.subject, limit=LINE)
    if found is None:
        return Consolidation()
    cited = list(range(1, min(len(texts), MAX_SOURCES) + 1))
    return Consolidation(facts=[SemanticFact(fact=found.text, sources=cited)])


def _schema(inp: ConsolidateInput, shown: int) -> type[Consolidation]:
    return consolidation_schema(max(shown, 1))


def example() -> ConsolidateInput:
    return ConsolidateInput(
        memories=(
            MemoryLine(
                text="Melanie ran a charity 5k for a children's hospital.", time="2 May 2023"
            ),
            MemoryLine(
                text="Melanie signed up for a half marathon in the autumn.", time="20 May 2023"
            ),
            MemoryLine(
                text="Melanie: running clears my head after work.",
                time="3 June 2023",
            ),
        ),
        subject="Melanie",
    )


SPEC = TaskSpec(
    name="consolidate",
    version=VERSION,
    inputs=ConsolidateInput,
    output=Consolidation,
    build_prompt=build_prompt,
    description="episodic memories -> semantic facts and meta patterns",
    schema_for=_schema,
    model_free=model_free,
    max_tokens=900,
    example=example,
)
