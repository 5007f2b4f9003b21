"""Asking what a new memory changes about one neighbour, through the task framework.

Task ``evolution`` (prompt and schema in ``localmem/llm/prompts/evolution.py``): with an engine
the model answers, bounded by what is left of the add's token budget; without one the task's
model-free implementation (:mod:`localmem.evolution.modelfree`) does. Either way the answer
says which implementation served it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from localmem.evolution.modelfree import Decision
from localmem.types import MemoryItem

if TYPE_CHECKING:
    from localmem.config import Config
    from localmem.llm.base import Engine

TASK = "evolution"


@dataclass(frozen=True)
class Outcome:
    """A decision and what it cost."""

    decision: Decision
    served_by: str
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tokens(self) -> int:
        """Model tokens the decision cost."""
        return self.prompt_tokens + self.completion_tokens


def when(item: MemoryItem) -> str | None:
    """A memory's time as a prompt shows it (None when only the storage time is known)."""
    return item.event_time.strftime("%Y-%m-%d %H:%M") if item.event_time else None


def ask(
    new: MemoryItem,
    neighbour: MemoryItem,
    *,
    similarity: float,
    shared: list[str],
    adds: list[str],
    config: Config,
    engine: Engine | None = None,
    tokens_left: int | None = None,
) -> Outcome | None:
    """Decide what to do with ``neighbour``; None when the token budget cannot pay for it.

    With an engine, the neighbour is asked only when the prompt plus the most the model may
    write (``max_output_tokens``) fit in ``tokens_left``, so an answer is never cut short by the
    budget (a retry after invalid output may still spend one call more).
    """
    from localmem.evolution.task import SPEC, EvolutionInput
    from localmem.llm.tasks import TaskContext, run_task

    inputs = EvolutionInput(
        new=new.content,
        new_time=when(new),
        existing=neighbour.content,
        existing_context=neighbour.context,
        existing_time=when(neighbour),
        shared=tuple(shared),
        adds=tuple(adds),
        similarity=max(-1.0, min(1.0, round(similarity, 4))),
    )
    max_tokens = config.evolution.max_output_tokens
    if engine is not None and tokens_left is not None:
        prompt_tokens = engine.count_prompt_tokens(SPEC.build_prompt(inputs))
        if prompt_tokens + max_tokens > tokens_left:
            return None
    result = run_task(
        SPEC,
        inputs,
        engine=engine,
        context=TaskContext(config=config),
        max_tokens=max_tokens if engine is not None else None,
    )
    value = result.value
    update = bool(value.update and value.context.strip())
    link = bool(value.link or update)
    reason = " ".join(value.link_reason.split()) or ("context updated" if update else "")
    return Outcome(
        Decision(link, reason, update, value.context.strip() if update else None),
        result.served_by,
        result.usage.prompt_tokens,
        result.usage.completion_tokens,
    )
