"""Miners: turn a text (a memory or a query) into attributes.

Two implementations behind one interface (:class:`~localmem.attributes.mined.Miner`):

- :class:`~localmem.attributes.modelfree.ModelFreeMiner`: key phrases and zero-shot labels,
  no model;
- :class:`EngineMiner`: the ``attributes`` task of the model engine (llama.cpp or an HTTP
  server): the prompt, a JSON schema whose intent and topic are limited to the label set,
  validation and one retry in the engine; what it returns is normalised the same way.

:func:`miner_for` picks one from the config and keeps it per open store (its kernel): label
embeddings, phrase embeddings and mined queries are cached inside it.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from localmem.attributes import task
from localmem.attributes.labels import LabelSet, label_set_for
from localmem.attributes.mined import MODEL_FREE, Attribute, Mined, Miner, prioritise
from localmem.attributes.modelfree import _LRU, ModelFreeMiner
from localmem.attributes.normalise import display_value, entity_terms, merged_aliases
from localmem.config import AttributeConfig
from localmem.errors import (
    EngineCrashedError,
    EngineUnavailableError,
    InputError,
    SchemaError,
)
from localmem.store.kernel import HasKernel, Kernel, kernel_of

if TYPE_CHECKING:
    from localmem.llm.base import Usage

log = logging.getLogger("localmem.attributes")


# -- model engine ------------------------------------------------------------------------------
ENGINE_ATTEMPTS = 2
"""Calls a text gets when the engine was asked for explicitly and its host died during the
call: the second runs in a fresh host; then the error stands (a job fails, and is not run
again until ``localmem jobs retry``), so a text that kills the model cannot make a crash loop."""


class EngineMiner:
    """The ``attributes`` task of the model engine, normalised like the model-free miner.

    Args:
        engine: The model engine.
        labels: The label set.
        config: The attribute settings.
        fallback: The miner of a text the engine cannot serve (its host crashed, hung or is
            unhealthy) when the miner is ``auto``; None when the engine was asked for
            explicitly: then a crash is retried once (:data:`ENGINE_ATTEMPTS`) and raised.
    """

    def __init__(
        self, engine, labels: LabelSet, config: AttributeConfig, *, fallback: Miner | None = None
    ) -> None:
        self.engine = engine
        self.labels = labels
        self.config = config
        self.fallback = fallback
        self.aliases = merged_aliases(config.aliases)
        self.name = str(getattr(engine, "name", "engine"))
        self._queries = _LRU(config.query_cache_size)
        self.last_usage: Usage | None = None

    def prepare(self, texts: Sequence[str]) -> None:
        """Nothing to batch: each text is one model call."""

    def prepared(self, text: str) -> bool:
        return True

    def mine(self, text: str, *, vector: np.ndarray | None = None, query: bool = False) -> Mined:
        """Mine with the engine; see the class for what happens when it cannot serve."""
        if query:
            cached = self._queries.get(text)
            if cached is not None:
                return cached
        try:
            mined = self._with_retry(text, query)
        except EngineUnavailableError as exc:
            if self.fallback is None:
                raise
            log.warning("attribute mining: %s; this text is mined model-free", exc)
            return self.fallback.mine(text, vector=vector, query=query)
        if query:
            self._queries.put(text, mined)
        return mined

    def _with_retry(self, text: str, query: bool) -> Mined:
        tries = 0
        while True:
            try:
                return self._mine(text, query)
            except EngineCrashedError as exc:
                if self.fallback is not None:
                    raise
                tries += exc.in_flight  # a call refused during a back-off did not run
                if tries >= ENGINE_ATTEMPTS:
                    raise
                time.sleep(exc.retry_after)

    def _mine(self, text: str, query: bool) -> Mined:
        from localmem.llm.tasks import run_task

        result = run_task(
            task.SPEC,
            {
                "text": text,
                "is_query": query,
                "intents": self.labels.names("intent"),
                "topics": self.labels.names("topic"),
                "descriptions": {
                    x.name: x.description for x in (*self.labels.intents, *self.labels.topics)
                },
            },
            engine=self.engine,
            implementation="model",
            max_tokens=self.config.max_tokens,
        )
        self.last_usage = result.usage
        return from_model_output(
            result.value, self.labels, miner=result.served_by, aliases=self.aliases
        )


def from_model_output(value: Any, labels: LabelSet, *, miner: str, aliases) -> Mined:
    """A model's answer (entities, intent, topic, priority) as normalised attributes.

    Raises:
        SchemaError: the intent or topic is not a label of the set, or no entity survives
            normalisation (the engine's schema should prevent both; this guards a server that
            ignores the schema).
    """
    data = value.model_dump() if hasattr(value, "model_dump") else dict(value)
    attrs: list[Attribute] = []
    seen: set[str] = set()
    for phrase in data.get("entities") or []:
        shown = display_value(str(phrase), aliases)
        if shown and shown not in seen:
            seen.add(shown)
            rank = len([a for a in attrs if a.axis == "entities"])
            attrs.append(
                Attribute("entities", shown, rank, 1.0, None, entity_terms(shown, aliases))
            )
    for axis in ("intent", "topic"):
        label = str(data.get(axis, "")).strip().lower()
        if label not in labels.names(axis):
            raise SchemaError(
                f"model answered {axis}={label!r}, not one of {', '.join(labels.names(axis))}"
            )
        attrs.append(Attribute(axis, label, 0, 1.0))
    # priority: the values the model listed, in its order; then the rest in axis order
    wanted = [display_value(str(p), aliases) for p in data.get("priority") or []]
    importance = []
    for a in attrs:
        hits = [i for i, w in enumerate(wanted) if w in (a.value, display_value(a.value, aliases))]
        importance.append(-float(hits[0]) if hits else -float(len(wanted) + a.rank))
    return Mined(prioritise(attrs, importance), miner, labels.name)


# -- choosing a miner --------------------------------------------------------------------------
MINERS = ("auto", MODEL_FREE, "engine")
_PER_STORE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PER_STORE_LOCK = threading.Lock()


def _engine_of(kernel: Kernel):
    try:
        return kernel.engine
    except ImportError:  # a build without the model engine package
        return None


def miner_for(store: Kernel | HasKernel, which: str | None = None) -> Miner:
    """The miner the store's config (or ``which``) asks for, kept while the store is open.

    Args:
        store: the open store (its kernel, or the Memory carrying it).
        which: ``auto`` (the engine when one is configured, else model-free), ``model-free``
            or ``engine``; default: ``config.attributes.miner``.

    Raises:
        InputError: an unknown miner name.
        EngineUnavailableError: ``engine`` was asked for and no model is configured.
    """
    kernel = kernel_of(store)
    cfg = kernel.config.attributes
    which = which or cfg.miner
    if which not in MINERS:
        raise InputError(f"miner must be one of {', '.join(MINERS)}, not {which!r}")
    engine = _engine_of(kernel) if which != MODEL_FREE else None
    if which == "engine" and engine is None:
        raise EngineUnavailableError(
            "attribute mining was asked to use a model but no engine is configured "
            "(put an instruct GGUF in models/ or set engine.model_path), or use miner=model-free"
        )
    kind = which if engine is not None else MODEL_FREE  # auto and engine differ on a crash
    with _PER_STORE_LOCK:
        miners = _PER_STORE.setdefault(kernel, {})
        miner = miners.get(kind)
        if miner is None:
            labels = label_set_for(cfg)
            model_free = miners.get(MODEL_FREE)
            if model_free is None:
                model_free = miners[MODEL_FREE] = ModelFreeMiner(kernel.embedder, labels, cfg)
            if kind == MODEL_FREE:
                miner = model_free
            else:  # auto falls back to the model-free miner for a text the engine cannot serve
                fallback = model_free if kind == "auto" else None
                miner = EngineMiner(engine, labels, cfg, fallback=fallback)
            miners[kind] = miner
    return miner
