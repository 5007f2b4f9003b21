"""Plain RAG answer (the RAG agent's): answer from retrieved chunks, conversation and facts.

The prompt is assembled in the seed's order: the system instructions, the short-term
conversation (as chat turns), then one user message with the long-term facts, entities and
relations, the retrieved chunks with their sources, and the question. Chunks are the trimmable
part; the answer cites the chunks it used by number.

Version 2: entities are shown ("Known entities"), and the long-term memory moved from the
system message to after the conversation, where the seed injects it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field

from localmem.answers.extractive import extract_answer
from localmem.llm.base import Message
from localmem.llm.schema import (
    JSON_ONLY,
    PARAGRAPH,
    TaskInput,
    TaskOutput,
    derive,
    list_of,
    ref,
)
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 2
MAX_SOURCES = 3
NOT_FOUND = "The sources do not say."


class Chunk(TaskInput):
    """A retrieved passage and where it comes from."""

    text: str = Field(min_length=1)
    source: str | None = None


class Turn(TaskInput):
    """One turn of the conversation so far."""

    role: Literal["user", "assistant"]
    content: str


class RagInput(TaskInput):
    """The question and everything the agent knows for it."""

    question: str = Field(min_length=1)
    chunks: tuple[Chunk, ...] = ()
    history: tuple[Turn, ...] = ()
    facts: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()


class RagAnswer(TaskOutput):
    """The answer and the chunks it rests on."""

    answer: str = Field(min_length=1, max_length=PARAGRAPH)
    sources: list[int] = Field(default_factory=list, max_length=MAX_SOURCES)


@lru_cache(maxsize=128)
def rag_schema(n: int) -> type[RagAnswer]:
    """The schema when ``n`` chunks are shown."""
    if n == 0:
        return derive(
            RagAnswer, "n0", sources=(list[int], Field(default_factory=list, max_length=0))
        )
    return derive(
        RagAnswer,
        f"n{n}",
        sources=(list_of(ref(n)), Field(default_factory=list, max_length=min(n, MAX_SOURCES))),
    )


def _chunk_line(c: Chunk) -> str:
    text = " ".join(c.text.split())
    return f"(source: {c.source}) {text}" if c.source else text


def _known(inp: RagInput) -> str:
    """The long-term memory part of the prompt (empty when there is none)."""
    parts = []
    for title, lines in (
        ("Known facts (earlier questions and answers)", inp.facts),
        ("Known entities", inp.entities),
        ("Known relations", inp.relations),
    ):
        if lines:
            parts.append(f"{title}:\n" + "\n".join(f"- {line}" for line in lines))
    return "\n\n".join(parts) + "\n\n" if parts else ""


def build_prompt(inp: RagInput) -> list[Message]:
    system = (
        "You are a helpful assistant that answers questions from the sources you are given, "
        "using what you remember from earlier in the conversation and from past ones. Answer "
        f"in 1-3 sentences. {JSON_ONLY}"
    )
    user = (
        f"{_known(inp)}SOURCES:\n{{memories}}\n\n"
        f"QUESTION: {inp.question}\n\n"
        "answer: the answer, using the sources; if they do not contain it, say "
        f'"{NOT_FOUND}"\nsources: the numbers of the sources you used'
    )
    turns = [Message(t.role, t.content) for t in inp.history]
    chunks = tuple(_chunk_line(c) for c in inp.chunks)
    return [Message("system", system), *turns, Message("user", user, memories=chunks)]


def _schema(inp: RagInput, shown: int) -> type[RagAnswer]:
    return rag_schema(shown)


def model_free(inp: RagInput, ctx: TaskContext) -> RagAnswer:
    """The extractive answer over the chunks."""
    found = extract_answer(
        inp.question,
        [(c.text, None) for c in inp.chunks],
        embedder=ctx.embedder,
        not_found=NOT_FOUND,
    )
    return rag_schema(len(inp.chunks))(answer=found.answer, sources=list(found.evidence))


def example() -> RagInput:
    return RagInput(
        question="Why are the Blood Falls red?",
        chunks=(
            Chunk(
                text="Blood Falls is an outflow of an iron oxide-tainted plume of saltwater. "
                "The iron oxidises when it reaches the air, which gives the water its red colour.",
                source="Blood_Falls",
            ),
            Chunk(text="Lake Nyos is a crater lake in Cameroon.", source="Lake_Nyos"),
        ),
        history=(Turn(role="user", content="Tell me about Antarctica."),),
        facts=("The user is interested in unusual natural phenomena.",),
        entities=("Blood Falls (phenomenon)", "Antarctica (place)"),
        relations=("Blood Falls occurs_in Antarctica",),
    )


SPEC = TaskSpec(
    name="rag_answer",
    version=VERSION,
    inputs=RagInput,
    output=RagAnswer,
    build_prompt=build_prompt,
    description="answer from retrieved chunks, conversation and long-term facts",
    schema_for=_schema,
    model_free=model_free,
    max_tokens=400,
    example=example,
)
