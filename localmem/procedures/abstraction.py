"""Writing procedures: abstraction of a session and reflection after a failed use.

Both are tasks of the engine's framework (``procedure`` and ``reflection``, prompts in
``localmem/llm/prompts/``), run by ``run_task``: through the engine when there is one (and
``procedures.implementation`` allows it), else by the model-free implementations here:

- abstraction: steps extracted from the thoughts (:mod:`localmem.procedures.extract`), specifics
  replaced by placeholders for the abstract and hybrid levels, the task type classified by cue
  words and similarity to the type descriptions, the trigger made from the session's title;
- reflection: the stated or traced cause of the failure becomes a caveat and the steps are
  kept; the worse success record demotes the procedure (see ``scoring``).

An engine answer with fewer than two usable steps is rejected (:class:`SchemaError`) and nothing
is stored; model-free extraction that finds fewer than two raises :class:`InputError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localmem.errors import InputError, SchemaError
from localmem.procedures import extract
from localmem.procedures.model import Procedure
from localmem.procedures.tasktypes import check_task_type, classify

MODEL_FREE = "model-free"
MIN_STEPS = 2
MAX_TRIGGER_CHARS = 200
MAX_EXAMPLE_CHARS = 400
MAX_CAVEATS = 3
_WORDLIKE = re.compile(r"[A-Za-z]{2,}")


@dataclass(frozen=True)
class Draft:
    """A procedure before it is stored."""

    task_type: str
    trigger: str
    steps: tuple[str, ...]
    level: str
    example: str | None
    served_by: str
    tokens: int = 0


@dataclass(frozen=True)
class Revision:
    """A reflection on a failed use: what went wrong and the steps of the next version."""

    diagnosis: str
    steps: tuple[str, ...]
    caveat: str | None
    served_by: str
    tokens: int = 0


# -- model-free ----------------------------------------------------------------------------------


def model_free_draft(
    task: str, thoughts: Sequence[str], *, level: str, embedder: Any, max_steps: int = 8
) -> Draft:
    """Abstract a session without a model (see the module docstring).

    Raises:
        InputError: fewer than two steps could be extracted from the thoughts.
    """
    found = extract.extract_steps(thoughts, max_steps=max_steps)
    concrete = tuple(s.text for s in found)
    if level == "concrete":
        steps = concrete
    else:
        steps = clean_steps([extract.abstract_text(s) for s in concrete], max_steps=max_steps)
    if len(steps) < MIN_STEPS:
        raise InputError(
            f"only {len(steps)} step(s) could be found in the thoughts; a procedure needs at "
            f"least {MIN_STEPS} (thoughts that say what was done, e.g. 'Reproduce the error')"
        )
    example = concrete_example(task, concrete) if level == "hybrid" else None
    return Draft(
        task_type=guess_task_type(embedder, task, thoughts),
        trigger=model_free_trigger(task, thoughts, level=level),
        steps=steps,
        level=level,
        example=example,
        served_by=MODEL_FREE,
    )


def model_free_trigger(task: str, thoughts: Sequence[str], *, level: str) -> str:
    """When to use the procedure: the session's title (abstracted unless concrete); a title of
    fewer than four words is completed with the first sentence of the first thought."""
    text = " ".join(task.split())
    if len(text.split()) < 4 and thoughts:
        first = extract.sentences(thoughts[0])
        if first:
            text = f"{text}: {first[0]}"
    if level != "concrete":
        text = extract.natural(extract.abstract_text(text))
    return _clip(text, MAX_TRIGGER_CHARS)


def concrete_example(task: str, concrete_steps: Sequence[str]) -> str:
    """The hybrid level's example: the source task and its steps with their specifics."""
    body = "; ".join(s[:1].lower() + s[1:] for s in concrete_steps)
    return _clip(f"{' '.join(task.split())}: {body}", MAX_EXAMPLE_CHARS)


def guess_task_type(embedder: Any, task: str, thoughts: Sequence[str]) -> str:
    """The task type from the title, else from the title and first thoughts, else general."""
    for text in (task, " ".join([task, *thoughts[:3]])):
        guess = classify(embedder, text)
        if guess.name:
            return guess.name
    return "general"


def model_free_revision_of(
    steps: Sequence[str], trace: Sequence[str], note: str | None, *, level: str
) -> Revision:
    """Record a failure without a model: keep the steps, turn the failure into a caveat.

    The cause is the note if one was given, else what the trace says went wrong
    (:func:`extract.failure_cause`); with neither, the failure is only counted (the record
    then demotes the procedure in find).
    """
    cause = note or extract.failure_cause(trace)
    if not cause:
        diagnosis = "a use failed without a stated cause; the steps are kept, the record demotes it"
        return Revision(diagnosis, tuple(steps), None, MODEL_FREE)
    caveat = " ".join(cause.split())
    if level != "concrete":
        caveat = extract.natural(extract.abstract_text(caveat))
    return Revision(f"a use failed: {cause}", tuple(steps), _clip(caveat, 200), MODEL_FREE)


# -- through the task framework (the engine, or the model-free implementations above) ----------


def draft_procedure(
    memory: Any, task: str, thoughts: Sequence[str], *, level: str, max_steps: int
) -> Draft:
    """Abstract a session with the ``procedure`` task: the engine's, or model-free without one.

    Raises:
        SchemaError: the engine's answer has fewer than two usable steps (nothing is stored).
        InputError: model-free extraction found fewer than two steps.
    """
    from localmem.llm.tasks import run_task

    result = run_task(
        "procedure",
        {"task": task, "thoughts": tuple(thoughts), "outcome": "success", "level": level},
        engine=memory.engine,
        context=_context(memory),
        implementation=memory.config.procedures.implementation,
        max_tokens=memory.config.procedures.max_tokens,
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
        task_type=_task_type(value.task_type, memory.embedder, task, thoughts),
        trigger=_clip(trigger, MAX_TRIGGER_CHARS),
        steps=steps,
        level=level,
        example=_clip(example, MAX_EXAMPLE_CHARS) if example else None,
        served_by=result.served_by,
        tokens=result.usage.prompt_tokens + result.usage.completion_tokens,
    )


def revise_procedure(
    memory: Any, procedure: Procedure, task: str, trace: Sequence[str], note: str | None
) -> Revision:
    """Reflect on a failed use with the ``reflection`` task (the engine's, or model-free).

    Without a trace or a note there is nothing for a model to reflect on: model-free then.

    Raises:
        SchemaError: the engine's revised steps are unusable (nothing is stored).
    """
    from localmem.llm.tasks import MODEL_FREE as FORCE_MODEL_FREE
    from localmem.llm.tasks import run_task

    result = run_task(
        "reflection",
        {
            "task": task or procedure.trigger,
            "trigger": procedure.trigger,
            "steps": procedure.steps,
            "failed_thoughts": tuple(trace),
            "failure": note,
            "level": procedure.level,
        },
        engine=memory.engine,
        context=_context(memory),
        implementation=memory.config.procedures.implementation
        if (trace or note)
        else FORCE_MODEL_FREE,
        max_tokens=memory.config.procedures.max_tokens,
    )
    value = result.value
    if result.served_by == MODEL_FREE:
        caveat = value.caveat or None
        return Revision(value.diagnosis, tuple(value.steps), caveat, MODEL_FREE)
    max_steps = memory.config.procedures.max_steps
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


def _context(memory: Any) -> Any:
    from localmem.llm.tasks import TaskContext

    return TaskContext(embedder=memory.embedder, config=memory.config)


# -- shared --------------------------------------------------------------------------------------


def clean_steps(steps: Sequence[Any], *, max_steps: int) -> tuple[str, ...]:
    """Steps as single-line strings, blanks and exact repeats dropped, at most ``max_steps``."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in steps:
        if not isinstance(raw, str):
            continue
        text = _clip(" ".join(raw.split()).lstrip("-*• ").strip(), extract.MAX_STEP_CHARS)
        key = text.lower().rstrip(".")
        if key in seen or not _WORDLIKE.search(text):  # a step says something in words
            continue
        seen.add(key)
        out.append(text)
    return tuple(out[:max_steps])


def _task_type(value: Any, embedder: Any, task: str, thoughts: Sequence[str]) -> str:
    try:
        return check_task_type(value)
    except InputError:
        return guess_task_type(embedder, task, thoughts)


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
