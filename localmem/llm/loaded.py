"""llama.cpp models loaded once per process and shared (the in-process engine's, and so the
model host's): one per (file, context, threads, GPU layers, extra buffer types), one lock each.

``llama_cpp`` is imported here only when a model loads; a missing one is one line naming the
extra that installs it.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localmem.errors import ModelError
from localmem.extras import missing
from localmem.llm.decode import byte_tokens


@dataclass
class Loaded:
    """One loaded model, shared by every engine that uses the same file and settings."""

    llama: Any
    lock: threading.RLock = field(default_factory=threading.RLock)
    checked_grammars: set[str] = field(default_factory=set)
    byte_tokens: Any = None  # the single-byte tokens, for fast-forwarding forced text


_LOADED: dict[tuple, Loaded] = {}
_LOADED_LOCK = threading.Lock()


def default_threads() -> int:
    """Threads llama.cpp uses when none are configured: half the logical CPUs, at least one.

    Both for generation and for prompt evaluation. llama.cpp's threads wait for each other at
    every layer by spinning, so more threads than free cores is far slower, not a little: on
    the shared 2-core machine, 40 tokens took 1.2 s with one thread and 16-28 s with two
    (docs/benchmarks.md, ``engine-real``). Half the CPUs is llama.cpp's own default for
    generation; its default for prompts (every CPU) is the one that crawled.
    """
    return max(1, (os.cpu_count() or 2) // 2)


def import_llama_cpp() -> Any:
    """``llama_cpp``, or a one-line error naming the extra that installs it."""
    try:
        import llama_cpp
    except ImportError:
        # models/README.md says how to build it for this CPU
        raise missing("the llama.cpp engine", "llama") from None
    return llama_cpp


@contextmanager
def _model_params(**overrides: Any) -> Iterator[None]:
    """Load models with some of llama.cpp's model parameters changed.

    ``llama_cpp.Llama`` takes no argument for several of them (``use_extra_bufts``); it reads
    them from ``llama_model_default_params()``, which is wrapped for the duration.
    """
    if not overrides:
        yield
        return
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params

    def changed() -> Any:
        params = original()
        for name, value in overrides.items():
            setattr(params, name, value)
        return params

    lib.llama_model_default_params = changed
    try:
        yield
    finally:
        lib.llama_model_default_params = original


def load_model(
    path: Path,
    *,
    n_ctx: int,
    n_threads: int | None,
    n_gpu_layers: int,
    extra_buffer_types: bool = True,
) -> Loaded:
    n_threads = n_threads or default_threads()
    key = (str(path.resolve()), n_ctx, n_threads, n_gpu_layers, extra_buffer_types)
    with _LOADED_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        llama_cpp = import_llama_cpp()
        # llama.cpp's "extra buffer types" repack weights for the CPU's widest kernels (AMX,
        # AVX-512 variants); where the CPU advertises an instruction the VM does not grant,
        # that path dies with SIGILL (localmem/llm/host/probe.py decides when to turn it off)
        overrides = {} if extra_buffer_types else {"use_extra_bufts": False}
        try:
            with _model_params(**overrides):
                llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=n_threads,
                    n_threads_batch=n_threads,  # see default_threads()
                    n_gpu_layers=n_gpu_layers,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(f"llama.cpp could not load {path}: {exc}") from None
        _LOADED[key] = loaded = Loaded(llama, byte_tokens=byte_tokens(llama))
        return loaded


def unload_all() -> None:
    """Forget every loaded model (tests and long-running tools that switch models)."""
    with _LOADED_LOCK:
        for loaded in _LOADED.values():
            with loaded.lock:
                loaded.llama.close()
        _LOADED.clear()


atexit.register(unload_all)  # before llama_cpp's globals go, or Llama.__del__ prints a traceback
