"""The agent loop of the Mem^p experiment: a model reasons about a task one thought at a time.

Each step is one constrained JSON call: the next ``thought``, whether the agent is ``done``, and
once done its final ``answer``. The thoughts are stored as a session of the memory (so a failed
attempt can be handed to reflection). When the agent is not done after ``max_steps`` thoughts,
one more call asks for the final answer. With a procedure, its prompt block (``render``) is put
in the system message, as in the seed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, create_model

from localmem.errors import ModelError

if TYPE_CHECKING:
    from lab.memp_tasks import Task
    from localmem.memory import Memory

SYSTEM = (
    "You are a software engineer solving a task step by step. Reply with one JSON object: "
    '"thought" is your next reasoning step (a short paragraph that moves the task forward; '
    'do not repeat earlier thoughts), "done" is true once you can give the final answer, and '
    '"answer" stays empty until then; when done, "answer" is your final answer: the cause or '
    "the decision, and the concrete steps you would take. Finish as soon as your answer is "
    "complete."
)
USER = (
    "TASK: {title}\nFACTS: {context}\n\nYOUR THOUGHTS SO FAR:\n{{memories}}\n\n"
    "Write your next step."
)
FINAL = "You have used all your steps. Give your final answer now."


@dataclass(frozen=True)
class Bounds:
    """How long a thought and an answer may be (characters; the grammar enforces them)."""

    thought_chars: int = 400
    answer_chars: int = 1500


@dataclass
class AgentRun:
    """One attempt at a task."""

    session_id: str
    thoughts: list[str]
    answer: str
    finished: bool  # said done within max_steps
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    engine: str = ""
    error: str | None = None
    calls: int = 0
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """Thoughts to completion (the seed's "steps")."""
        return len(self.thoughts)

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens over every call."""
        return self.prompt_tokens + self.completion_tokens


@lru_cache(maxsize=16)
def step_schema(bounds: Bounds) -> type[BaseModel]:
    """The JSON schema of one step, with the string bounds the grammar needs."""
    return create_model(
        "AgentStep",
        thought=(str, Field(min_length=1, max_length=bounds.thought_chars)),
        done=(bool, ...),
        answer=(str, Field("", max_length=bounds.answer_chars)),
    )


@lru_cache(maxsize=16)
def final_schema(bounds: Bounds) -> type[BaseModel]:
    """The JSON schema of the forced final answer."""
    return create_model(
        "AgentAnswer", answer=(str, Field(min_length=1, max_length=bounds.answer_chars))
    )


def run_agent(
    memory: Memory,
    engine: Any,
    task: Task,
    *,
    procedure_block: str | None = None,
    max_steps: int = 8,
    max_tokens: int = 768,
    bounds: Bounds = Bounds(),
    user_id: str | None = None,
    label: str = "",
) -> AgentRun:
    """Let the engine solve ``task`` one thought at a time; the session is left open.

    A model error (invalid output twice, a failed call) ends the attempt with ``error`` set and
    no answer: it counts as a failure, as it would for an agent.
    """
    from localmem.llm.base import Message

    title = f"{task.title} [{label}]" if label else task.title
    session = memory.start_session(title, user_id=user_id, metadata={"experiment": "memp"})
    system = SYSTEM + (f"\n\n{procedure_block}" if procedure_block else "")
    user = USER.format(title=task.title, context=task.context or "(none)")
    run = AgentRun(session.id, [], "", False)
    started = time.perf_counter()
    schema = step_schema(bounds)
    try:
        while run.steps < max_steps:
            messages = [
                Message("system", system),
                Message("user", user, memories=tuple(run.thoughts), no_memories="(none yet)"),
            ]
            gen = engine.generate_json(messages, schema, max_tokens=max_tokens)
            _count(run, gen)
            thought = " ".join(gen.value.thought.split()) or "(empty thought)"
            memory.add_thought(session.id, thought)
            run.thoughts.append(thought)
            if gen.value.done:
                run.finished = True
                run.answer = gen.value.answer.strip()
                break
        if not run.answer:
            messages = [
                Message("system", system),
                Message("user", f"{user}\n\n{FINAL}", memories=tuple(run.thoughts)),
            ]
            gen = engine.generate_json(messages, final_schema(bounds), max_tokens=max_tokens)
            _count(run, gen)
            run.answer = gen.value.answer.strip()
    except ModelError as exc:
        run.error = f"{type(exc).__name__}: {exc}"
    run.seconds = time.perf_counter() - started
    return run


def _count(run: AgentRun, gen: Any) -> None:
    run.prompt_tokens += gen.usage.prompt_tokens
    run.completion_tokens += gen.usage.completion_tokens
    run.engine = gen.engine
    run.calls += 1
