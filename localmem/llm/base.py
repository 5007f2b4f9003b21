"""The engine interface every model task goes through, and the values it hands back.

An :class:`Engine` turns chat messages into either a validated pydantic object
(:meth:`Engine.generate_json`) or plain text (:meth:`Engine.generate_text`). Every call reports
what it cost (:class:`Usage`) and which implementation served it (:attr:`Generation.engine`).

Prompts mark the part of a message that may be shortened when the context is too small: a
:class:`Message` carries its retrieved memories separately, and :func:`fit_messages` drops the
least important ones (the last) with a warning instead of letting the runtime fail.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from localmem.errors import InputError, SchemaError

log = logging.getLogger("localmem.llm")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

Role = Literal["system", "user", "assistant"]
MEMORY_SLOT = "{memories}"
"""Where a message's memories are rendered; appended at the end when the slot is absent."""
TRIM_MARK = " [...]"


@dataclass(frozen=True)
class Message:
    """One chat message; ``memories`` is the part that may be trimmed to fit the context.

    Memories are rendered as numbered lines (``[1] ...``) in place of :data:`MEMORY_SLOT`, most
    important first: when the prompt is too long, the last ones are dropped first. A message
    without a memory part (``memories=None``) is sent exactly as written.
    """

    role: Role
    content: str
    memories: tuple[str, ...] | None = None
    no_memories: str = "(none)"

    @property
    def memory_count(self) -> int:
        """How many memories the message shows."""
        return len(self.memories or ())

    def render(self) -> str:
        """The text sent to the model."""
        if self.memories is None:
            return self.content
        block = "\n".join(f"[{i}] {m}" for i, m in enumerate(self.memories, 1))
        block = block or self.no_memories
        if MEMORY_SLOT in self.content:
            return self.content.replace(MEMORY_SLOT, block)
        return f"{self.content}\n{block}"

    def as_dict(self) -> dict[str, str]:
        """The OpenAI-style ``{"role", "content"}`` form."""
        return {"role": self.role, "content": self.render()}


MessageLike = Message | Mapping[str, str]


def as_messages(messages: Sequence[MessageLike]) -> list[Message]:
    """Accept :class:`Message` objects or ``{"role", "content"}`` dicts."""
    out = []
    for m in messages:
        if isinstance(m, Message):
            out.append(m)
        elif isinstance(m, Mapping) and "role" in m and "content" in m:
            if m["role"] not in ("system", "user", "assistant"):
                raise InputError(f"unknown message role {m['role']!r}")
            out.append(Message(role=m["role"], content=str(m["content"])))  # type: ignore[arg-type]
        else:
            raise InputError(f"not a chat message: {m!r}")
    if not out:
        raise InputError("a prompt needs at least one message")
    return out


@dataclass(frozen=True)
class Usage:
    """What one call cost: tokens in, tokens out, wall-clock seconds."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.seconds + other.seconds,
        )

    @property
    def tokens_per_second(self) -> float:
        """Completion tokens per second (0 when nothing was generated)."""
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class Generation(Generic[T]):
    """A model's answer: the value, its cost, and who produced it.

    Attributes:
        value: The validated object (``generate_json``) or the text (``generate_text``).
        usage: Tokens and seconds, summed over a retry if there was one.
        engine: Which implementation served it, e.g. ``llama:qwen2.5-1.5b-instruct-q4_k_m``.
        finish_reason: ``stop`` (the model ended), or ``length`` (text cut at max tokens).
        attempts: 1, or 2 when the first output was invalid and the call was retried.
        memories_dropped: How many memories were trimmed to fit the context.
    """

    value: T
    usage: Usage
    engine: str
    finish_reason: str = "stop"
    attempts: int = 1
    memories_dropped: int = 0
    warnings: tuple[str, ...] = ()


class Engine(ABC):
    """A text generator behind every model task (llama.cpp in process, or an HTTP server)."""

    #: Name shown wherever a result says who served it.
    name: str
    #: Tokens the model can see at once (prompt plus output).
    context_window: int

    @abstractmethod
    def generate_json(
        self, messages: Sequence[MessageLike], schema: type[M], *, max_tokens: int | None = None
    ) -> Generation[M]:
        """Generate an object of ``schema``, constrained by its grammar and validated.

        Raises:
            SchemaError: The output was invalid twice, or hit ``max_tokens`` twice.
            GrammarError: ``schema`` cannot be turned into a bounded grammar.
            ModelError: The model failed to load or run.
        """

    @abstractmethod
    def generate_text(
        self,
        messages: Sequence[MessageLike],
        *,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Generation[str]:
        """Generate free text; ``finish_reason == "length"`` when cut at ``max_tokens``."""

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Tokens ``text`` takes with this engine's tokenizer."""

    @abstractmethod
    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens the messages take once formatted for the model (chat template included)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What this engine is, without loading anything heavy (for ``doctor`` and the TUI)."""

    def fit(self, messages: Sequence[MessageLike], *, max_tokens: int) -> FitResult:
        """Trim memories so the prompt plus ``max_tokens`` of output fit the context.

        Raises:
            InputError: ``max_tokens`` fills the context, or the prompt is too long even with
                no memories.
        """
        budget = self.context_window - max_tokens
        if budget <= 0:
            raise InputError(
                f"max_tokens={max_tokens} leaves no room for a prompt in a context of "
                f"{self.context_window} tokens"
            )
        return fit_messages(as_messages(messages), count=self.count_prompt_tokens, budget=budget)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the engine holds (a no-op unless overridden)."""


@dataclass
class FitResult:
    """Messages that fit the budget, and what was cut to get there."""

    messages: list[Message]
    prompt_tokens: int
    memories_dropped: int = 0
    warnings: list[str] = field(default_factory=list)


def fit_messages(
    messages: Sequence[Message],
    *,
    count: Callable[[list[Message]], int],
    budget: int,
) -> FitResult:
    """Drop memories (last first) until the prompt takes at most ``budget`` tokens.

    When one memory alone is still too long, its text is shortened. When the messages do not fit
    even without memories, raise: nothing else may be cut without changing the task.

    Args:
        messages: The prompt; only the ``memories`` of each message are trimmed.
        count: Tokens the rendered messages take (the engine's own tokenizer and template).
        budget: Most prompt tokens allowed (context window minus room for the output).

    Raises:
        InputError: The prompt is too long even with every memory removed.
    """
    msgs = list(messages)
    used = count(msgs)
    total = sum(m.memory_count for m in msgs)
    if used <= budget:
        return FitResult(msgs, used)
    if total == 0:
        raise InputError(
            f"the prompt takes {used} tokens but only {budget} fit the context; "
            "shorten the input or raise engine.n_ctx"
        )

    def keep(n: int) -> list[Message]:
        # Keep the first n memories over all messages, in message order.
        out, left = [], n
        for m in msgs:
            if m.memories is None:
                out.append(m)
                continue
            take = min(left, len(m.memories))
            left -= take
            out.append(replace(m, memories=m.memories[:take]))
        return out

    # Binary search for the largest number of memories that fits.
    low, high = 0, total - 1
    while low < high:
        mid = (low + high + 1) // 2
        if count(keep(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    kept = keep(low)
    dropped = total - low
    if low < total:
        # Room may be left for part of the next memory: better half a memory than none.
        partial = _shorten_next(msgs, low, count=count, budget=budget)
        if partial is not None:
            kept, dropped = partial, dropped - 1
    used = count(kept)
    if used > budget:
        raise InputError(
            f"the prompt takes {used} tokens without any memory but only {budget} fit "
            "the context; shorten the input or raise engine.n_ctx"
        )
    whole = low  # memories kept in full
    partly = " plus part of one more" if dropped < total - low else ""
    warning = (
        f"prompt too long for the context ({budget} tokens): kept {whole} of {total} "
        f"memories{partly}"
    )
    log.warning(warning)
    return FitResult(kept, used, dropped, [warning])


def _shorten_next(
    msgs: list[Message], n_kept: int, *, count: Callable[[list[Message]], int], budget: int
) -> list[Message] | None:
    """Keep ``n_kept`` memories plus a shortened copy of the next one, if one fits at all."""
    left, where = n_kept, None
    for i, m in enumerate(msgs):
        shown = m.memories or ()
        if left < len(shown):
            where = (i, shown[left])  # the message and its first memory not kept in full
            break
        left -= len(shown)
    if where is None:
        return None
    i, text = where

    def with_prefix(chars: int) -> list[Message]:
        out = []
        for k, m in enumerate(msgs):
            if m.memories is None:
                out.append(m)
                continue
            before = sum(x.memory_count for x in msgs[:k])
            take = max(0, min(len(m.memories), n_kept - before))
            mems = m.memories[:take]
            if k == i:
                mems = (*mems, text[:chars].rstrip() + TRIM_MARK)
            out.append(replace(m, memories=mems))
        return out

    low, high = 0, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if count(with_prefix(mid)) <= budget:
            low = mid
        else:
            high = mid - 1
    if low < 40:  # a sliver of a memory helps nobody
        return None
    return with_prefix(low)


def text_generation(
    engine_name: str, text: str, finish: str, usage: Usage, fit: FitResult
) -> Generation[str]:
    """What ``generate_text`` hands back: the text stripped, with what the fit cut."""
    return Generation(
        text.strip(),
        usage,
        engine_name,
        finish_reason=finish,
        memories_dropped=fit.memories_dropped,
        warnings=tuple(fit.warnings),
    )


RETRY_TEMPERATURE = 0.7
"""Sampling temperature of the retry: a greedy retry would repeat the invalid output."""

Attempt = Callable[[int], tuple[str, str, Usage]]


def retry_temperature(temperature: float, attempt: int) -> float:
    """The configured temperature on the first attempt, at least RETRY_TEMPERATURE after."""
    return temperature if attempt == 1 else max(temperature, RETRY_TEMPERATURE)


def validated(
    engine_name: str,
    schema: type[M],
    attempt: Attempt,
    *,
    max_tokens: int,
    fit: FitResult,
    parse: Callable[[str], str] = lambda text: text,
) -> Generation[M]:
    """Run ``attempt(1)``, validate its text against ``schema``, retry once, else raise.

    ``attempt(n)`` returns ``(text, finish_reason, usage)``; the second attempt is expected to
    sample differently (see :data:`RETRY_TEMPERATURE`). Output cut at ``max_tokens`` counts as
    invalid. ``parse`` extracts the JSON from the text (servers may wrap it).

    Raises:
        SchemaError: Both attempts were invalid; the message says why the last one was.
    """
    total, problem = Usage(), ""
    for n in (1, 2):
        text, finish, usage = attempt(n)
        total += usage
        if finish == "length":
            problem = f"the output hit max_tokens={max_tokens} before the JSON was complete"
        else:
            try:
                value = schema.model_validate_json(parse(text))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "output"
                problem = f"{where}: {first['msg']}"
            else:
                return Generation(
                    value,
                    total,
                    engine_name,
                    attempts=n,
                    memories_dropped=fit.memories_dropped,
                    warnings=tuple(fit.warnings),
                )
        log.warning(
            "%s: invalid %s output (attempt %d): %s", engine_name, schema.__name__, n, problem
        )
    raise SchemaError(
        f"{engine_name} did not produce a valid {schema.__name__} after 2 attempts: {problem}"
    )


class Timer:
    """Wall-clock seconds of a block: ``with Timer() as t: ...; t.seconds``."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
