"""Asking what a new memory changes about one neighbour: the model, or the model-free rules.

With an engine the question goes through the task framework (task ``evolution``, its prompt
and schema in ``localmem/llm/prompts/evolution.py``), bounded by what is left of the add's
token budget; without one, :mod:`localmem.evolution.modelfree` answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from localmem.evolution import modelfree
from localmem.evolution.modelfree import Decision, Rules
from localmem.types import MemoryItem

if TYPE_CHECKING:
    from localmem.config import EvolutionConfig

MODEL_FREE = "model-free"
#: tokens kept aside for the chat template around a prompt when estimating its size
TEMPLATE_SLACK = 48
#: the fewest output tokens worth asking for (a decision with a short context)
MIN_OUTPUT_TOKENS = 64


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


def rules_from(config: EvolutionConfig) -> Rules:
    """The model-free thresholds of a config section."""
    return Rules(
        min_similarity=config.min_similarity,
        link_similarity=config.link_similarity,
        max_context_chars=config.max_context_chars,
    )


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
    config: EvolutionConfig,
    engine: Any = None,
    tokens_left: int | None = None,
) -> Outcome | None:
    """Decide what to do with ``neighbour``; None when the token budget cannot pay for it."""
    if engine is None:
        decision = modelfree.decide(
            neighbour.context,
            similarity=similarity,
            shared=shared,
            adds=adds,
            rules=rules_from(config),
        )
        return Outcome(decision, MODEL_FREE)
    return _ask_engine(new, neighbour, similarity, shared, engine, tokens_left)


def _ask_engine(new, neighbour, similarity, shared, engine, tokens_left) -> Outcome | None:
    from localmem.llm.prompts.evolution import EvolutionInput
    from localmem.llm.tasks import get_task, run_task

    inputs = EvolutionInput(
        new=new.content,
        new_time=when(new),
        existing=neighbour.content,
        existing_context=neighbour.context,
        existing_time=when(neighbour),
        shared=tuple(shared),
        similarity=round(similarity, 3),
    )
    spec = get_task("evolution")
    max_tokens = spec.max_tokens or 256
    if tokens_left is not None:
        prompt = "\n".join(m.render() for m in spec.build_prompt(inputs))
        prompt_tokens = engine.count_tokens(prompt) + TEMPLATE_SLACK
        max_tokens = min(max_tokens, tokens_left - prompt_tokens)
        if max_tokens < MIN_OUTPUT_TOKENS:
            return None
    result = run_task("evolution", inputs, engine=engine, max_tokens=max_tokens)
    value = result.value
    update = bool(value.update and value.context.strip())
    context = " ".join(value.context.split()) if update else None
    link = bool(value.link or update)
    reason = " ".join(value.link_reason.split()) or ("context updated" if update else "")
    return Outcome(
        Decision(link, reason, update, context),
        result.served_by,
        result.usage.prompt_tokens,
        result.usage.completion_tokens,
    )
