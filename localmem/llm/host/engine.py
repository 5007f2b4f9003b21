"""The llama.cpp engine as the mechanisms see it, with the model in a supervised child process.

:class:`HostEngine` is an :class:`~localmem.llm.base.Engine` like any other: the mechanisms do not
know the model runs elsewhere. What runs where:

- here (the process that holds the store, serves clients or draws the TUI): the GGUF's header,
  the chat template's choice and its notices (nothing heavy: ``llama_cpp`` is never imported),
  the task's grammar built from its schema, pydantic validation and the retry;
- in the host: llama.cpp itself, the template rendered, the tokenizer, the grammar-constrained
  decoding loop and the KV prefix cache (:class:`~localmem.llm.llama.LlamaEngine`, unchanged).

Fitting a prompt to the context takes one request (the host trims with its own tokenizer), a
generation one request per attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localmem.config import EngineConfig
from localmem.llm.base import (
    Engine,
    FitResult,
    Generation,
    M,
    Message,
    MessageLike,
    as_messages,
    retry_temperature,
    text_generation,
    validated,
)
from localmem.llm.decode import Decoded
from localmem.llm.gguf_header import GGUFInfo
from localmem.llm.grammar import Grammar, grammar_for_model
from localmem.llm.host.supervisor import Supervisor, supervisor_for
from localmem.llm.llama import LlamaEngine


class HostEngine(Engine):
    """A GGUF model run by llama.cpp in a supervised child process (the model host)."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_gpu_layers: int = 0,
        temperature: float = 0.0,
        seed: int = 42,
        max_tokens: int = 512,
        chat_template: str | None = None,
        info: GGUFInfo | None = None,
        timeout_s: float = 120.0,
        memory_mb: float | None = None,
        **supervision: Any,
    ) -> None:
        """Check the file and choose its template now; start the host on the first call.

        Args:
            model_path, n_ctx, n_threads, n_gpu_layers, temperature, seed, max_tokens,
                chat_template, info: As for :class:`~localmem.llm.llama.LlamaEngine`.
            timeout_s: Seconds a call may take before the host is stopped (``engine.timeout_s``).
            memory_mb: Stop the host past this resident memory (``engine.host_memory_mb``).
            supervision: :class:`~localmem.llm.host.supervisor.Supervisor` options (``bounds``,
                ``command``, ``use_probe``), for tests and tools.

        Raises:
            ModelError: The file is not a valid GGUF, or it has no chat template and none is
                configured or can be guessed.
        """
        # the header, the template and its notices, exactly as in process; nothing loads here
        self.local = LlamaEngine(
            model_path,
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_gpu_layers=n_gpu_layers,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            chat_template=chat_template,
            info=info,
        )
        self.path = self.local.path
        self.name = self.local.name
        self.context_window = self.local.context_window
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.timeout_s = timeout_s
        spec = {
            "model_path": str(self.path),
            "n_ctx": self.context_window,
            "n_threads": n_threads,
            "n_gpu_layers": n_gpu_layers,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "chat_template": self.local.template,  # the choice made here, rendered there
        }
        self.supervisor: Supervisor = supervisor_for(
            spec, name=self.name, memory_mb=memory_mb, **supervision
        )

    @classmethod
    def from_config(cls, config: EngineConfig, info: GGUFInfo) -> HostEngine:
        """Build the engine for ``info`` (a header found by discovery) with config settings."""
        return cls(
            info.path,
            n_ctx=config.n_ctx,
            n_threads=config.n_threads,
            n_gpu_layers=config.n_gpu_layers,
            temperature=config.temperature,
            seed=config.seed,
            max_tokens=config.max_tokens,
            chat_template=config.chat_template,
            info=info,
            timeout_s=config.timeout_s,
            memory_mb=config.host_memory_mb,
        )

    def _call(self, op: str, **kwargs: Any) -> Any:
        return self.supervisor.call(op, timeout=self.timeout_s, **kwargs)

    # -- tokens and prompts --------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` with the model's own tokenizer (no special tokens)."""
        return int(self._call("count_tokens", text=text))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of the messages after the chat template."""
        return int(self._call("count_prompt_tokens", messages=as_messages(messages)))

    def fit(self, messages: Sequence[MessageLike], *, max_tokens: int) -> FitResult:
        """Trim memories to fit the context (see :meth:`Engine.fit`), in one request."""
        return self._call("fit", messages=as_messages(messages), max_tokens=max_tokens)

    def render(self, messages: Sequence[MessageLike]) -> str:
        """The prompt text after the chat template (what the model reads)."""
        return self._call("render", messages=as_messages(messages))

    def prompt_tokens(self, prompt: str) -> list[int]:
        """The token ids of a rendered prompt."""
        return self._call("prompt_tokens", prompt=prompt)

    def forget_prompt_cache(self) -> None:
        """Drop the evaluated prompt the host keeps for reuse (benchmarks time full prompts)."""
        self._call("forget_prompt_cache")

    # -- generation ----------------------------------------------------------------------
    def decode(
        self,
        messages: Sequence[MessageLike],
        *,
        max_tokens: int,
        grammar: Grammar | None = None,
        stop_on_eog: bool = True,
    ) -> Decoded:
        """One greedy run of the host's decoding loop with its raw timings (benchmarks)."""
        return self._call(
            "decode",
            messages=as_messages(messages),
            max_tokens=max_tokens,
            grammar=grammar,
            stop_on_eog=stop_on_eog,
        )

    def generate_json(
        self, messages: Sequence[MessageLike], schema: type[M], *, max_tokens: int | None = None
    ) -> Generation[M]:
        """Generate an object of ``schema`` (see :meth:`Engine.generate_json`)."""
        grammar = grammar_for_model(schema)
        limit = max_tokens or self.max_tokens
        fit = self.fit(messages, max_tokens=limit)

        def attempt(n: int):
            return self._call(
                "complete",
                messages=fit.messages,
                max_tokens=limit,
                temperature=retry_temperature(self.temperature, n),
                seed=self.seed + n - 1,
                grammar=grammar,
            )

        return validated(self.name, schema, attempt, max_tokens=limit, fit=fit)

    def generate_text(
        self,
        messages: Sequence[MessageLike],
        *,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Generation[str]:
        """Generate free text (see :meth:`Engine.generate_text`)."""
        limit = max_tokens or self.max_tokens
        fit = self.fit(messages, max_tokens=limit)
        text, finish, usage = self._call(
            "complete",
            messages=fit.messages,
            max_tokens=limit,
            temperature=self.temperature,
            seed=self.seed,
            stop=tuple(stop or ()),
            text=True,
        )
        return text_generation(self.name, text, finish, usage, fit)

    def describe(self) -> dict[str, Any]:
        """The model, its settings and the host's state; starts nothing."""
        info = self.local.describe()
        host = self.supervisor.status()
        info.update(
            loaded=host["state"] == "running",
            host=host,
            timeout_s=self.timeout_s,
            extra_buffer_types=host["extra_buffer_types"],
        )
        return info
