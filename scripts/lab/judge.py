"""LLM judge (LoCoMo / mem0 evaluations): is a generated answer CORRECT or WRONG?

As in those evaluations the grading is generous about form: the same fact in other words, a
date in another format, or a longer answer that contains the reference all count as correct;
a different fact, a wrong date or "not in memory" for an answerable question count as wrong.
The short reasoning comes first so the label follows from it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lab.judge_overlap import judge_by_overlap
from localmem.llm.base import Message
from localmem.llm.schema import JSON_ONLY, LINE, TaskInput, TaskOutput
from localmem.llm.tasks import TaskContext, TaskSpec
from localmem.mechanisms import register_tasks

VERSION = 1


class JudgeInput(TaskInput):
    """A question, its reference (gold) answer and the answer to grade."""

    question: str = Field(min_length=1)
    reference: str = Field(min_length=1)
    answer: str


class Judgement(TaskOutput):
    """The verdict."""

    reasoning: str = Field("", max_length=2 * LINE)
    label: Literal["CORRECT", "WRONG"]


def build_prompt(inp: JudgeInput) -> list[Message]:
    system = f"You grade answers to questions about past conversations. {JSON_ONLY}"
    user = (
        f"QUESTION: {inp.question}\n"
        f"GOLD ANSWER: {inp.reference}\n"
        f"GENERATED ANSWER: {inp.answer or '(empty)'}\n\n"
        "Grade the generated answer against the gold answer. Be generous about form: if it "
        "states the same fact, even in other words or with more detail, it is CORRECT. For "
        'time questions, the same date or period in another format is CORRECT ("7 May 2023" '
        'and "May 7th, 2023"); a different date is WRONG. An answer about something else, '
        "or one that says the information is missing when the gold answer gives it, is WRONG.\n"
        "Write one sentence of reasoning, then the label CORRECT or WRONG."
    )
    return [Message("system", system), Message("user", user)]


def model_free(inp: JudgeInput, ctx: TaskContext) -> Judgement:
    """Token-overlap grading (see :mod:`lab.judge_overlap`)."""
    verdict = judge_by_overlap(inp.answer, inp.reference)
    return Judgement(reasoning=verdict.reasoning[: 2 * LINE], label=verdict.label)


def example() -> JudgeInput:
    return JudgeInput(
        question="When did Caroline go to the LGBTQ support group?",
        reference="7 May 2023",
        answer="Caroline went to the support group on May 7, 2023.",
    )


SPEC = TaskSpec(
    name="judge",
    version=VERSION,
    inputs=JudgeInput,
    output=Judgement,
    build_prompt=build_prompt,
    description="grade an answer against the reference: CORRECT or WRONG (LoCoMo, mem0)",
    model_free=model_free,
    max_tokens=200,
    example=example,
)

register_tasks((SPEC,))  # by name too, so `localmem doctor` lists it with every other task
