"""Memory evolution (A-Mem, seed 001): does a new memory change how older ones should be read?

The seed asks once per neighbour and parses "NO_UPDATE"; here one call judges every neighbour
(numbered), and each decision is explicit: link or not (with the reason, which becomes the
link's label), update or not (with the enriched context, 1-2 sentences, written to stand on
its own next to the original content, which is never changed).
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field

from localmem.llm.base import Message
from localmem.llm.prompts._shared import (
    JSON_ONLY,
    LINE,
    TaskInput,
    TaskOutput,
    derive,
    ref,
)
from localmem.llm.tasks import TaskSpec

VERSION = 1
MAX_NEIGHBOURS = 10


class Neighbour(TaskInput):
    """An existing memory related to the new one."""

    content: str = Field(min_length=1)
    context: str | None = None
    time: str | None = None


class EvolutionInput(TaskInput):
    """The new memory and its nearest existing ones (most similar first)."""

    new: str = Field(min_length=1)
    neighbours: tuple[Neighbour, ...] = Field(min_length=1, max_length=MAX_NEIGHBOURS)


class Decision(TaskOutput):
    """What to do with one existing memory."""

    memory: int = Field(ge=1, le=MAX_NEIGHBOURS)
    link: bool
    link_reason: str = Field("", max_length=LINE)
    update: bool
    context: str = Field("", max_length=2 * LINE)


class Evolution(TaskOutput):
    """One decision per numbered existing memory."""

    decisions: list[Decision] = Field(max_length=MAX_NEIGHBOURS)

    def for_memory(self, number: int) -> Decision | None:
        """The first decision about memory ``number`` (1-based), if the model gave one."""
        return next((d for d in self.decisions if d.memory == number), None)


@lru_cache(maxsize=MAX_NEIGHBOURS + 1)
def evolution_schema(n: int) -> type[Evolution]:
    """The schema when the prompt shows ``n`` neighbours: one decision for each."""
    decision = derive(Decision, f"n{n}", memory=(ref(n), ...))
    return derive(Evolution, f"n{n}", decisions=(list[decision], Field(min_length=n, max_length=n)))


def _neighbour_line(nb: Neighbour) -> str:
    when = f"({nb.time}) " if nb.time else ""
    context = nb.context or "none yet"
    return f"{when}{' '.join(nb.content.split())}\n    current context: {context}"


def build_prompt(inp: EvolutionInput) -> list[Message]:
    system = (
        "You maintain a memory of notes. When a new note arrives, you decide how it changes "
        f"the meaning of related older notes. Be conservative: most notes need no update. "
        f"{JSON_ONLY}"
    )
    user = (
        f"NEW NOTE:\n{inp.new}\n\n"
        "EXISTING NOTES:\n{memories}\n\n"
        "For every existing note, in order, give one decision:\n"
        "- memory: its number\n"
        "- link: true if the new note is about the same thing, continues it, answers it or "
        "contradicts it\n"
        "- link_reason: when linked, a short phrase saying how they relate; else empty\n"
        "- update: true only if the new note adds something a reader of the existing note "
        "should know (a cause, a fix, a correction, an outcome)\n"
        "- context: when updated, 1-2 sentences that describe the existing note in the light "
        "of the new one and keep what its current context says; else empty"
    )
    lines = tuple(_neighbour_line(nb) for nb in inp.neighbours)
    return [Message("system", system), Message("user", user, memories=lines)]


def _schema(inp: EvolutionInput, shown: int) -> type[Evolution]:
    return evolution_schema(max(shown, 1))


def example() -> EvolutionInput:
    return EvolutionInput(
        new="The rate limiter should use a sliding window, not fixed buckets.",
        neighbours=(
            Neighbour(content="Users see 429 errors in bursts right after each minute starts."),
            Neighbour(content="The limiter stores one Redis counter per client per minute."),
            Neighbour(content="We moved the CI runners to the new cluster.", context=None),
        ),
    )


SPEC = TaskSpec(
    name="evolution",
    version=VERSION,
    inputs=EvolutionInput,
    output=Evolution,
    build_prompt=build_prompt,
    description="link and re-contextualise older memories when a new one arrives (A-Mem)",
    schema_for=_schema,
    model_free=None,  # model-free: the evolution issue (linking + templated context)
    max_tokens=600,
    example=example,
)
