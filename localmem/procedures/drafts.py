"""Procedures before they are stored, and the model-free ways of writing them.

- abstraction: steps extracted from the thoughts (:mod:`localmem.procedures.extract`), specifics
  replaced by placeholders for the abstract and hybrid levels, the task type classified by cue
  words and similarity to the type descriptions, the trigger made from the session's title;
- reflection: the stated or traced cause of the failure becomes a caveat and the steps are
  kept; the worse success record demotes the procedure (see ``scoring``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from localmem.errors import InputError
from localmem.procedures import extract
from localmem.procedures.tasktypes import classify

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


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
