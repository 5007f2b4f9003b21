"""Writing procedures: abstraction of a session and reflection after a failed use.

Both are model tasks (``procedure`` and ``reflection``, in :mod:`localmem.procedures.tasks`),
run by ``run_task``: through the engine when there is one (and ``procedures.implementation``
allows it), else by the model-free implementations of :mod:`localmem.procedures.drafts`.

An engine answer with fewer than two usable steps is rejected (:class:`SchemaError`) and nothing
is stored; model-free extraction that finds fewer than two raises :class:`InputError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localmem.errors import InputError, SchemaError
from localmem.procedures import extract
from localmem.procedures.drafts import (
    _WORDLIKE,
    MAX_CAVEATS,
    MAX_EXAMPLE_CHARS,
    MAX_TRIGGER_CHARS,
    MIN_STEPS,
    MODEL_FREE,
    Draft,
    Revision,
    _clip,
    clean_steps,
    concrete_example,
    guess_task_type,
    model_free_trigger,
)
from localmem.procedures.model import Procedure
from localmem.procedures.tasktypes import check_task_type

__all__ = [
    "MAX_CAVEATS",
    "MAX_EXAMPLE_CHARS",
    "MAX_TRIGGER_CHARS",
    "MIN_STEPS",
    "MODEL_FREE",
    "Draft",
    "Revision",
    "clean_steps",
    "draft_procedure",
    "revise_procedure",
]


# -- through the task framework (the engine, or the model-free implementations above) ----------


def draft_procedure(
    kernel: Any, task: str, thoughts: Sequence[str], *, level: str, max_steps: int
) -> Draft:
    """Abstract a session with the ``procedure`` task: the engine's, or model-free without one.

    Raises:
        SchemaError: the engine's answer has fewer than two usable steps (nothing is stored).
        InputError: model-free extraction found fewer than two steps.
    """
    from localmem.llm.tasks import run_task
    from localmem.procedures.tasks.procedure import SPEC

    result = run_task(
        SPEC,
        {"task": task, "thoughts": tuple(thoughts), "outcome": "success", "level": level},
        engine=kernel.engine,
        context=_context(kernel),
        implementation=kernel.config.procedures.implementation,
        max_tokens=kernel.config.procedures.max_tokens,
    )
    value = result.value
    by_model = result.served_by != MODEL_FREE
    steps = clean_steps(value.steps, max_steps=max_steps)
    if by_model and level != "concrete":  # the placeholders are a promise of the level
        steps = clean_steps([extract.abstract_text(s) for s in steps], max_steps=max_steps)
    if len(steps) < MIN_STEPS:
        raise SchemaError(
            f"the engine ({result.served_by}) answered with {len(steps)} usable step(s); "
            "a procedure needs at least 2, so nothing was stored"
        )
    trigger = " ".join(str(value.trigger).split())
    if not _WORDLIKE.search(trigger):
        trigger = model_free_trigger(task, thoughts, level=level)
    example = None
    if level == "hybrid":
        example = " ".join(str(value.example or "").split()) or concrete_example(
            task, [s.text for s in extract.extract_steps(thoughts, max_steps=max_steps)]
        )
    return Draft(
        task_type=_task_type(value.task_type, kernel.embedder, task, thoughts),
        trigger=_clip(trigger, MAX_TRIGGER_CHARS),
        steps=steps,
        level=level,
        example=_clip(example, MAX_EXAMPLE_CHARS) if example else None,
        served_by=result.served_by,
        tokens=result.usage.prompt_tokens + result.usage.completion_tokens,
    )


def revise_procedure(
    kernel: Any, procedure: Procedure, task: str, trace: Sequence[str], note: str | None
) -> Revision:
    """Reflect on a failed use with the ``reflection`` task (the engine's, or model-free).

    Without a trace or a note there is nothing for a model to reflect on: model-free then.

    Raises:
        SchemaError: the engine's revised steps are unusable (nothing is stored).
    """
    from localmem.llm.tasks import MODEL_FREE as FORCE_MODEL_FREE
    from localmem.llm.tasks import run_task
    from localmem.procedures.tasks.reflection import SPEC

    result = run_task(
        SPEC,
        {
            "task": task or procedure.trigger,
            "trigger": procedure.trigger,
            "steps": procedure.steps,
            "failed_thoughts": tuple(trace),
            "failure": note,
            "level": procedure.level,
        },
        engine=kernel.engine,
        context=_context(kernel),
        implementation=kernel.config.procedures.implementation
        if (trace or note)
        else FORCE_MODEL_FREE,
        max_tokens=kernel.config.procedures.max_tokens,
    )
    value = result.value
    if result.served_by == MODEL_FREE:
        caveat = value.caveat or None
        return Revision(value.diagnosis, tuple(value.steps), caveat, MODEL_FREE)
    max_steps = kernel.config.procedures.max_steps
    steps = clean_steps(value.steps, max_steps=max_steps)
    if procedure.level != "concrete":
        steps = clean_steps([extract.abstract_text(s) for s in steps], max_steps=max_steps)
    if len(steps) < MIN_STEPS:
        raise SchemaError(
            f"the engine ({result.served_by}) revised the procedure into {len(steps)} usable "
            "step(s); the revision was rejected and the use was not recorded (retry, or record "
            "it with reflect=False)"
        )
    diagnosis = " ".join(str(value.diagnosis).split()) or "the engine gave no diagnosis"
    caveat = " ".join(str(value.caveat or "").split()) or None
    return Revision(
        diagnosis,
        steps,
        _clip(caveat, 200) if caveat else None,
        result.served_by,
        tokens=result.usage.prompt_tokens + result.usage.completion_tokens,
    )


def _context(kernel: Any) -> Any:
    from localmem.llm.tasks import TaskContext

    return TaskContext(embedder=kernel.embedder, config=kernel.config)


# -- shared --------------------------------------------------------------------------------------


def _task_type(value: Any, embedder: Any, task: str, thoughts: Sequence[str]) -> str:
    try:
        return check_task_type(value)
    except InputError:
        return guess_task_type(embedder, task, thoughts)
