"""The task pairs of the Mem^p experiment and their success rules.

A pair (``localmem/eval/data/memp/*.json``) has a task A with a reference session (thoughts
written by hand that solve it: the source of the procedure, so the procedure's quality does not
depend on the model under test), a task B to solve, and a success rule for B: every listed
concept must appear in the final answer, a concept being present when any of its regular
expressions matches (case-insensitive). Pairs whose A and B types differ test cross-type
transfer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from localmem.errors import InputError

DATA_PACKAGE = "lab"
DATA_DIR = "data/memp"


@dataclass(frozen=True)
class Concept:
    """One thing a successful answer must contain."""

    name: str
    patterns: tuple[str, ...]

    def found_in(self, text: str) -> bool:
        """Whether any pattern matches ``text``."""
        return any(re.search(p, text, re.IGNORECASE) for p in self.patterns)


@dataclass(frozen=True)
class SuccessRule:
    """All concepts must be present in the final answer."""

    description: str
    concepts: tuple[Concept, ...]

    def check(self, answer: str) -> tuple[bool, list[str]]:
        """(success, the names of the concepts missing from ``answer``)."""
        missing = [c.name for c in self.concepts if not c.found_in(answer or "")]
        return not missing, missing

    def coverage(self, text: str) -> float:
        """Share of the concepts present in ``text`` (used on a procedure's text as a proxy)."""
        return sum(c.found_in(text) for c in self.concepts) / len(self.concepts)


@dataclass(frozen=True)
class Task:
    """A task: its type, title, the facts an agent gets, and (task A) a reference session."""

    type: str
    title: str
    context: str
    thoughts: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskPair:
    """Task A (solved, abstracted into a procedure) and the similar task B."""

    id: str
    origin: str
    a: Task
    b: Task
    success: SuccessRule

    @property
    def cross_type(self) -> bool:
        """Whether A and B are of different types (the transfer variation)."""
        return self.a.type != self.b.type


def parse_pair(data: dict[str, Any], *, source: str = "pair") -> TaskPair:
    """A pair from its JSON form (see the files in ``localmem/eval/data/memp``).

    Raises:
        InputError: a field is missing or malformed, or a pattern is not a valid regex.
    """
    try:
        rule = data["success"]
        concepts = tuple(
            Concept(str(c["concept"]), tuple(str(p) for p in c["any"])) for c in rule["all_of"]
        )
        for concept in concepts:
            if not concept.patterns:
                raise InputError(f"{source}: concept {concept.name!r} has no patterns")
            for p in concept.patterns:
                re.compile(p)
        a, b = data["task_a"], data["task_b"]
        pair = TaskPair(
            id=str(data["id"]),
            origin=str(data.get("origin", "")),
            a=Task(a["type"], a["title"], a.get("context", ""), tuple(a["thoughts"])),
            b=Task(b["type"], b["title"], b.get("context", "")),
            success=SuccessRule(str(rule.get("description", "")), concepts),
        )
    except (KeyError, TypeError) as exc:
        raise InputError(f"{source}: missing or malformed field {exc}") from None
    except re.error as exc:
        raise InputError(f"{source}: bad pattern: {exc}") from None
    if not pair.a.thoughts or not pair.success.concepts:
        raise InputError(f"{source}: task A needs thoughts and the rule needs concepts")
    return pair


def load_pairs(names: list[str] | None = None) -> list[TaskPair]:
    """The shipped pairs, in file order; ``names`` picks some by id.

    Raises:
        InputError: an unknown id (the known ones are listed).
    """
    folder = resources.files(DATA_PACKAGE).joinpath(DATA_DIR)
    pairs = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            data = json.loads(entry.read_text(encoding="utf-8"))
            pairs.append(parse_pair(data, source=entry.name))
    ids = [p.id for p in pairs]
    if len(ids) != len(set(ids)):
        raise InputError(f"two task pairs share an id: {sorted(ids)}")
    if not names:
        return pairs
    unknown = [n for n in names if n not in ids]
    if unknown:
        raise InputError(f"unknown task pair(s) {', '.join(unknown)}; known: {', '.join(ids)}")
    return [p for p in pairs if p.id in names]
