"""Procedure abstraction (Mem^p): turn a finished, successful session into a how-to.

Changes from the seed: the paper's best variant mixes abstract steps with a concrete example,
so the output has both; the trigger is phrased as the situation a future task would describe
(it is what retrieval matches against); steps are imperative. Version 2: the abstraction level
is an input (concrete steps keep the session's names and values; abstract and hybrid ones do
not), and the model-free implementation is the extractive one of ``localmem.procedures``.
"""

from __future__ import annotations

from pydantic import Field

from localmem.llm.base import Message
from localmem.llm.schema import (
    JSON_ONLY,
    LINE,
    SHORT,
    Sentence,
    TaskInput,
    TaskOutput,
)
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 2
LEVELS = ("concrete", "abstract", "hybrid")


class ProcedureInput(TaskInput):
    """A completed session: its task and its thoughts in order."""

    task: str = Field(min_length=1, description="The session's title or goal.")
    thoughts: tuple[str, ...] = Field(min_length=1)
    outcome: str = Field("success", description="How the session ended, in a few words.")
    level: str = Field(
        "hybrid",
        pattern="^(concrete|abstract|hybrid)$",
        description="concrete keeps the session's specifics; abstract and hybrid strip them.",
    )


class Procedure(TaskOutput):
    """A reusable procedure."""

    task_type: str = Field(min_length=1, max_length=SHORT)
    trigger: str = Field(min_length=1, max_length=LINE)
    steps: list[Sentence] = Field(min_length=2, max_length=8)
    example: str = Field("", max_length=2 * LINE)


_STEP_STYLE = {
    "concrete": "as they were done in this session, keeping its names, files and values",
    "abstract": "that would work for similar tasks, without names or values specific to this "
    "session",
    "hybrid": "that would work for similar tasks, without names or values specific to this "
    "session (the example keeps them)",
}


def build_prompt(inp: ProcedureInput) -> list[Message]:
    system = (
        "You turn a finished problem-solving session into a reusable procedure for similar "
        f"tasks in the future. {JSON_ONLY}"
    )
    user = (
        f"TASK: {inp.task}\nOUTCOME: {inp.outcome}\n\n"
        "SESSION THOUGHTS, in order:\n{memories}\n\n"
        "Write:\n"
        "- task_type: a general category (e.g. debugging, design, implementation, refactoring)\n"
        "- trigger: one sentence describing the situation in which this procedure applies, "
        "as someone facing a similar task would describe it\n"
        f"- steps: 2 to 8 short imperative steps, {_STEP_STYLE[inp.level]}; skip the dead "
        "ends\n"
        "- example: one or two sentences on how the steps played out in this session"
    )
    return [Message("system", system), Message("user", user, memories=inp.thoughts)]


def example() -> ProcedureInput:
    return ProcedureInput(
        task="Debug: API returns 500 when the user field is null",
        thoughts=(
            "Reproduce with a request that has user=null: 500 confirmed.",
            "The stack trace points at the serializer calling user.name.",
            "Add a null check and return 400 with a clear message.",
            "Write a regression test for the null user; it passes.",
        ),
    )


def model_free(inp: ProcedureInput, ctx: TaskContext) -> Procedure:
    """Extractive abstraction (see :mod:`localmem.procedures.drafts`)."""
    from localmem.procedures.drafts import model_free_draft

    max_steps = min(ctx.config.procedures.max_steps, 8)
    draft = model_free_draft(
        inp.task, inp.thoughts, level=inp.level, embedder=ctx.embedder, max_steps=max_steps
    )
    return Procedure(
        task_type=draft.task_type,
        trigger=draft.trigger,
        steps=list(draft.steps),
        example=draft.example or "",
    )


SPEC = TaskSpec(
    name="procedure",
    version=VERSION,
    inputs=ProcedureInput,
    output=Procedure,
    build_prompt=build_prompt,
    description="abstract a successful session into a reusable procedure (Mem^p)",
    model_free=model_free,
    max_tokens=600,
    example=example,
)
