"""The decoding loop of the llama.cpp engine: a reused prompt prefix and a lazy grammar.

Why not ``Llama.create_completion``: its sampler chain runs the grammar over every token of the
vocabulary at every step. On a real vocabulary (Gemma: 262,144 tokens) that is about half a
second per generated token, where the model itself takes a few tens of milliseconds: most of a
model task's time went to the grammar (docs/benchmarks.md, ``engine-real``).

Text the grammar forces (an object's next key, a closing bracket, the rest of a label once its
first letters are chosen) is not generated token by token: it is found by asking the grammar
which single bytes it allows, tokenized, and evaluated in one batch (what llguidance calls
fast-forward tokens). The model then continues from it as if it had written it.

For the rest, this loop does what llama.cpp's own ``common_sampler`` does: pick the token the
model prefers without the grammar, ask the grammar about that one token only, and only when it
is rejected look further, best-first: the 64 best tokens, then the 4,096 best, then the whole
vocabulary. At temperature 0 the result is exactly the greedy choice under the full grammar
mask (the best token the grammar allows), deterministically.
With a temperature (the retry after an invalid output) the token is sampled among the
``SAMPLE_TOP_K`` best tokens the grammar allows, with a seeded generator.

The prompt's prefix already in the KV cache from the previous call is kept: the long shared
instructions of a task are evaluated once, and the next memory costs only its own tokens.
"""

from __future__ import annotations

import ctypes
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from localmem.errors import ModelError, SchemaError

WIDENING = (64, 4096)
"""How many of the best tokens are checked before the whole vocabulary, in turn."""
FORCED_MAX_BYTES = 256
"""Most bytes fast-forwarded at once (a bound, not a limit any schema reaches)."""
SAMPLE_TOP_K = 40
"""Tokens considered when sampling with a temperature (llama.cpp's default top-k)."""
BLOCK = 64
"""Prompts are evaluated in blocks aligned to multiples of this many positions, and only whole
cached blocks are reused: llama.cpp's numbers depend slightly on how tokens are batched, so a
prompt evaluated with a cached prefix must be batched exactly as without one, or greedy
decoding could pick another token in a near tie (measured: it did, on Gemma 3)."""

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


def _llama_cpp() -> Any:
    import llama_cpp

    return llama_cpp


class GrammarCheck:
    """A llama.cpp grammar sampler, asked about a few tokens at a time.

    ``allowed(ids)`` runs the grammar over just those candidates; ``accept(token)`` advances it.
    The caller must :meth:`close` it (it owns C memory).
    """

    def __init__(self, vocab: Any, gbnf: str, n_vocab: int) -> None:
        lib = _llama_cpp()
        self._lib = lib
        self._sampler = lib.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not self._sampler:
            raise SchemaError("llama.cpp rejected the grammar built for the schema")
        # One buffer for the largest ask (the whole vocabulary), reused every step.
        self._buffer = np.zeros(n_vocab, dtype=_TOKEN_DATA)
        self._array = lib.llama_token_data_array(
            data=self._buffer.ctypes.data_as(lib.llama_token_data_p),
            size=0,
            selected=-1,
            sorted=False,
        )

    def allowed(self, ids: np.ndarray) -> np.ndarray:
        """Which of the token ids ``ids`` the grammar allows next (a boolean mask)."""
        n = len(ids)
        view = self._buffer[:n]
        view["id"] = ids
        view["logit"] = 0.0
        self._array.size = n
        self._array.selected = -1
        self._array.sorted = False
        self._lib.llama_sampler_apply(self._sampler, ctypes.byref(self._array))
        return np.isfinite(view["logit"])

    def allows(self, token: int) -> bool:
        """Whether the grammar allows ``token`` next."""
        return bool(self.allowed(np.array([token], dtype=np.int32))[0])

    def accept(self, token: int) -> None:
        """Advance the grammar past ``token``."""
        self._lib.llama_sampler_accept(self._sampler, token)

    def close(self) -> None:
        """Free the sampler."""
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None


@dataclass(frozen=True)
class Decoded:
    """The output of one decoding run.

    Attributes:
        text: The generated text (special tokens not rendered).
        tokens: The generated token ids (the end-of-generation token not included).
        finish_reason: ``stop`` (the model or the grammar ended it) or ``length``.
        prompt_tokens: Tokens of the prompt.
        evaluated: Prompt tokens actually evaluated (the rest came from the KV cache).
        prompt_seconds: Time spent evaluating the prompt.
        seconds: The whole run (prompt evaluation included).
    """

    text: str
    tokens: tuple[int, ...]
    finish_reason: str
    prompt_tokens: int
    evaluated: int
    prompt_seconds: float
    seconds: float = 0.0


def prefill(llama: Any, tokens: list[int]) -> int:
    """Evaluate ``tokens``, keeping the prefix the KV cache already holds; return how many ran.

    Only whole blocks (:data:`BLOCK`) of the cached prefix are kept, and at least the last
    token is evaluated, so the logits are those of this prompt and do not depend on what ran before.
    """
    lib = _llama_cpp()
    cached = llama.input_ids[: llama.n_tokens]
    limit = min(len(cached), len(tokens) - 1)
    same = 0
    if limit > 0:
        diff = np.nonzero(cached[:limit] != np.asarray(tokens[:limit]))[0]
        same = int(diff[0]) if len(diff) else limit
        same -= same % BLOCK
    if same and not lib.llama_memory_seq_rm(lib.llama_get_memory(llama.ctx), -1, same, -1):
        same = 0  # this cache cannot drop a suffix (recurrent models): start over
    if same == 0:
        llama.reset()
        lib.llama_memory_clear(lib.llama_get_memory(llama.ctx), True)
    llama.n_tokens = same
    for start in range(same, len(tokens), BLOCK):
        llama.eval(tokens[start : start + BLOCK])
    return len(tokens) - same


def _best_allowed(logits: np.ndarray, grammar: GrammarCheck) -> int:
    """The highest-scoring token the grammar allows (exactly the greedy choice under its mask)."""
    best = int(np.argmax(logits))
    if grammar.allows(best):
        return best
    for k in WIDENING:
        if k >= len(logits):
            break
        top = np.argpartition(-logits, k)[:k]
        top = top[np.argsort(-logits[top], kind="stable")]
        ok = grammar.allowed(top.astype(np.int32))
        if ok.any():
            return int(top[np.argmax(ok)])
    ids = np.arange(len(logits), dtype=np.int32)
    ok = grammar.allowed(ids)
    if not ok.any():
        raise SchemaError("the grammar allows no token here (a dead end in the grammar)")
    masked = np.where(ok, logits, -np.inf)
    return int(np.argmax(masked))


def _sampled(
    logits: np.ndarray, grammar: GrammarCheck | None, temperature: float, rng: np.random.Generator
) -> int:
    """A token sampled among the SAMPLE_TOP_K best that the grammar allows."""
    top: np.ndarray | None = None
    for k in (*WIDENING, len(logits)):
        k = min(k, len(logits))
        cand = np.argpartition(-logits, k - 1)[:k] if k < len(logits) else np.arange(k)
        cand = cand[np.argsort(-logits[cand], kind="stable")].astype(np.int32)
        if grammar is not None:
            cand = cand[grammar.allowed(cand)]
        if len(cand):
            top = cand[:SAMPLE_TOP_K]
            break
    if top is None:
        raise SchemaError("the grammar allows no token here (a dead end in the grammar)")
    scaled = logits[top].astype(np.float64) / temperature
    probs = np.exp(scaled - scaled.max())
    return int(rng.choice(top, p=probs / probs.sum()))


def decode(
    llama: Any,
    prompt: list[int],
    *,
    max_tokens: int,
    temperature: float = 0.0,
    seed: int = 0,
    gbnf: str | None = None,
    stop_on_eog: bool = True,
    stop_text: Callable[[str], bool] | None = None,
    clock: Callable[[], float] | None = None,
    byte_tokens: np.ndarray | None = None,
) -> Decoded:
    """Generate up to ``max_tokens`` tokens after ``prompt`` (see the module docstring).

    Args:
        llama: A loaded ``llama_cpp.Llama``.
        prompt: The prompt's tokens.
        max_tokens: Most tokens to generate.
        temperature: 0 for greedy decoding; above 0 samples (seeded by ``seed``).
        seed: The sampling seed.
        gbnf: A GBNF grammar (root rule ``root``) the output must follow, or None.
        stop_on_eog: End at an end-of-generation token (False: always make ``max_tokens``
            tokens, which the benchmark uses to compare equal lengths).
        stop_text: Called with the text so far after each token; True ends the run. For a JSON
            grammar this ends the run as soon as the object is complete, one model step early.
        clock: A time source for the prompt's share of the time (default: perf_counter).
        byte_tokens: The model's single-byte tokens (:func:`byte_tokens`): with a grammar,
            text the grammar forces (a key, a bracket, the rest of a label) is fed in one
            batch instead of one model step per token. None: no fast-forward.

    Raises:
        ModelError: llama.cpp failed.
        SchemaError: The grammar reached a state that allows no token.
    """
    import time

    lib = _llama_cpp()
    tick = clock or time.perf_counter
    vocab = lib.llama_model_get_vocab(llama.model)
    n_vocab = int(lib.llama_vocab_n_tokens(vocab))
    if len(prompt) + max_tokens > llama.n_ctx():
        raise ModelError(
            f"prompt ({len(prompt)} tokens) plus max_tokens={max_tokens} exceed the context "
            f"of {llama.n_ctx()} tokens"
        )
    grammar = GrammarCheck(vocab, gbnf, n_vocab) if gbnf else None
    rng = np.random.default_rng(seed)
    out: list[int] = []
    pieces: list[bytes] = []
    finish = "length"
    try:
        start = tick()
        try:
            evaluated = prefill(llama, prompt)
        except RuntimeError as exc:
            raise ModelError(f"llama.cpp could not evaluate the prompt: {exc}") from None
        prompt_seconds = tick() - start
        while len(out) < max_tokens:
            pointer = lib.llama_get_logits_ith(llama.ctx, -1)
            logits = np.ctypeslib.as_array(pointer, shape=(n_vocab,))
            token = _choose(logits, grammar, temperature, rng)
            if stop_on_eog and lib.llama_vocab_is_eog(vocab, token):
                finish = "stop"
                break
            step = _step(llama, token, grammar, byte_tokens, vocab, pieces)
            out.extend(step)
            text = b"".join(pieces).decode("utf-8", "ignore")
            if len(out) > max_tokens:  # the forced text ran past the budget
                del out[max_tokens:]
                break
            if (
                stop_text is not None
                and stop_text(text)
                and (grammar is None or _grammar_may_end(grammar, vocab))
            ):
                finish = "stop"
                break
            try:
                llama.eval(step)  # forced tokens are evaluated in one batch
            except RuntimeError as exc:
                raise ModelError(f"llama.cpp failed while generating: {exc}") from None
    finally:
        if grammar is not None:
            grammar.close()
    text = b"".join(pieces).decode("utf-8", errors="ignore")
    seconds = tick() - start
    return Decoded(text, tuple(out), finish, len(prompt), evaluated, prompt_seconds, seconds)


def _choose(
    logits: np.ndarray, grammar: GrammarCheck | None, temperature: float, rng: np.random.Generator
) -> int:
    """The next token: sampled above temperature 0, else the best the grammar allows."""
    if temperature > 0:
        return _sampled(logits, grammar, temperature, rng)
    if grammar is not None:
        return _best_allowed(logits, grammar)
    return int(np.argmax(logits))


def _step(
    llama: Any,
    token: int,
    grammar: GrammarCheck | None,
    byte_ids: np.ndarray | None,
    vocab: Any,
    pieces: list[bytes],
) -> list[int]:
    """The tokens of one model step: ``token``, then the text the grammar forces after it
    (when ``byte_ids`` allows a fast-forward); their bytes are appended to ``pieces``."""
    step = [token]
    pieces.append(llama.detokenize([token]))
    if grammar is not None:
        grammar.accept(token)
        if byte_ids is not None:
            forced = _forced_bytes(grammar, byte_ids, vocab)
            if forced:
                step += _forced_tokens(llama, forced, byte_ids)
                pieces.append(forced)
    return step


def byte_tokens(llama: Any) -> np.ndarray | None:
    """The token of each single byte (index = byte value), or None when the vocabulary lacks
    one (then nothing is fast-forwarded). Computed once per loaded model by the engine."""
    ids = []
    for b in range(256):
        toks = llama.tokenize(bytes([b]), add_bos=False, special=False)
        if len(toks) != 1 or llama.detokenize(toks) != bytes([b]):
            return None
        ids.append(toks[0])
    return np.array(ids, dtype=np.int32)


def _forced_bytes(grammar: GrammarCheck, byte_ids: np.ndarray, vocab: Any) -> bytes:
    """The text the grammar allows as the only continuation (keys, brackets, the rest of an
    enum value), accepted into the grammar; the caller feeds it to the model in one batch.

    A byte is forced when it is the only byte the grammar allows and the end is not allowed;
    a token of several bytes can only be allowed if its first byte is, so no token is missed.
    """
    lib = _llama_cpp()
    eos = lib.llama_vocab_eos(vocab)
    probe = np.append(byte_ids, np.int32(eos)) if eos >= 0 else byte_ids
    forced = bytearray()
    while len(forced) < FORCED_MAX_BYTES:
        ok = grammar.allowed(probe)
        if ok.sum() != 1 or (eos >= 0 and ok[-1]):
            break
        b = int(np.argmax(ok[:256]))
        grammar.accept(int(byte_ids[b]))
        forced.append(b)
    return bytes(forced)


def _forced_tokens(llama: Any, forced: bytes, byte_ids: np.ndarray) -> list[int]:
    """The model's own tokens for the forced text; its byte tokens when those do not give
    back exactly the text (a tokenizer that adds a leading space, say)."""
    tokens = llama.tokenize(forced, add_bos=False, special=False)
    if llama.detokenize(tokens) == forced:
        return tokens
    return [int(byte_ids[b]) for b in forced]


def _grammar_may_end(grammar: GrammarCheck, vocab: Any) -> bool:
    lib = _llama_cpp()
    eos = lib.llama_vocab_eos(vocab)
    return eos >= 0 and grammar.allows(eos)


def complete_json(text: str) -> bool:
    """Whether ``text`` is one complete JSON object (the end of a JSON task's output)."""
    stripped = text.rstrip()
    if not stripped.endswith("}"):
        return False
    try:
        return isinstance(json.loads(stripped), dict)
    except ValueError:
        return False
