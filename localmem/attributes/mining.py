"""Miners: turn a text (a memory or a query) into attributes.

Two implementations behind one interface (:class:`Miner`):

- :class:`ModelFreeMiner`: entities by key-phrase extraction ranked with the embedder, intent
  and topic by zero-shot similarity to the label descriptions, priority from the scores. No model,
  deterministic, a few milliseconds per text once the phrase embeddings are batched.
- :class:`EngineMiner`: the ``attributes`` task of the model engine (llama.cpp or an HTTP
  server): the prompt, a JSON schema whose intent and topic are limited to the label set,
  validation and one retry in the engine; what it returns is normalised the same way.

:func:`miner_for` picks one from the config and keeps it per :class:`~localmem.memory.Memory`
(label embeddings, phrase embeddings and mined queries are cached inside it).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from localmem.attributes.labels import LabelSet, cue_hits, cue_text, label_set_for
from localmem.attributes.normalise import display_value, entity_terms, merged_aliases, overlap
from localmem.attributes.phrases import candidates
from localmem.config import AttributeConfig
from localmem.errors import EngineUnavailableError, InputError, SchemaError

if TYPE_CHECKING:
    from localmem.memory import Memory

MODEL_FREE = "model-free"
#: candidates embedded per text (the rest are ranked out by statistics alone)
PHRASES_PER_TEXT = 8
#: zero-shot labels: bonus per keyword cue found in the text, and most cues counted
CUE_WEIGHT = 0.08
MAX_CUES = 2
#: an entity sharing this much of its terms with a chosen one says the same thing
REDUNDANT_OVERLAP = 0.6
#: two candidate entities this similar are the same thing said twice
DUPLICATE_SIM = 0.85


@dataclass(frozen=True)
class Attribute:
    """One mined attribute.

    Attributes:
        axis: ``entities``, ``intent`` or ``topic``.
        value: the canonical value (an entity's normalised form, or a label name).
        rank: position within its axis (0 = the main intent/topic, the best entity).
        score: confidence in 0..1 (entities: relevance to the text).
        priority: position in the text's priority ranking over all axes (0 = most important).
        terms: an entity's stems (what entity matching compares); empty for labels.
    """

    axis: str
    value: str
    rank: int
    score: float
    priority: int | None = None
    terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mined:
    """The attributes of one text and how they were obtained."""

    attributes: tuple[Attribute, ...]
    miner: str
    label_set: str

    def axis(self, name: str) -> list[Attribute]:
        """The attributes of one axis, by rank."""
        return sorted((a for a in self.attributes if a.axis == name), key=lambda a: a.rank)

    def first(self, name: str) -> str | None:
        """The main value of an axis (None when there is none)."""
        values = self.axis(name)
        return values[0].value if values else None

    @property
    def priority(self) -> list[Attribute]:
        """The ranked attributes, most important first."""
        ranked = [a for a in self.attributes if a.priority is not None]
        return sorted(ranked, key=lambda a: a.priority)

    def summary(self) -> str:
        """One line: ``entities=redis, rate limiter; intent=design; topic=performance``."""
        parts = []
        for axis in ("entities", "intent", "topic"):
            values = [a.value for a in self.axis(axis)]
            if values:
                parts.append(f"{axis}={', '.join(values)}")
        return "; ".join(parts)


class Miner(Protocol):
    """What the job handler and the search stage need from a miner."""

    name: str
    labels: LabelSet

    def mine(self, text: str, *, vector: np.ndarray | None = None, query: bool = False) -> Mined:
        """The attributes of one text (``vector``: its embedding, when already known)."""
        ...

    def prepare(self, texts: Sequence[str]) -> None:
        """A hint that these texts come next (lets a miner batch work); may do nothing."""
        ...

    def prepared(self, text: str) -> bool:
        """Whether :meth:`prepare` has seen this text (True when there is nothing to prepare)."""
        ...


def prioritise(attributes: list[Attribute], importance: list[float]) -> tuple[Attribute, ...]:
    """Attributes with their priority positions: by importance, ties by axis order and rank."""
    order = sorted(
        range(len(attributes)),
        key=lambda i: (-importance[i], _AXIS_ORDER[attributes[i].axis], attributes[i].rank),
    )
    out = list(attributes)
    for position, i in enumerate(order):
        a = attributes[i]
        out[i] = Attribute(a.axis, a.value, a.rank, a.score, position, a.terms)
    return tuple(out)


_AXIS_ORDER = {"entities": 0, "topic": 1, "intent": 2}


# -- model-free --------------------------------------------------------------------------------
class _LRU:
    """A small thread-safe LRU dict."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        if self.size <= 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __contains__(self, key: Any) -> bool:
        with self._lock:
            return key in self._data


@dataclass(frozen=True)
class _AxisIndex:
    """The embeddings of one axis's labels, computed once per label set and embedder."""

    names: tuple[str, ...]
    centroids: np.ndarray  # (labels, dim): mean of the description and examples
    examples: list[np.ndarray]  # per label: (texts, dim)
    cues: tuple[tuple[str, ...], ...]


_LABEL_CACHE: dict[tuple[str, str], dict[str, _AxisIndex]] = {}
_LABEL_LOCK = threading.Lock()


def label_index(embedder, labels: LabelSet) -> dict[str, _AxisIndex]:
    """Label embeddings for ``labels`` (cached per embedder and label set)."""
    key = (embedder.name, labels.key)
    with _LABEL_LOCK:
        cached = _LABEL_CACHE.get(key)
    if cached is not None:
        return cached
    out = {}
    for axis in ("intent", "topic"):
        items = labels.axis(axis)
        texts = [[f"{x.name}: {x.description}", *x.examples] for x in items]
        flat = embedder.embed_batch([t for group in texts for t in group])
        examples, start = [], 0
        for group in texts:
            examples.append(flat[start : start + len(group)])
            start += len(group)
        centroids = np.stack([e.mean(axis=0) for e in examples])
        centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
        out[axis] = _AxisIndex(
            tuple(x.name for x in items), centroids, examples, tuple(x.cues for x in items)
        )
    with _LABEL_LOCK:
        _LABEL_CACHE[key] = out
    return out


class ModelFreeMiner:
    """Entities by key phrases, intent and topic by zero-shot similarity; no model."""

    name = MODEL_FREE

    def __init__(self, embedder, labels: LabelSet, config: AttributeConfig) -> None:
        self.embedder = embedder
        self.labels = labels
        self.config = config
        self.aliases = merged_aliases(config.aliases)
        self._index: dict[str, _AxisIndex] | None = None
        self._phrases = _LRU(50_000)  # phrase -> vector; phrases repeat across a corpus
        self._candidates = _LRU(4096)  # text -> its candidates (prepare, then mine)
        self._queries = _LRU(config.query_cache_size)

    @property
    def index(self) -> dict[str, _AxisIndex]:
        if self._index is None:
            self._index = label_index(self.embedder, self.labels)
        return self._index

    def candidates(self, text: str) -> list:
        """The entity candidates worth embedding for a text (cached)."""
        found = self._candidates.get(text)
        if found is None:
            found = candidates(text, aliases=self.aliases, limit=PHRASES_PER_TEXT)
            self._candidates.put(text, found)
        return found

    def prepared(self, text: str) -> bool:
        return text in self._candidates

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed the candidate phrases of many texts in one batch (they are cached)."""
        todo: dict[str, None] = {}
        for text in texts:
            if text in self._candidates:
                continue  # prepared already
            for c in self.candidates(text):
                if c.value not in self._phrases:
                    todo[c.value] = None
        if todo:
            vectors = self.embedder.embed_batch(list(todo))
            for phrase, vec in zip(todo, vectors, strict=True):
                self._phrases.put(phrase, vec)

    def _phrase_vectors(self, phrases: list[str]) -> np.ndarray:
        missing = [p for p in phrases if p not in self._phrases]
        if missing:
            for p, v in zip(missing, self.embedder.embed_batch(missing), strict=True):
                self._phrases.put(p, v)
        return np.stack([self._phrases.get(p) for p in phrases]) if phrases else np.zeros((0, 1))

    def mine(self, text: str, *, vector: np.ndarray | None = None, query: bool = False) -> Mined:
        if query:
            cached = self._queries.get(text)
            if cached is not None:
                return cached
        if vector is None:
            vector = (
                self.embedder.embed_query(text) if query else self.embedder.embed_batch([text])[0]
            )
        vector = np.asarray(vector, dtype=np.float32)
        entities, entity_importance = self._entities(text, vector)
        labels, label_importance = [], []
        for axis in ("intent", "topic"):
            for attr in self._classify(axis, vector, text):
                labels.append(attr)
                label_importance.append(attr.score)
        mined = Mined(
            prioritise(entities + labels, entity_importance + label_importance),
            self.name,
            self.labels.name,
        )
        if query:
            self._queries.put(text, mined)
        return mined

    def label_scores(self, axis: str, vector: np.ndarray, text: str) -> np.ndarray:
        """Similarity of a text to each label's centroid, plus a small bonus per keyword cue.

        The centroid is the mean embedding of the label's description and examples; cues
        matter most for intent, which is more about wording ("should", "in hindsight") than
        subject.
        """
        idx = self.index[axis]
        stemmed = cue_text(text)
        hits = np.array([min(cue_hits(c, stemmed), MAX_CUES) for c in idx.cues], np.float32)
        return idx.centroids @ vector + CUE_WEIGHT * hits

    def _classify(self, axis: str, vector: np.ndarray, text: str) -> list[Attribute]:
        scores = self.label_scores(axis, vector, text)
        z = (scores - scores.max()) / self.config.temperature
        probs = np.exp(z) / np.exp(z).sum()
        names = self.index[axis].names
        order = sorted(range(len(names)), key=lambda i: (-probs[i], i))
        first, second = order[0], order[1]
        out = [Attribute(axis, names[first], 0, round(float(probs[first]), 4))]
        if probs[second] >= self.config.secondary_ratio * probs[first]:
            out.append(Attribute(axis, names[second], 1, round(float(probs[second]), 4)))
        return out

    def _entities(self, text: str, vector: np.ndarray) -> tuple[list[Attribute], list[float]]:
        cands = self.candidates(text)
        if not cands:
            return [], []
        vecs = self._phrase_vectors([c.value for c in cands])
        sims = vecs @ vector
        scored = sorted(
            (
                (
                    float(sims[i])
                    + 0.04 * np.log2(1 + c.count)
                    + (0.06 if c.special else 0.0)
                    - 0.03 * (c.words - 1),  # long n-grams resemble the whole text too easily
                    i,
                )
                for i, c in enumerate(cands)
            ),
            key=lambda t: (-t[0], cands[t[1]].first, cands[t[1]].value),
        )
        top = scored[0][0]
        chosen: list[int] = []
        cfg = self.config
        for score, i in scored:
            if len(chosen) >= cfg.max_entities:
                break
            if len(chosen) >= cfg.min_entities and score < top - 0.15:
                break
            if any(
                overlap(cands[i].terms, cands[j].terms) >= REDUNDANT_OVERLAP
                or float(vecs[i] @ vecs[j]) > DUPLICATE_SIM
                for j in chosen
            ):
                continue
            chosen.append(i)
        entities, importance = [], []
        for rank, i in enumerate(chosen):
            score = float(np.clip(sims[i], 0.0, 1.0))
            entities.append(
                Attribute("entities", cands[i].value, rank, round(score, 4), None, cands[i].terms)
            )
            importance.append(score / max(float(sims[chosen[0]]), 1e-6))
        return entities, importance


# -- model engine ------------------------------------------------------------------------------
class EngineMiner:
    """The ``attributes`` task of the model engine, normalised like the model-free miner."""

    def __init__(self, engine, labels: LabelSet, config: AttributeConfig) -> None:
        self.engine = engine
        self.labels = labels
        self.config = config
        self.aliases = merged_aliases(config.aliases)
        self.name = str(getattr(engine, "name", "engine"))
        self._queries = _LRU(config.query_cache_size)
        self.last_usage = None

    def prepare(self, texts: Sequence[str]) -> None:
        """Nothing to batch: each text is one model call."""

    def prepared(self, text: str) -> bool:
        return True

    def mine(self, text: str, *, vector: np.ndarray | None = None, query: bool = False) -> Mined:
        if query:
            cached = self._queries.get(text)
            if cached is not None:
                return cached
        from localmem.llm.tasks import run_task

        result = run_task(
            "attributes",
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
        mined = from_model_output(
            result.value, self.labels, miner=result.served_by, aliases=self.aliases
        )
        if query:
            self._queries.put(text, mined)
        return mined


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
_PER_MEMORY: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PER_MEMORY_LOCK = threading.Lock()


def _engine_of(memory: Memory):
    try:
        return memory.engine
    except ImportError:  # a build without the model engine package
        return None


def miner_for(memory: Memory, which: str | None = None) -> Miner:
    """The miner the store's config (or ``which``) asks for, kept for the life of ``memory``.

    Args:
        memory: the store.
        which: ``auto`` (the engine when one is configured, else model-free), ``model-free``
            or ``engine``; default: ``config.attributes.miner``.

    Raises:
        InputError: an unknown miner name.
        EngineUnavailableError: ``engine`` was asked for and no model is configured.
    """
    cfg = memory.config.attributes
    which = which or cfg.miner
    if which not in MINERS:
        raise InputError(f"miner must be one of {', '.join(MINERS)}, not {which!r}")
    engine = _engine_of(memory) if which != MODEL_FREE else None
    if which == "engine" and engine is None:
        raise EngineUnavailableError(
            "attribute mining was asked to use a model but no engine is configured "
            "(put an instruct GGUF in models/ or set engine.model_path), or use miner=model-free"
        )
    kind = "engine" if engine is not None else MODEL_FREE
    with _PER_MEMORY_LOCK:
        miners = _PER_MEMORY.setdefault(memory, {})
        miner = miners.get(kind)
        if miner is None:
            labels = label_set_for(cfg)
            miner = (
                EngineMiner(engine, labels, cfg)
                if kind == "engine"
                else ModelFreeMiner(memory.embedder, labels, cfg)
            )
            miners[kind] = miner
    return miner
