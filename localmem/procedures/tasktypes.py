"""Task types of procedures and a model-free classifier for them.

A task's type is the one whose description its text is closest to (MiniLM cosine), plus a small
bonus when the text uses one of the type's cue words ("debug", "refactor", ...): the cue is how
people name their tasks, the description catches the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from localmem.errors import InputError


@dataclass(frozen=True)
class TaskType:
    """One kind of task: what it is about and the words that name it."""

    name: str
    description: str
    cues: tuple[str, ...]


def _registry(*types: TaskType) -> dict[str, TaskType]:
    out: dict[str, TaskType] = {}
    for t in types:
        if t.name in out:
            raise ValueError(f"task type {t.name!r} is defined twice")
        out[t.name] = t
    return out


#: name -> TaskType; procedures carry one of these names (or one a model chose)
TASK_TYPES: dict[str, TaskType] = _registry(
    TaskType(
        "debugging",
        "Debug a bug, an error, a crash, an exception or a failing request; find the root cause "
        "and fix it.",
        ("debug", "bug", "error", "exception", "crash", "fails", "failing", "broken", "500"),
    ),
    TaskType(
        "design",
        "Design a system, an API, a data model or an architecture; compare options and trade-offs "
        "before building.",
        ("design", "architecture", "architect", "trade-off", "tradeoff", "schema"),
    ),
    TaskType(
        "implementation",
        "Implement a new feature or write new code that adds functionality.",
        ("implement", "add support", "build a", "feature"),
    ),
    TaskType(
        "refactoring",
        "Refactor existing code: restructure it, extract functions, rename, remove duplication, "
        "without changing behaviour.",
        ("refactor", "restructure", "clean up", "extract", "duplication", "rename"),
    ),
    TaskType(
        "testing",
        "Write or improve tests, coverage, fixtures and test data.",
        ("test coverage", "write tests", "unit test", "flaky test"),
    ),
    TaskType(
        "analysis",
        "Analyse data, logs, metrics or performance and explain the findings.",
        ("analyse", "analyze", "investigate", "measure", "profile"),
    ),
    TaskType(
        "planning",
        "Plan work: break a goal into tasks, estimate and order them.",
        ("plan", "roadmap", "estimate", "milestone"),
    ),
    TaskType(
        "operations",
        "Deploy, configure, monitor or operate a service in production.",
        ("deploy", "rollout", "monitoring", "on-call", "incident"),
    ),
)

_TYPE_NAME = re.compile(r"^[a-z][a-z /-]*$")
CUE_BONUS = 0.15  # a cue word shifts the vote by about the gap between close types
MIN_MARGIN = 0.02  # below this gap between the two best types the type is "unknown"
MIN_SCORE = 0.2  # nor is a text that is not close to any type ("session 1")


@dataclass(frozen=True)
class TypeGuess:
    """The type a text was classified as, with the evidence."""

    name: str | None  # None: too close to call
    scores: dict[str, float]
    margin: float


def check_task_type(name: Any) -> str:
    """A task type name: a short label in words (a model may coin one), lower-cased."""
    if not isinstance(name, str) or not name.strip():
        raise InputError("task_type must be a non-empty string")
    name = " ".join(name.strip().lower().split())
    if len(name) > 60:
        raise InputError("task_type is longer than 60 characters")
    if not _TYPE_NAME.match(name):
        raise InputError(f"task_type {name!r} must be words (letters, spaces, - and /)")
    return name


def classify(embedder: Any, text: str) -> TypeGuess:
    """The task type of ``text`` by similarity to the type descriptions plus cue words (cue
    words alone when there is no embedder)."""
    names = list(TASK_TYPES)
    if embedder is None:  # cue words only
        sims = np.full(len(names), MIN_SCORE - CUE_BONUS, dtype=np.float32)
    else:
        vectors = _description_vectors(embedder)
        sims = vectors @ np.asarray(embedder.embed_query(text), dtype=np.float32)
    lowered = text.lower()
    scores = {
        name: float(sims[i]) + (CUE_BONUS if _has_cue(lowered, TASK_TYPES[name].cues) else 0.0)
        for i, name in enumerate(names)
    }
    ranked = sorted(scores.values(), reverse=True)
    margin = ranked[0] - ranked[1] if len(ranked) > 1 else ranked[0]
    best = max(scores, key=scores.__getitem__)
    known = margin >= MIN_MARGIN and scores[best] >= MIN_SCORE
    return TypeGuess(best if known else None, scores, margin)


def _has_cue(text: str, cues: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(c)}", text) for c in cues)


@lru_cache(maxsize=8)
def _description_vectors(embedder: Any) -> np.ndarray:
    """The descriptions' vectors, computed once per embedder."""
    texts = [t.description for t in TASK_TYPES.values()]
    return np.asarray(embedder.embed_batch(texts), dtype=np.float32)
