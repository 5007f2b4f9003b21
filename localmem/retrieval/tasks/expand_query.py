"""Query expansion (mem0 improved): 2-3 rewrites of a query that reach more memories.

Each rewrite names its focus, as the seed lists them: time (when, dates, periods), entities
(who and what, with relationships), synonyms (other words for the same thing). The original
query is searched as well by the caller; rewrites must not repeat it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from localmem.llm.base import Message
from localmem.llm.schema import JSON_ONLY, LINE, TaskInput, TaskOutput
from localmem.llm.tasks import TaskSpec

VERSION = 1
FOCUSES = ("time", "entities", "synonyms")


class ExpandQueryInput(TaskInput):
    """The query and, for relative dates, the moment it is asked."""

    query: str = Field(min_length=1)
    now: str | None = Field(None, description="When the question is asked, e.g. 2023-05-08.")


class Rewrite(TaskOutput):
    """One alternative query."""

    focus: Literal["time", "entities", "synonyms"]
    query: str = Field(min_length=1, max_length=LINE)


class Expansion(TaskOutput):
    """Two or three rewrites."""

    rewrites: list[Rewrite] = Field(min_length=2, max_length=3)

    def queries(self, original: str) -> list[str]:
        """The rewrites' texts without blanks and without repeats of the original."""
        seen, out = {" ".join(original.lower().split())}, []
        for r in self.rewrites:
            key = " ".join(r.query.lower().split())
            if key and key not in seen:
                seen.add(key)
                out.append(r.query.strip())
        return out


def build_prompt(inp: ExpandQueryInput) -> list[Message]:
    system = (
        "You help a search engine over a personal memory find everything relevant to a "
        f"question by rewriting it. {JSON_ONLY}"
    )
    now = f"\nAsked on: {inp.now}" if inp.now else ""
    user = (
        f"QUESTION: {inp.query}{now}\n\n"
        "Write 2 or 3 search queries that would find memories answering it, each with a "
        "different focus:\n"
        "- time: ask about the date, period or order of events involved\n"
        "- entities: name the people, places and things involved and how they relate\n"
        "- synonyms: say the same thing with other words\n"
        "Keep each query short and do not repeat the question."
    )
    return [Message("system", system), Message("user", user)]


def example() -> ExpandQueryInput:
    return ExpandQueryInput(query="When did Sarah go to Hawaii?", now="2023-06-01")


SPEC = TaskSpec(
    name="expand_query",
    version=VERSION,
    inputs=ExpandQueryInput,
    output=Expansion,
    build_prompt=build_prompt,
    description="2-3 rewrites of a query: time, entities, synonyms",
    model_free=None,  # model-free: the retrieval issue (pseudo-relevance feedback)
    max_tokens=256,
    example=example,
)
