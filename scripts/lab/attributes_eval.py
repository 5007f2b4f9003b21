"""Scoring model-free attributes on the hand-labelled memories of issue 35.

``scripts/lab/data/attributes/{dev,heldout}.json``: 100 memories (chat turns with a speaker,
notes about code and work, document chunks), each with its acceptable topics, its intent and
whether it is a personal chat line. Measured (:func:`score`):

- topic accuracy where a topic is given: the main topic is one of the acceptable ones;
- topic coverage: the share of memories given a topic (the rest abstained);
- software topics on personal chat lines (should be 0);
- the same accuracy and coverage for intent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SOFTWARE_TOPICS = frozenset(
    {"performance", "security", "architecture", "data", "testing", "deployment"}
)


def load(half: str) -> list[dict[str, Any]]:
    """The labelled memories of one half (``dev`` or ``heldout``)."""
    return json.loads((HERE / "data/attributes" / f"{half}.json").read_text())["memories"]


def text_of(memory: dict[str, Any]) -> str:
    """The memory as it is stored: a chat turn with its speaker ("Maya: ...")."""
    return f"{memory['speaker']}: {memory['text']}" if memory.get("speaker") else memory["text"]


@dataclass(frozen=True)
class Prediction:
    """What the miner said about one memory, and how clear its best labels were."""

    topic: str | None
    intent: str | None
    topic_margin: float
    intent_margin: float
    part: str | None


def predict(miner, memories: Sequence[dict[str, Any]]) -> list[Prediction]:
    """Mine every memory (its main topic and intent) with the margins the abstention reads."""
    texts = [text_of(m) for m in memories]
    # one at a time, as an add embeds it: the int8 embedder's vectors shift a little with the
    # batch they are embedded in (its activations are quantised per batch)
    vectors = [miner.embedder.embed_batch([t])[0] for t in texts]
    out = []
    for text, vec in zip(texts, vectors, strict=True):
        mined = miner.mine(text, vector=vec)
        part = miner.part(vec, text) if hasattr(miner, "part") else None
        margins = {}
        for axis in ("topic", "intent"):
            scores = miner.label_scores(axis, vec, text)
            scores = np.where(miner.allowed(axis, part), scores, -np.inf)
            top = np.sort(scores[np.isfinite(scores)])[::-1]
            margins[axis] = float(top[0] - top[1]) if len(top) > 1 else 1.0
        out.append(
            Prediction(
                mined.first("topic"),
                mined.first("intent"),
                margins["topic"],
                margins["intent"],
                part,
            )
        )
    return out


def score(memories: Sequence[dict[str, Any]], preds: Sequence[Prediction]) -> dict[str, float]:
    """The metrics of the module docstring."""
    given = [(m, p) for m, p in zip(memories, preds, strict=True) if p.topic is not None]
    right = sum(p.topic in m["topics"] for m, p in given)
    intents = [(m, p) for m, p in zip(memories, preds, strict=True) if p.intent is not None]
    personal = [(m, p) for m, p in zip(memories, preds, strict=True) if m["personal"]]
    return {
        "memories": len(memories),
        "topic given": len(given) / len(memories),
        "topic accuracy (given)": right / len(given) if given else 0.0,
        "software topic on personal chat": sum(p.topic in SOFTWARE_TOPICS for _, p in personal),
        "intent given": len(intents) / len(memories),
        "intent accuracy (given)": (
            sum(p.intent == m["intent"] for m, p in intents) / len(intents) if intents else 0.0
        ),
    }
