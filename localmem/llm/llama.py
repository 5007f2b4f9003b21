"""The llama.cpp engine: a local GGUF model, loaded once, shared, behind a lock.

- The model loads on the first call and is shared by every engine object that names the same
  file and context settings (llama.cpp contexts are not thread-safe: one lock per loaded model).
- Prompts are rendered with the GGUF's own chat template (``tokenizer.chat_template``); a GGUF
  without one gets a built-in template, named in ``engine.chat_template`` or guessed from its
  architecture (:mod:`localmem.llm.templates`), and is refused only when neither applies. A
  base model is accepted with a warning.
- Decoding is our own loop (:mod:`localmem.llm.decode`): a lazy grammar, forced text in one
  batch, the cached prompt prefix reused.
- JSON output is constrained by the grammar of the task's schema (:mod:`localmem.llm.grammar`),
  then validated by pydantic. An invalid or unfinished output is retried once with a little
  sampling temperature (greedy decoding would repeat the same mistake), then
  :class:`~localmem.errors.SchemaError` is raised.
- A prompt too long for the context loses memories (the trimmable part) with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localmem.config import EngineConfig
from localmem.errors import ModelError, SchemaError
from localmem.llm.base import (
    Engine,
    Generation,
    M,
    Message,
    MessageLike,
    Timer,
    Usage,
    as_messages,
    retry_temperature,
    text_generation,
    validated,
)
from localmem.llm.decode import Decoded, complete_json, decode
from localmem.llm.gguf_header import GGUFInfo, read_gguf
from localmem.llm.grammar import Grammar, grammar_for_model
from localmem.llm.loaded import Loaded, load_model
from localmem.llm.templates import (
    base_model_warning,
    choose_template,
    is_base_model,
    missing_template_message,
    warn_once,
)


class LlamaEngine(Engine):
    """A GGUF model run in process by llama.cpp."""

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
        extra_buffer_types: bool = True,
    ) -> None:
        """Check the file now; load the weights on the first call.

        Args:
            model_path: The GGUF file.
            n_ctx: Context window; capped at what the model was trained for.
            n_threads: CPU threads (None: :func:`default_threads`).
            n_gpu_layers: Layers offloaded to a GPU (-1: all).
            temperature: 0 decodes greedily (deterministic).
            seed: Sampling seed.
            max_tokens: Default limit on the output of one call.
            chat_template: A built-in template's name (``gemma``, ``chatml``, ``llama3``) or a
                Jinja template; it wins over the file's own. None or ``auto``: the file's own,
                else one guessed from the architecture.
            info: The already-read header (saves reading it again).
            extra_buffer_types: Let llama.cpp repack weights for the CPU's widest kernels
                (its default); False avoids the path that dies with SIGILL where a VM does not
                grant an instruction the CPU advertises (AMX).

        Raises:
            ModelError: The file is not a valid GGUF, or it has no chat template and none is
                configured or can be guessed.
        """
        self.path = Path(model_path).expanduser()
        self.info = info or read_gguf(self.path)
        choice = choose_template(self.info, chat_template)
        if choice.template is None:
            raise ModelError(missing_template_message(self.info))
        self.template: str = choice.template
        self.template_source = choice.source
        #: What a person should know about this model (a guessed template, a base model).
        self.notices: list[str] = [n for n in (choice.notice,) if n]
        self.base_model = is_base_model(self.info)
        if self.base_model:
            self.notices.append(base_model_warning(self.info))
        for notice in self.notices:
            warn_once(notice)
        trained = self.info.context_length
        self.context_window = min(n_ctx, trained) if trained else n_ctx
        self.n_threads, self.n_gpu_layers = n_threads, n_gpu_layers
        self.extra_buffer_types = extra_buffer_types
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.name = f"llama:{self.path.stem.lower()}"
        self._loaded: Loaded | None = None
        self._formatter: Any = None

    @classmethod
    def from_config(cls, config: EngineConfig, info: GGUFInfo) -> LlamaEngine:
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
        )

    # -- loading -------------------------------------------------------------------------

    def _model(self) -> Loaded:
        if self._loaded is None:
            self._loaded = load_model(
                self.path,
                n_ctx=self.context_window,
                n_threads=self.n_threads,
                n_gpu_layers=self.n_gpu_layers,
                extra_buffer_types=self.extra_buffer_types,
            )
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            llama = self._loaded.llama
            self._bos = self._token_text(self._loaded, llama.token_bos())
            self._eos = self._token_text(self._loaded, llama.token_eos())
            try:
                self._formatter = Jinja2ChatFormatter(
                    template=self.template, eos_token=self._eos, bos_token=self._bos
                )
            except Exception as exc:  # jinja2 raises several types for a bad template
                raise ModelError(f"{self.name}: its chat template is not valid: {exc}") from None
            import llama_cpp

            vocab = llama_cpp.llama_model_get_vocab(llama.model)
            self._add_bos = bool(llama_cpp.llama_vocab_get_add_bos(vocab))
        return self._loaded

    @staticmethod
    def _token_text(loaded: Loaded, token: int) -> str:
        if token < 0:
            return ""
        return loaded.llama.detokenize([token], special=True).decode("utf-8", errors="ignore")

    # -- prompt --------------------------------------------------------------------------

    def render(self, messages: Sequence[MessageLike]) -> str:
        """The prompt text after the chat template (what the model reads)."""
        self._model()
        dicts = [m.as_dict() for m in as_messages(messages)]
        try:
            return self._formatter(messages=dicts).prompt
        except Exception as exc:  # jinja2 errors, or raise_exception() inside the template
            # Some templates (Gemma, older Mistral) refuse a system role: fold it into the user.
            if len(dicts) > 1 and dicts[0]["role"] == "system" and dicts[1]["role"] == "user":
                merged = dict(dicts[1], content=f"{dicts[0]['content']}\n\n{dicts[1]['content']}")
                try:
                    return self._formatter(messages=[merged, *dicts[2:]]).prompt
                except Exception:
                    pass
            raise ModelError(f"{self.name}: the chat template failed: {exc}") from None

    def prompt_tokens(self, prompt: str) -> list[int]:
        """The token ids of a rendered prompt (a BOS added only if the template has none)."""
        llama = self._model().llama
        add_bos = self._add_bos and not (self._bos and prompt.startswith(self._bos))
        return llama.tokenize(prompt.encode("utf-8"), add_bos=add_bos, special=True)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` with the model's own tokenizer (no special tokens)."""
        llama = self._model().llama
        return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of the messages after the chat template."""
        return len(self.prompt_tokens(self.render(messages)))

    def forget_prompt_cache(self) -> None:
        """Drop the evaluated prompt llama.cpp keeps for reuse (benchmarks time full prompts)."""
        loaded = self._model()
        with loaded.lock:
            loaded.llama.reset()

    # -- generation ----------------------------------------------------------------------

    def _check_grammar(self, grammar: Grammar) -> None:
        """Parse the grammar with llama.cpp once, so a bad one raises instead of crashing."""
        loaded = self._model()
        if grammar.gbnf in loaded.checked_grammars:
            return
        import llama_cpp

        vocab = llama_cpp.llama_model_get_vocab(loaded.llama.model)
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.gbnf.encode("utf-8"), b"root")
        if not sampler:
            raise SchemaError(f"{self.name}: llama.cpp rejected the grammar built for the schema")
        llama_cpp.llama_sampler_free(sampler)
        loaded.checked_grammars.add(grammar.gbnf)

    def decode(
        self,
        messages: Sequence[MessageLike],
        *,
        max_tokens: int,
        grammar: Grammar | None = None,
        stop_on_eog: bool = True,
    ) -> Decoded:
        """One greedy run of the decoding loop with its raw timings (for benchmarks);
        ``stop_on_eog=False`` makes exactly ``max_tokens`` tokens (same-length comparisons)."""
        loaded = self._model()
        tokens = self.prompt_tokens(self.render(messages))
        with loaded.lock:
            return decode(
                loaded.llama,
                tokens,
                max_tokens=max_tokens,
                seed=self.seed,
                gbnf=grammar.gbnf if grammar else None,
                stop_on_eog=stop_on_eog,
                stop_text=complete_json if grammar else None,
                byte_tokens=loaded.byte_tokens,
            )

    def _complete(
        self,
        tokens: list[int],
        *,
        max_tokens: int,
        temperature: float,
        seed: int,
        grammar: Grammar | None = None,
        stop: Sequence[str] = (),
    ) -> tuple[str, str, Usage]:
        loaded = self._model()
        stops = [s for s in stop if s]

        def stop_text(text: str) -> bool:
            if grammar is not None:
                return complete_json(text)  # the object is closed: nothing may follow
            return any(s in text for s in stops)

        with loaded.lock, Timer() as timer:
            out = decode(
                loaded.llama,
                tokens,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                gbnf=grammar.gbnf if grammar else None,
                stop_text=stop_text if grammar is not None or stops else None,
                byte_tokens=loaded.byte_tokens,
            )
        text = out.text
        for s in stops:  # like llama.cpp: the stop string is not part of the answer
            text = text.split(s, 1)[0]
        cost = Usage(out.prompt_tokens, len(out.tokens), timer.seconds)
        return text, out.finish_reason, cost

    def complete(
        self,
        messages: Sequence[MessageLike],
        *,
        max_tokens: int,
        temperature: float,
        seed: int,
        grammar: Grammar | None = None,
        stop: Sequence[str] = (),
    ) -> tuple[str, str, Usage]:
        """One run of the model on messages that already fit: ``(text, finish_reason, usage)``.

        The unit of work the model host serves: the template, the tokenizer, the grammar and
        the prompt cache all stay here, next to the model.
        """
        if grammar is not None:
            self._check_grammar(grammar)
        tokens = self.prompt_tokens(self.render(messages))
        return self._complete(
            tokens,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            grammar=grammar,
            stop=stop,
        )

    def generate_json(
        self, messages: Sequence[MessageLike], schema: type[M], *, max_tokens: int | None = None
    ) -> Generation[M]:
        """Generate an object of ``schema`` (see :meth:`Engine.generate_json`)."""
        grammar = grammar_for_model(schema)
        self._check_grammar(grammar)
        limit = max_tokens or self.max_tokens
        fit = self.fit(messages, max_tokens=limit)
        tokens = self.prompt_tokens(self.render(fit.messages))

        def attempt(n: int) -> tuple[str, str, Usage]:
            return self._complete(
                tokens,
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
        tokens = self.prompt_tokens(self.render(fit.messages))
        stops = [s for s in (*(stop or ()), self._eos) if s]
        text, finish, usage = self._complete(
            tokens, max_tokens=limit, temperature=self.temperature, seed=self.seed, stop=stops
        )
        return text_generation(self.name, text, finish, usage, fit)

    def describe(self) -> dict[str, Any]:
        """Which model, its header facts and settings; does not load the weights."""
        return {
            "name": self.name,
            "kind": "llama",
            "path": str(self.path),
            "architecture": self.info.architecture,
            "quantization": self.info.quantization,
            "size_bytes": self.info.size_bytes,
            "context_window": self.context_window,
            "trained_context": self.info.context_length,
            "chat_template": self.template_source,
            "base_model": self.base_model,
            "notices": list(self.notices),
            "temperature": self.temperature,
            "seed": self.seed,
            "extra_buffer_types": self.extra_buffer_types,
            "loaded": self._loaded is not None,
        }
