"""Pointwise reranking (mem0 improved), batched: one call scores several memories.

The seed scores each memory in its own call; here the memories of a batch are numbered and the
model returns one relevance in 0..1 for each. Callers send batches of about 5-10 (more makes
small models lose track) and keep the retrieval score for any memory the model did not score.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field

from localmem.llm.base import Message
from localmem.llm.schema import (
    JSON_ONLY,
    MemoryLine,
    TaskInput,
    TaskOutput,
    derive,
    list_of,
    memory_lines,
    ref,
)
from localmem.llm.tasks import TaskSpec

VERSION = 1
MAX_BATCH = 20


class RerankInput(TaskInput):
    """A query and the candidate memories to score, in retrieval order."""

    query: str = Field(min_length=1)
    memories: tuple[MemoryLine, ...] = Field(min_length=1, max_length=MAX_BATCH)


class Score(TaskOutput):
    """The relevance of one numbered memory."""

    memory: int = Field(ge=1, le=MAX_BATCH)
    relevance: float = Field(ge=0.0, le=1.0)


class Scores(TaskOutput):
    """One score per memory shown."""

    scores: list[Score] = Field(max_length=MAX_BATCH)

    def by_memory(self, n: int) -> list[float | None]:
        """Relevance of memories 1..n in order (None where the model gave none)."""
        out: list[float | None] = [None] * n
        for s in self.scores:
            if 1 <= s.memory <= n and out[s.memory - 1] is None:
                out[s.memory - 1] = s.relevance
        return out


@lru_cache(maxsize=MAX_BATCH + 1)
def scores_schema(n: int) -> type[Scores]:
    """The schema when ``n`` memories are shown: exactly ``n`` scores."""
    score = derive(Score, f"n{n}", memory=(ref(n), ...))
    return derive(Scores, f"n{n}", scores=(list_of(score), Field(min_length=n, max_length=n)))


def build_prompt(inp: RerankInput) -> list[Message]:
    system = f"You judge how useful each memory is for answering a question. {JSON_ONLY}"
    user = (
        f"QUESTION: {inp.query}\n\n"
        "MEMORIES:\n{memories}\n\n"
        "For every memory, in order, give its number and a relevance from 0 to 1: 1 when it "
        "answers the question or holds a needed fact, 0.5 when it is about the same people or "
        "events but does not answer, 0 when it is unrelated."
    )
    return [Message("system", system), Message("user", user, memories=memory_lines(inp.memories))]


def _schema(inp: RerankInput, shown: int) -> type[Scores]:
    return scores_schema(max(shown, 1))


def example() -> RerankInput:
    return RerankInput(
        query="When did Caroline go to the LGBTQ support group?",
        memories=(
            MemoryLine(
                text="Caroline: I went to a LGBTQ support group yesterday.", time="8 May 2023"
            ),
            MemoryLine(
                text="Melanie: I painted a sunrise last year.",
                time="8 May 2023",
            ),
            MemoryLine(
                text="Caroline: The support group made me feel accepted.", time="25 May 2023"
            ),
        ),
    )


SPEC = TaskSpec(
    name="rerank",
    version=VERSION,
    inputs=RerankInput,
    output=Scores,
    build_prompt=build_prompt,
    description="score 0-1 relevance of numbered memories to a query, batched",
    schema_for=_schema,
    model_free=None,  # model-free: the retrieval issue (fused-evidence reranking)
    max_tokens=400,
    example=example,
)
