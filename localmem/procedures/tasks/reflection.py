"""Procedure reflection (Mem^p): revise a procedure after a task that used it failed.

Changes from the seed: the model first says what went wrong (kept as the revision's reason in
history), then gives the complete revised steps, keeping the steps that were not at fault.
Version 2: a one-sentence caveat for the next user of the procedure, the procedure's level as
an input, an attempt may come without thoughts (then only the reported failure is shown), and
the model-free implementation of ``localmem.procedures`` (record the failure, keep the steps).
"""

from __future__ import annotations

from pydantic import Field

from localmem.llm.base import Message
from localmem.llm.schema import JSON_ONLY, LINE, Sentence, TaskInput, TaskOutput
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 2


class ReflectionInput(TaskInput):
    """The procedure that was followed and the failed attempt."""

    task: str = Field(min_length=1, description="The task of the failed session.")
    trigger: str = ""
    steps: tuple[str, ...] = Field(min_length=1)
    failed_thoughts: tuple[str, ...] = ()
    failure: str | None = Field(None, description="What went wrong, if someone said.")
    level: str = Field("abstract", pattern="^(concrete|abstract|hybrid)$")


class Reflection(TaskOutput):
    """Why the procedure failed and its revised steps."""

    diagnosis: str = Field(min_length=1, max_length=2 * LINE)
    steps: list[Sentence] = Field(min_length=2, max_length=8)
    caveat: str = Field("", max_length=LINE)


def build_prompt(inp: ReflectionInput) -> list[Message]:
    system = (
        "You improve reusable procedures. A procedure was followed but the task failed; "
        f"you find what in the procedure was wrong or missing and fix it. {JSON_ONLY}"
    )
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(inp.steps, 1))
    failure = f"\nREPORTED FAILURE: {inp.failure}" if inp.failure else ""
    trigger = f"\nUSED WHEN: {inp.trigger}" if inp.trigger else ""
    user = (
        f"PROCEDURE{trigger}\n{steps}\n\n"
        f"FAILED TASK: {inp.task}{failure}\n"
        "THOUGHTS OF THE FAILED ATTEMPT, in order:\n{memories}\n\n"
        "Write:\n"
        "- diagnosis: 1-2 sentences on what the procedure got wrong or left out\n"
        "- steps: the complete revised procedure, 2 to 8 short imperative steps; keep the "
        "steps that were not at fault and stay general (no values specific to this attempt)\n"
        "- caveat: one sentence warning the next person who follows the procedure"
    )
    return [
        Message("system", system),
        Message("user", user, memories=inp.failed_thoughts, no_memories="(none recorded)"),
    ]


def example() -> ReflectionInput:
    return ReflectionInput(
        task="Debug: API returns 500 when the email field is missing",
        trigger="An API endpoint fails with a 500 error on a missing or null field.",
        steps=(
            "Reproduce the error with a minimal request.",
            "Find the failing line in the stack trace.",
            "Add a null check and return a 400.",
        ),
        failed_thoughts=(
            "Reproduced: 500 when email is absent.",
            "Added a null check in the serializer, still 500.",
            "The error came from the validation middleware, before the serializer.",
        ),
        failure="The fix was applied in the wrong layer.",
    )


def model_free(inp: ReflectionInput, ctx: TaskContext) -> Reflection:
    """Record the failure without a model (see :mod:`localmem.procedures.drafts`)."""
    from localmem.procedures.drafts import model_free_revision_of

    rev = model_free_revision_of(inp.steps, inp.failed_thoughts, inp.failure, level=inp.level)
    return Reflection(
        diagnosis=rev.diagnosis[: 2 * LINE], steps=list(rev.steps), caveat=rev.caveat or ""
    )


SPEC = TaskSpec(
    name="reflection",
    version=VERSION,
    inputs=ReflectionInput,
    output=Reflection,
    build_prompt=build_prompt,
    description="revise a procedure after a failed use (Mem^p reflection)",
    model_free=model_free,
    max_tokens=600,
    example=example,
)
