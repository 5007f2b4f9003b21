"""The model host's own side: the child process that loads llama.cpp and answers requests.

Run as ``python -m localmem.llm.host --fd N``: ``N`` is its end of a socket pair made by the
parent (:mod:`localmem.llm.host.supervisor`), wrapped in a
:class:`multiprocessing.connection.Connection`, which sends length-prefixed pickles. The first
message is ``("init", spec)``: the :class:`~localmem.llm.llama.LlamaEngine` to build; the host
loads the model and answers ``("ok", facts)``. Then each message is ``(op, kwargs)`` and each
answer ``("ok", value)`` or ``("error", exception)`` (a localmem error travels as itself). The
host ends when the parent closes its end.

``--probe PATH`` is the CPU probe instead: load the model, decode one token, print one JSON line,
exit 0 (:mod:`localmem.llm.host.probe` runs it and reads how it ended).

Standard output and error are the engine log (the parent points them at a file), so llama.cpp's
own messages never reach a person's terminal unless asked for (``--verbose``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import pickle
import resource
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from localmem.errors import LocalMemError, ModelError

log = logging.getLogger("localmem.engine")


def _quiet_core_dumps() -> None:
    # a dying host would otherwise leave a core file of its whole memory in the working folder
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))


def _route_llama_log() -> None:
    """llama.cpp's log to this process's stderr (the engine log): warnings, or everything when
    the parent runs verbose."""
    verbose = os.environ.get("LOCALMEM_ENGINE_VERBOSE") == "1"
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format=f"%(asctime)s host[{os.getpid()}] %(levelname)s %(message)s",
    )
    logging.getLogger("llama-cpp-python").setLevel(logging.INFO if verbose else logging.WARNING)


def _complete(engine: Any, *, text: bool = False, stop: tuple[str, ...] = (), **kwargs: Any) -> Any:
    # free text ends at the model's end-of-turn text too (as LlamaEngine.generate_text does)
    stops = (*stop, engine._eos) if text else stop
    return engine.complete(stop=tuple(s for s in stops if s), **kwargs)


OPS: dict[str, Callable[..., Any]] = {
    "count_tokens": lambda e, text: e.count_tokens(text),
    "count_prompt_tokens": lambda e, messages: e.count_prompt_tokens(messages),
    "fit": lambda e, messages, max_tokens: e.fit(messages, max_tokens=max_tokens),
    "render": lambda e, messages: e.render(messages),
    "prompt_tokens": lambda e, prompt: e.prompt_tokens(prompt),
    "complete": _complete,
    "decode": lambda e, **kwargs: e.decode(**kwargs),
    "forget_prompt_cache": lambda e: e.forget_prompt_cache(),
    "ping": lambda e: os.getpid(),
}
"""What the host answers: each takes the engine and the request's keyword arguments."""


def _portable(exc: BaseException) -> BaseException:
    """The exception to send back: itself when it pickles, else a ModelError saying what it was."""
    if isinstance(exc, LocalMemError):
        try:
            pickle.loads(pickle.dumps(exc))
            return exc
        except Exception:  # an error type with an unusual constructor
            return ModelError(str(exc))
    return ModelError(f"the model host failed: {type(exc).__name__}: {exc}")


def _load(spec: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    from localmem.llm.llama import LlamaEngine

    engine = LlamaEngine(**spec)
    start = time.perf_counter()
    engine.count_tokens("load")  # loads the weights now, not on the first request
    facts = {"pid": os.getpid(), "load_seconds": time.perf_counter() - start}
    log.info("loaded %s in %.2f s", spec.get("model_path"), facts["load_seconds"])
    return engine, facts


def serve(conn: Connection, handle: Callable[[Any, str, dict[str, Any]], Any] | None = None) -> int:
    """Answer requests on ``conn`` until the parent goes away.

    Args:
        conn: This process's end of the socket pair.
        handle: ``(engine, op, kwargs) -> value`` (default: :data:`OPS`); a test host wraps it
            to die in the middle of a request.
    """
    handle = handle or (lambda engine, op, kwargs: OPS[op](engine, **kwargs))
    engine = None
    while True:
        try:
            op, kwargs = conn.recv()
        except (EOFError, OSError):  # the parent closed its end or died: nothing left to serve
            return 0
        try:
            if op == "init":
                engine, value = _load(kwargs)
            elif engine is None:
                raise ModelError("the model host got a request before its model")
            elif op not in OPS:
                raise ModelError(f"the model host does not know the request {op!r}")
            else:
                value = handle(engine, op, kwargs)
            answer: tuple[str, Any] = ("ok", value)
        except Exception as exc:  # every failure goes back to the caller, typed
            answer = ("error", _portable(exc))
        try:
            conn.send(answer)
        except (BrokenPipeError, ConnectionError, OSError):
            return 0


def probe(path: str, *, extra_buffer_types: bool, n_threads: int | None, n_gpu_layers: int) -> int:
    """Load ``path`` and decode one token; print what happened as one JSON line."""
    from localmem.llm.loaded import default_threads, load_model

    start = time.perf_counter()
    loaded = load_model(
        Path(path),
        n_ctx=256,
        n_threads=n_threads or default_threads(),
        n_gpu_layers=n_gpu_layers,
        extra_buffer_types=extra_buffer_types,
    )
    llama = loaded.llama
    tokens = llama.tokenize(b"The capital of France is", add_bos=True, special=False)
    llama.eval(tokens)  # the prompt's matrix products: where a bad instruction would fault
    token = int(llama.scores[llama.n_tokens - 1].argmax())
    llama.eval([token])  # and one decoding step
    print(json.dumps({"ok": True, "token": token, "seconds": time.perf_counter() - start}))
    return 0


def main(
    argv: list[str] | None = None,
    *,
    handle: Callable[[Any, str, dict[str, Any]], Any] | None = None,
) -> int:
    """The host's command line (see the module docstring); ``handle`` as for :func:`serve`."""
    parser = argparse.ArgumentParser(prog="python -m localmem.llm.host")
    parser.add_argument("--fd", type=int, help="the socket of the parent's requests")
    parser.add_argument("--probe", metavar="GGUF", help="decode one token and exit")
    parser.add_argument("--no-extra-buffer-types", action="store_true")
    parser.add_argument("--n-threads", type=int, default=None)
    parser.add_argument("--n-gpu-layers", type=int, default=0)
    args = parser.parse_args(argv)
    _quiet_core_dumps()
    _route_llama_log()
    if args.probe:
        try:
            return probe(
                args.probe,
                extra_buffer_types=not args.no_extra_buffer_types,
                n_threads=args.n_threads,
                n_gpu_layers=args.n_gpu_layers,
            )
        except LocalMemError as exc:
            print(json.dumps({"ok": False, "error": str(exc)}))
            return 2
    if args.fd is None:
        parser.error("--fd or --probe is required")
    return serve(Connection(args.fd), handle)
