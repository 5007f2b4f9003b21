"""Answer generation over memories (mem0 improved, the enhanced answer prompt).

Step by step: find the memories that bear on the question, work out dates (a memory's
"yesterday" is relative to the memory's own date), then answer briefly from that evidence
only. The reasoning comes first in the JSON so the model writes it before the answer; the
memories it used are cited by number.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field

from localmem.answers.extractive import extract_answer
from localmem.llm.base import Message
from localmem.llm.schema import (
    JSON_ONLY,
    LINE,
    PARAGRAPH,
    MemoryLine,
    TaskInput,
    TaskOutput,
    derive,
    list_of,
    memory_lines,
    ref,
)
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 1
MAX_EVIDENCE = 5
NOT_FOUND = "Not in memory."


class AnswerInput(TaskInput):
    """A question and the retrieved memories, most relevant first."""

    question: str = Field(min_length=1)
    memories: tuple[MemoryLine, ...] = ()
    now: str | None = Field(None, description="When the question is asked.")


class Answer(TaskOutput):
    """A short answer, the reasoning behind it, and the memories it rests on."""

    reasoning: str = Field("", max_length=PARAGRAPH)
    answer: str = Field(min_length=1, max_length=LINE)
    evidence: list[int] = Field(default_factory=list, max_length=MAX_EVIDENCE)


@lru_cache(maxsize=128)
def answer_schema(n: int) -> type[Answer]:
    """The schema when ``n`` memories are shown (evidence numbers 1..n)."""
    if n == 0:
        return derive(Answer, "n0", evidence=(list[int], Field(default_factory=list, max_length=0)))
    return derive(
        Answer,
        f"n{n}",
        evidence=(list_of(ref(n)), Field(default_factory=list, max_length=min(n, MAX_EVIDENCE))),
    )


def build_prompt(inp: AnswerInput) -> list[Message]:
    system = (
        "You answer questions about a person's past conversations and notes using only the "
        f"memories you are given. {JSON_ONLY}"
    )
    now = f"\nQuestion asked on: {inp.now}" if inp.now else ""
    user = (
        "MEMORIES (each with the date it was recorded):\n{memories}\n\n"
        f"QUESTION: {inp.question}{now}\n\n"
        "Work step by step in reasoning:\n"
        "1. Find the memories that bear on the question; several may be needed.\n"
        "2. For time questions, turn relative expressions into dates using the date of the "
        'memory they appear in ("yesterday" in a memory of 8 May 2023 is 7 May 2023; '
        '"last year" is 2022) and compute the answer.\n'
        "3. If memories disagree, prefer the most recent one.\n"
        "Then give answer: as short as possible (a few words, a name, a date), using only "
        f'facts from the memories. If they do not contain the answer, answer "{NOT_FOUND}".\n'
        "evidence: the numbers of the memories the answer rests on."
    )
    return [Message("system", system), Message("user", user, memories=memory_lines(inp.memories))]


def _schema(inp: AnswerInput, shown: int) -> type[Answer]:
    return answer_schema(shown)


def model_free(inp: AnswerInput, ctx: TaskContext) -> Answer:
    """The extractive answer (see :mod:`localmem.answers.extractive`)."""
    found = extract_answer(
        inp.question,
        [(m.text, m.time) for m in inp.memories],
        embedder=ctx.embedder,
        not_found=NOT_FOUND,
    )
    schema = answer_schema(len(inp.memories))
    return schema(
        reasoning=found.reasoning[:PARAGRAPH], answer=found.answer, evidence=list(found.evidence)
    )


def example() -> AnswerInput:
    return AnswerInput(
        question="When did Caroline go to the LGBTQ support group?",
        memories=(
            MemoryLine(
                text="Caroline: I went to a LGBTQ support group yesterday.", time="8 May 2023"
            ),
            MemoryLine(
                text="Melanie: I painted a sunrise last year.",
                time="8 May 2023",
            ),
        ),
        now="1 June 2023",
    )


SPEC = TaskSpec(
    name="answer",
    version=VERSION,
    inputs=AnswerInput,
    output=Answer,
    build_prompt=build_prompt,
    description="answer a question from memories, step by step, with dates",
    schema_for=_schema,
    model_free=model_free,
    max_tokens=512,
    example=example,
)
