"""Fact extraction (the agent's long-term memory): durable facts worth remembering from a turn.

The seed stores each question-answer pair with a fixed salience; here the model extracts the
facts themselves, each a self-contained sentence (names instead of pronouns, dates made
absolute), with a salience in 0..1 that the long-term store filters on.
"""

from __future__ import annotations

from pydantic import Field

from localmem.conversation.facts import extract_facts
from localmem.llm.base import Message
from localmem.llm.schema import JSON_ONLY, Sentence, TaskInput, TaskOutput
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 1
MAX_FACTS = 5


class FactsInput(TaskInput):
    """Text to mine (a message, an exchange, a note) and when it was said."""

    text: str = Field(min_length=1)
    speaker: str | None = None
    time: str | None = None


class Fact(TaskOutput):
    """One fact and how much it matters."""

    fact: Sentence
    salience: float = Field(ge=0.0, le=1.0)


class Facts(TaskOutput):
    """Zero to five facts."""

    facts: list[Fact] = Field(default_factory=list, max_length=MAX_FACTS)


def build_prompt(inp: FactsInput) -> list[Message]:
    system = (
        "You pick out facts worth remembering long-term about a user and their world: "
        "preferences, plans, events, relationships, decisions, properties of things. "
        f"{JSON_ONLY}"
    )
    said = " ".join(
        p
        for p in (f"by {inp.speaker}" if inp.speaker else "", f"on {inp.time}" if inp.time else "")
        if p
    )
    user = (
        f"TEXT{' (said ' + said + ')' if said else ''}:\n{inp.text}\n\n"
        f"List up to {MAX_FACTS} facts. Each fact is one self-contained sentence: use names, "
        "not pronouns, and turn relative dates into dates when the text's date is known. "
        "salience: 1 for facts that will matter for a long time (identity, lasting "
        "preferences, major events), 0.5 for useful details, 0.2 for trivia. Small talk "
        "gives no facts: return an empty list."
    )
    return [Message("system", system), Message("user", user)]


def model_free(inp: FactsInput, ctx: TaskContext) -> Facts:
    """Declarative sentences made self-contained, salience by rules (no model)."""
    found = extract_facts(inp.text, speaker=inp.speaker, time=inp.time)
    return Facts(facts=[Fact(fact=f, salience=s) for f, s in found])


def example() -> FactsInput:
    return FactsInput(
        text="I finally adopted a dog last week, a beagle named Max. He hates the rain!",
        speaker="Melanie",
        time="12 June 2023",
    )


SPEC = TaskSpec(
    name="facts",
    version=VERSION,
    inputs=FactsInput,
    output=Facts,
    build_prompt=build_prompt,
    description="extract durable facts with a salience from a turn or note",
    model_free=model_free,
    max_tokens=400,
    example=example,
)
