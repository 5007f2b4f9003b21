"""The ``reconcile`` task: what one new fact does to the memories it could duplicate or
contradict: ADD it, UPDATE one of them with it, INVALIDATE one (it is no longer true; the new
fact replaces it) or NONE (already known).

Existing memories are shown to the model as numbered lines and referred to by those small
numbers, never by id: a model cannot invent an id that exists, and a number outside the list is
refused by the schema. Whatever the decision, the new fact is never lost: INVALIDATE always
stores it as the successor (see :mod:`localmem.infer.plan`).

The model-free implementation (:func:`model_free`) decides by rules that say what they saw:
the same text (normalised) is NONE; a single-valued slot (where someone lives, works, who they
are with, a favourite, an age, a count: :mod:`localmem.infer.slots`) with a new value, or the
explicit negation of the same value, INVALIDATEs the memory holding the old one; a near
duplicate (cosine at least ``near``) is NONE when it adds no word, UPDATE when it only adds
words; everything else is ADD.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from pydantic import Field

from localmem.infer import conflict, slots
from localmem.infer.reading import reader_for
from localmem.llm.base import MEMORY_SLOT, Message
from localmem.llm.schema import JSON_ONLY, LINE, TaskInput, TaskOutput, derive, ref
from localmem.llm.tasks import TaskContext, TaskSpec

VERSION = 1
#: cosine at or above which two facts that fill no slot are the same fact said again
NEAR = 0.93

Event = Literal["ADD", "UPDATE", "INVALIDATE", "NONE"]


class Known(TaskInput):
    """One existing memory shown to the task (by its number in the list)."""

    text: str = Field(min_length=1)
    time: str | None = None
    #: cosine between it and the new fact, when the caller computed it (model-free rules only)
    similarity: float | None = None
    #: whether it is still true now (False: superseded, shown as what was true at the fact's
    #: time); the model-free decision ends a current memory first
    current: bool = True


class ReconcileInput(TaskInput):
    """A new fact, who said it, and the existing memories it could touch."""

    fact: str = Field(min_length=1)
    time: str | None = None
    speaker: str | None = None
    memories: tuple[Known, ...] = ()


class Decision(TaskOutput):
    """What the new fact does. ``target`` numbers a memory (UPDATE, INVALIDATE, NONE)."""

    event: Event
    target: int | None = Field(None, ge=1)
    text: str | None = Field(None, max_length=LINE)
    reason: str = Field("", max_length=LINE)


@lru_cache(maxsize=64)
def _schema(n: int) -> type[Decision]:
    return derive(Decision, f"n{n}", target=(ref(n) | None, Field(None)))


def schema_for(inp: ReconcileInput, shown: int) -> type[Decision]:
    """Targets are numbers of the memories the model saw."""
    return _schema(max(shown, 1))


def build_prompt(inp: ReconcileInput) -> list[Message]:
    system = (
        "You keep a memory of facts up to date. Given a NEW fact and the numbered EXISTING "
        "memories, decide one event:\n"
        "ADD: the new fact is new information (also when it only looks similar: liking tea "
        "and liking coffee are both true).\n"
        "UPDATE: the new fact is the same fact as memory [target] with more detail; text is "
        "the merged fact.\n"
        "INVALIDATE: the new fact makes memory [target] no longer true (a new home, job, "
        "partner, favourite, age or count, or an explicit 'no longer').\n"
        "NONE: memory [target] already says the same thing.\n"
        f"{JSON_ONLY}"
    )
    said = " ".join(
        p for p in (inp.speaker and f"by {inp.speaker}", inp.time and f"on {inp.time}") if p
    )
    user = (
        f"EXISTING:\n{MEMORY_SLOT}\n\nNEW{' (said ' + said + ')' if said else ''}: {inp.fact}\n\n"
        "Give event, target (the memory's number, or null for ADD), text (for UPDATE) and "
        "a short reason."
    )
    lines = tuple(f"({m.time}) {m.text}" if m.time else m.text for m in inp.memories)
    return [Message("system", system), Message("user", user, memories=lines)]


_WORD = re.compile(r"[a-z0-9']+")


def normal(text: str) -> str:
    """A text compared for "the same words": lower case, punctuation and spaces aside."""
    return " ".join(_WORD.findall(text.lower()))


def learned(inp: ReconcileInput, ctx: TaskContext) -> Decision | None:
    """The learned reading's decision (:mod:`localmem.infer.conflict`): INVALIDATE the memory
    the fact surely ends, or None (abstain) when none is sure or the store's embedder is not
    the one the reader was fitted on."""
    embedder = ctx.embedder
    if embedder is None or not inp.memories:
        return None
    reader = reader_for(getattr(embedder, "name", None), getattr(embedder, "dim", None))
    if reader is None:
        return None
    texts = [inp.fact, *(m.text for m in inp.memories)]
    vectors = embedder.embed_batch(texts)
    found = conflict.endings(
        reader,
        inp.fact,
        vectors[0],
        list(zip(texts[1:], vectors[1:], strict=True)),
        speaker=inp.speaker,
    )
    if not found:
        return None
    # a memory still true is the one to end; one already superseded keeps its successor
    best = min(found, key=lambda e: (not inp.memories[e.index].current, -e.confidence))
    return Decision(event="INVALIDATE", target=best.index + 1, reason=best.reason)


def model_free(inp: ReconcileInput, ctx: TaskContext) -> Decision:
    """Rules over slots, normalised text and similarity (see the module docstring)."""
    new = normal(inp.fact)
    mine = slots.read(inp.fact, speaker=inp.speaker)
    for i, known in enumerate(inp.memories, 1):
        if normal(known.text) == new:
            return Decision(event="NONE", target=i, reason="the same text is already stored")
    decided = learned(inp, ctx)
    if decided is not None:
        return decided
    if mine is not None:
        for i, known in enumerate(inp.memories, 1):
            old = slots.read(known.text, speaker=inp.speaker)
            if old is None or old.negated or (old.subject, old.slot) != (mine.subject, mine.slot):
                continue
            if mine.negated:
                if old.value == mine.value:
                    return Decision(
                        event="INVALIDATE", target=i, reason=f"explicitly no longer: {mine.slot}"
                    )
                continue
            if (old.value, old.detail) == (mine.value, mine.detail):
                return Decision(event="NONE", target=i, reason=f"same {mine.slot}: {old.value}")
            if not mine.slot.startswith("likes "):
                was = " ".join(p for p in (old.detail, old.value) if p)
                now = " ".join(p for p in (mine.detail, mine.value) if p)
                return Decision(
                    event="INVALIDATE",
                    target=i,
                    reason=f"new {mine.slot} for {mine.subject}: {was} -> {now}",
                )
    words = set(new.split())
    for i, known in enumerate(inp.memories, 1):
        if known.similarity is None or known.similarity < NEAR:
            continue
        theirs = set(normal(known.text).split())
        if words <= theirs:
            return Decision(
                event="NONE", target=i, reason=f"near duplicate ({known.similarity:.2f})"
            )
        if theirs < words and mine is None:
            return Decision(
                event="UPDATE",
                target=i,
                text=inp.fact,
                reason=f"same fact with more detail ({known.similarity:.2f})",
            )
    return Decision(event="ADD", reason="new information")


def example() -> ReconcileInput:
    return ReconcileInput(
        fact="Ann moved to Berlin.",
        time="2024-03-01",
        speaker="Ann",
        memories=(
            Known(text="Ann lives in Paris.", time="2022-05-01"),
            Known(text="Ann likes tea."),
        ),
    )


SPEC = TaskSpec(
    name="reconcile",
    version=VERSION,
    inputs=ReconcileInput,
    output=Decision,
    build_prompt=build_prompt,
    description="decide what a new fact does to existing memories: add, update, invalidate, none",
    schema_for=schema_for,
    model_free=model_free,
    max_tokens=160,
    example=example,
)
