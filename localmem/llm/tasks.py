"""The task framework: a model task is a :class:`TaskSpec`, run by :func:`run_task`.

A task has a name and a version, typed inputs, a pydantic output schema, a prompt builder, and
optionally a model-free implementation. :func:`run_task` sends the prompt to the engine when
there is one and uses the model-free implementation otherwise; the result always says which
implementation served it.

Tasks belong to the mechanisms that use them: each one's module (prompt, schema, model-free
implementation side by side) lives in its mechanism's package, and the mechanism runs it by
passing its spec. :func:`register` keeps a registry by name for the tools that list every task
(``localmem doctor``, the engine benchmark); :mod:`localmem.mechanisms` fills it.

A model-free implementation is a function ``(inputs, ctx) -> output``: ``inputs`` is the task's
input model, ``ctx`` a :class:`TaskContext` (embedder, config, ``now``), and the result an
instance of the task's output schema; it is named in the task's ``SPEC`` (``model_free=...``).
A task without one raises :class:`~localmem.errors.EngineUnavailableError` when no engine is
configured; ``localmem doctor`` shows it as ``unavailable``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from localmem.config import Config
from localmem.errors import EngineUnavailableError, InputError
from localmem.llm.base import Engine, Message, Usage

I = TypeVar("I", bound=BaseModel)  # noqa: E741 - the inputs of a task
O = TypeVar("O", bound=BaseModel)  # noqa: E741 - the output of a task

log = logging.getLogger("localmem.llm")

MODEL_FREE: Final = "model-free"  # Final: its type is the literal, an Implementation
Implementation = Literal["auto", "model", "model-free"]


@dataclass(frozen=True)
class TaskContext:
    """What a model-free implementation may use besides its inputs.

    Attributes:
        embedder: A :class:`localmem.embed.base.Embedder` (or None; implementations must then
            work on text alone).
        config: The store's configuration (label sets, thresholds).
        now: The present moment, passed in so results are reproducible.
    """

    embedder: Any = None
    config: Config = field(default_factory=Config)
    now: datetime | None = None


@dataclass(frozen=True)
class TaskSpec(Generic[I, O]):
    """One model task.

    Attributes:
        name: Registry key, e.g. ``answer``.
        version: Bumped whenever the prompt or schema changes meaning (results record it).
        inputs: Pydantic model of the inputs (a dict is validated into it).
        output: Pydantic model of the result (the base schema).
        build_prompt: ``inputs -> messages``; retrieved memories go in ``Message.memories``.
        schema_for: ``(inputs, n_memories) -> schema`` when the schema depends on the inputs
            (label sets, how many numbered memories the prompt shows after trimming); it must
            return a subclass of ``output``. None: ``output`` itself.
        model_free: ``(inputs, ctx) -> output`` or None (see the module docstring).
        max_tokens: Output budget for this task (None: the engine's default).
        example: Sample inputs, used by the tests and the engine benchmark.
        description: One line for people.
    """

    name: str
    version: int
    inputs: type[I]
    output: type[O]
    build_prompt: Callable[[I], list[Message]]
    description: str
    schema_for: Callable[[I, int], type[O]] | None = None
    model_free: Callable[[I, TaskContext], O] | None = None
    max_tokens: int | None = None
    example: Callable[[], I] | None = None


@dataclass(frozen=True)
class TaskResult(Generic[O]):
    """The outcome of a task and how it was obtained.

    Attributes:
        served_by: ``llama:<model>``, ``http:<model>`` or ``model-free``.
        memories_shown: How many of the input memories the model saw (after trimming), so
            numbered references in the value can be mapped back.
    """

    task: str
    version: int
    value: O
    served_by: str
    usage: Usage
    attempts: int = 1
    memories_shown: int | None = None
    memories_dropped: int = 0
    warnings: tuple[str, ...] = ()


_TASKS: dict[str, TaskSpec] = {}
#: loaders of tasks registered on first use of the registry (see :func:`register_later`)
_PENDING: list[Callable[[], Iterable[TaskSpec]]] = []


def register(spec: TaskSpec) -> TaskSpec:
    """Add a task to the registry; a second task with the same name is refused."""
    _load_pending()
    if spec.name in _TASKS:
        raise InputError(f"task {spec.name!r} is already registered")
    _TASKS[spec.name] = spec
    return spec


def register_later(loader: Callable[[], Iterable[TaskSpec]]) -> None:
    """Register the tasks ``loader`` returns when the registry is first read, not now.

    Importing a task's module builds its prompts' helpers and imports its model-free
    implementation; a process that never names a task (a one-shot ``localmem search``) should
    not pay for that. :mod:`localmem.mechanisms` registers the built-in tasks this way.
    """
    _PENDING.append(loader)


def _load_pending() -> None:
    while _PENDING:
        loader = _PENDING.pop(0)
        for spec in loader():
            if _TASKS.get(spec.name, spec) is not spec:
                raise InputError(f"two tasks are named {spec.name!r}")
            _TASKS[spec.name] = spec


def get_task(name: str) -> TaskSpec:
    """The spec of a registered task; an unknown name lists the known ones."""
    _load_pending()
    try:
        return _TASKS[name]
    except KeyError:
        raise InputError(f"unknown task {name!r}; known: {', '.join(sorted(_TASKS))}") from None


def all_tasks() -> list[TaskSpec]:
    """Every registered task, by name."""
    _load_pending()
    return [_TASKS[n] for n in sorted(_TASKS)]


def _inputs(spec: TaskSpec, inputs: BaseModel | dict[str, Any]) -> BaseModel:
    if isinstance(inputs, spec.inputs):
        return inputs
    data = inputs.model_dump() if isinstance(inputs, BaseModel) else inputs
    try:
        return spec.inputs.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputError(f"task {spec.name}: invalid input {where}: {first['msg']}") from None


def spec_of(task: str | TaskSpec) -> TaskSpec:
    """A task given by its spec or by its registered name."""
    return task if isinstance(task, TaskSpec) else get_task(task)


def run_task(
    task: str | TaskSpec,
    inputs: BaseModel | dict[str, Any],
    *,
    engine: Engine | None,
    context: TaskContext | None = None,
    implementation: Implementation = "auto",
    max_tokens: int | None = None,
) -> TaskResult:
    """Run one model task with the engine, or model-free when there is no engine.

    Args:
        task: The task's spec, or the name of a registered one (see :func:`all_tasks`).
        inputs: The task's input model, or a dict of its fields.
        engine: The engine, or None for model-free.
        context: Embedder, config and ``now`` for a model-free implementation.
        implementation: ``auto`` (the engine if given, else model-free; model-free also when
            the engine cannot serve this call: its host crashed, hung or is unhealthy, and the
            result's ``warnings`` say so), ``model`` (the engine only) or ``model-free`` (never
            the engine, e.g. to compare the two).
        max_tokens: Output budget (default: the task's, else the engine's).

    Raises:
        EngineUnavailableError: The chosen implementation does not exist (no engine, or no
            model-free implementation for this task).
        SchemaError: The model's output stayed invalid after a retry.
        InputError: Bad inputs, or a prompt that cannot fit the context.
    """
    spec = spec_of(task)
    name = spec.name
    data = _inputs(spec, inputs)
    usable = engine if implementation != MODEL_FREE else None  # the engine this call may use
    if implementation == "model" and engine is None:
        raise EngineUnavailableError(
            f"task {name!r} was asked to use a model but no engine is configured "
            "(put an instruct GGUF in models/ or set engine.model_path)"
        )
    fallback: tuple[str, ...] = ()
    if usable is not None:
        try:
            return _run_with_engine(spec, data, usable, max_tokens=max_tokens)
        except EngineUnavailableError as exc:  # crashed, hung, unhealthy, unreachable
            if implementation != "auto" or spec.model_free is None:
                raise
            fallback = (f"the engine could not serve ({exc}); served model-free",)
            log.warning("task %s: %s", name, fallback[0])
    if spec.model_free is None:
        why = "no engine is configured" if engine is None else "it was asked to run model-free"
        raise EngineUnavailableError(
            f"task {name!r} needs a model: {why} and it has no model-free implementation yet "
            "(put an instruct GGUF in models/ or set engine.model_path)"
        )
    ctx = context or TaskContext()
    start = time.perf_counter()
    value = spec.model_free(data, ctx)
    seconds = time.perf_counter() - start
    if not isinstance(value, spec.output):
        raise TypeError(f"model-free {name} returned {type(value).__name__}, not {spec.output}")
    return TaskResult(
        name, spec.version, value, MODEL_FREE, Usage(seconds=seconds), warnings=fallback
    )


def _run_with_engine(
    spec: TaskSpec, data: BaseModel, engine: Engine, *, max_tokens: int | None
) -> TaskResult:
    limit = max_tokens or spec.max_tokens or getattr(engine, "max_tokens", None) or 512
    # Fit first, so a schema that numbers the memories matches what the model will see.
    fit = engine.fit(spec.build_prompt(data), max_tokens=limit)
    shown = sum(m.memory_count for m in fit.messages)
    schema = spec.schema_for(data, shown) if spec.schema_for else spec.output
    gen = engine.generate_json(fit.messages, schema, max_tokens=limit)
    return TaskResult(
        spec.name,
        spec.version,
        gen.value,
        gen.engine,
        gen.usage,
        attempts=gen.attempts,
        memories_shown=shown,
        memories_dropped=fit.memories_dropped,
        warnings=tuple(fit.warnings) + gen.warnings,
    )


def task_schema(
    task: str | TaskSpec, inputs: BaseModel | dict[str, Any], *, shown: int | None = None
):
    """The output schema the model is held to for these inputs.

    Args:
        task: The task (spec or registered name).
        inputs: Its inputs.
        shown: Memories visible to the model (default: all of them, i.e. no trimming).
    """
    spec = spec_of(task)
    data = _inputs(spec, inputs)
    if spec.schema_for is None:
        return spec.output
    if shown is None:
        shown = sum(m.memory_count for m in spec.build_prompt(data))
    return spec.schema_for(data, shown)


def max_output_bytes(task: str | TaskSpec, inputs: BaseModel | dict[str, Any]) -> int:
    """The longest output (in bytes) the task's grammar admits for these inputs.

    A byte-level model needs at most this many tokens, so a ``max_tokens`` of this size can
    never cut its output (the tiny test model and the engine benchmark rely on it).
    """
    from localmem.llm.grammar import grammar_for_model

    return grammar_for_model(task_schema(task, inputs)).max_bytes
