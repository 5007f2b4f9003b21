"""Which engine serves the model tasks: an explicit registry of engine kinds and ``make_engine``.

``engine.kind``:

- ``auto``: the llama.cpp engine when a GGUF is configured or found (see
  :mod:`localmem.llm.discovery`), otherwise None, and every task runs its model-free
  implementation;
- ``llama``: the llama.cpp engine; it is an error when no GGUF can be found;
- ``http``: an OpenAI-compatible server at ``engine.http_url``;
- ``none``: never a model.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from typing import Any

from localmem.config import Config, EngineConfig
from localmem.errors import EngineUnavailableError, InputError, LocalMemError, MissingExtraError
from localmem.extras import missing
from localmem.llm.base import Engine

log = logging.getLogger("localmem.llm")


def _llama(config: EngineConfig) -> Engine | None:

    from localmem.llm.discovery import select_gguf

    info = select_gguf(config)
    if info is None:
        return None
    if importlib.util.find_spec("llama_cpp") is None:  # the llama extra is not installed
        raise missing(f"the GGUF model {info.path} was found, but running it", "llama")
    from localmem.llm.host import HostEngine  # llama.cpp itself loads in the host process

    return HostEngine.from_config(config, info)


def _http(config: EngineConfig) -> Engine:
    from localmem.llm.http import HttpEngine

    return HttpEngine.from_config(config)


class EngineRegistry:
    """Engine kinds by name; refuses a duplicate and lists the known names on a miss."""

    def __init__(self) -> None:
        self._factories: dict[str, Callable[[EngineConfig], Engine | None]] = {}

    def register(self, kind: str, factory: Callable[[EngineConfig], Engine | None]) -> None:
        """Add an engine kind; ``factory(config)`` builds it (None: nothing to serve with)."""
        if kind in self._factories:
            raise InputError(f"engine kind {kind!r} is already registered")
        self._factories[kind] = factory

    def get(self, kind: str) -> Callable[[EngineConfig], Engine | None]:
        """The factory of ``kind``."""
        try:
            return self._factories[kind]
        except KeyError:
            known = ", ".join(sorted(self._factories))
            raise InputError(f"unknown engine kind {kind!r}; known: {known}") from None

    def names(self) -> list[str]:
        """The registered kinds."""
        return sorted(self._factories)


ENGINES = EngineRegistry()
ENGINES.register("llama", _llama)
ENGINES.register("http", _http)


def _engine_config(config: Config | EngineConfig) -> EngineConfig:
    return config.engine if isinstance(config, Config) else config


def make_engine(config: Config | EngineConfig, *, strict: bool = False) -> Engine | None:
    """The engine the config asks for, or None when the model-free implementations serve.

    Nothing heavy happens here: a llama.cpp model loads on its first call. With ``auto``, a
    GGUF found while llama.cpp is not installed is reported (a warning; with ``strict``, a
    :class:`MissingExtraError`) and the model-free implementations serve.

    Raises:
        EngineUnavailableError: ``kind = "llama"`` and no usable GGUF was found.
        MissingExtraError: a GGUF was found but llama.cpp (the ``llama`` extra) is not
            installed, with ``kind = "llama"`` (or ``strict``).
        ModelError: ``engine.model_path`` names a missing or invalid GGUF, or one without a
            chat template.
        InputError: ``kind = "http"`` without ``engine.http_url``.
    """
    cfg = _engine_config(config)
    if cfg.kind == "none":
        return None
    if cfg.kind == "auto":
        try:
            return ENGINES.get("llama")(cfg)
        except MissingExtraError as exc:
            if strict:
                raise
            log.warning("%s; the model-free implementations serve meanwhile", exc)
            return None
    engine = ENGINES.get(cfg.kind)(cfg)
    if engine is None:
        raise EngineUnavailableError(
            f"engine.kind is {cfg.kind!r} but no model was found: put an instruct GGUF in "
            "models/ or set engine.model_path (see models/README.md)"
        )
    return engine


def describe_engines(config: Config | EngineConfig) -> list[dict[str, Any]]:
    """Which implementation serves each model task under ``config`` (for ``localmem doctor``).

    Never raises for a bad model: the problem is reported in the ``problem`` field and the
    tasks fall back to what serves without an engine. Does not load model weights.

    Returns:
        One dict per task: ``task``, ``version``, ``served_by`` (an engine name such as
        ``llama:qwen2.5-1.5b-instruct-q4_k_m``, ``model-free`` or ``unavailable``), ``ok``
        (False when a configured engine cannot be built, or its model host crashed or is
        unhealthy), ``engine`` (one line for a person), ``model_free`` (whether a model-free
        implementation exists), ``engine_info`` (the engine's
        :meth:`~localmem.llm.base.Engine.describe`, or None), ``problem`` and ``state`` (the
        model host's: ``idle``, ``running``, ``crashed``, ``unhealthy``; None without one).
    """
    from localmem.llm.tasks import all_tasks

    problem = None
    try:
        engine = make_engine(config, strict=True)
    except LocalMemError as exc:
        engine, problem = None, str(exc)
    info = engine.describe() if engine else None
    host = (info or {}).get("host") or {}
    state = host.get("state")
    if state in ("crashed", "unhealthy") and problem is None:
        problem = f"model host {state}: {host.get('reason')}"
    rows = []
    for spec in all_tasks():
        if engine is not None:
            served, line = engine.name, _engine_line(info or {})
        elif spec.model_free is not None:
            served, line = "model-free", "model-free (no model configured or found)"
        else:
            served = "unavailable"
            line = "unavailable without a model: no model-free implementation yet"
        if problem:
            line = f"{line}; engine problem: {problem}"
        rows.append(
            {
                "task": spec.name,
                "version": spec.version,
                "served_by": served,
                "ok": problem is None,
                "engine": line,
                "model_free": spec.model_free is not None,
                "engine_info": info,
                "problem": problem,
                "state": state,
            }
        )
    return rows


def _engine_line(info: dict[str, Any]) -> str:
    if info.get("kind") == "llama":
        return (
            f"{info['name']} ({info.get('architecture')}, {info.get('quantization')}, "
            f"context {info.get('context_window')})"
        )
    if info.get("kind") == "http":
        return f"{info['name']} at {info.get('url')}"
    return str(info.get("name", info))
