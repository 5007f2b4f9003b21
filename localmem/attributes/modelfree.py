"""The model-free miner: entities by key phrases ranked with the embedder, intent and topic by
zero-shot similarity to label descriptions, priority from the scores.

No model, deterministic, a few milliseconds per text once the phrase embeddings are batched.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from localmem.attributes.labels import LabelSet, cue_hits, cue_text
from localmem.attributes.mined import MODEL_FREE, Attribute, Mined, prioritise
from localmem.attributes.normalise import merged_aliases, overlap
from localmem.attributes.phrases import candidates
from localmem.config import AttributeConfig

#: candidates embedded per text (the rest are ranked out by statistics alone)
PHRASES_PER_TEXT = 8
#: zero-shot labels: bonus per keyword cue found in the text, and most cues counted
CUE_WEIGHT = 0.08
MAX_CUES = 2
#: an entity sharing this much of its terms with a chosen one says the same thing
REDUNDANT_OVERLAP = 0.6
#: two candidate entities this similar are the same thing said twice
DUPLICATE_SIM = 0.85
#: a label is given only when its score beats the runner-up's by this much; below, the axis
#: stays empty (the miner abstains rather than guess). Calibrated on the dev half of the
#: hand-labelled memories (scripts/lab/data/attributes/dev.json) by scripts/calibrate_attributes.py
ABSTAIN_MARGIN = {"intent": 0.1, "topic": 0.035}
#: a memory is about software (or about life) when its best topic of that part beats the
#: other part's best by this much; closer, both parts stay open
PART_MARGIN = 0.0


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
        part = self.part(vector, text)
        for axis in ("intent", "topic"):
            for attr in self._classify(axis, vector, text, part):
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

    def part(self, vector: np.ndarray, text: str) -> str | None:
        """Which part of a grouped label set fits a text: ``life``, ``software`` or None
        (both, or a set without parts): the part whose best topic scores higher by at least
        :data:`PART_MARGIN`."""
        if not self.labels.grouped:
            return None
        scores = self.label_scores("topic", vector, text)
        groups = [x.group for x in self.labels.topics]
        best = {
            g: max((s for s, gg in zip(scores, groups, strict=True) if gg == g), default=-1.0)
            for g in ("life", "software")
        }
        if best["software"] - best["life"] > PART_MARGIN:
            return "software"
        if best["life"] - best["software"] > PART_MARGIN:
            return "life"
        return None

    def allowed(self, axis: str, part: str | None) -> np.ndarray:
        """Which labels of an axis a text of ``part`` may get (all, without a part)."""
        groups = [x.group for x in self.labels.axis(axis)]
        if part is None:
            return np.ones(len(groups), bool)
        return np.array([g in (part, "work", "any", "") for g in groups])

    def _classify(
        self, axis: str, vector: np.ndarray, text: str, part: str | None = None
    ) -> list[Attribute]:
        scores = self.label_scores(axis, vector, text)
        scores = np.where(self.allowed(axis, part), scores, -np.inf)
        z = (scores - scores.max()) / self.config.temperature
        probs = np.exp(z) / np.exp(z).sum()
        names = self.index[axis].names
        order = sorted(range(len(names)), key=lambda i: (-probs[i], i))
        first, second = order[0], order[1]
        if scores[first] - scores[second] < ABSTAIN_MARGIN.get(axis, 0.0):
            return []  # no label clearly better than the rest: say nothing
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
