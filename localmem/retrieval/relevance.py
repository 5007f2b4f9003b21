"""One relevance for a hit: the chance, from 0 to 1, that it is what the query asked for.

A hit's ranking score is the last stage's number (a fused z-score, the reranker's linear
score, the exact-match stage's whole-number lift): it orders the hits of one search and means
nothing across searches or stores. The relevance is calibrated instead: a logistic model over
signals a store cannot shift (the query's cosine with the memory, the share of the query's
term weight the memory holds, a verbatim match, and the reranker's score when it ran), fitted
on labelled queries of several data shapes so that "0.7" means about seven in ten such hits
are relevant on any store. ``scripts/calibrate_relevance.py`` fits it on dev data and writes
``relevance.json`` (the model and its calibration on held-out shapes; docs/benchmarks.md,
section ``relevance``).

The stage ``relevance`` runs last but one (before packing): it scores the best ``k``
candidates, records the signals in their evidence, and leaves out those below the search's
``min_relevance`` (the floor an agent or a person sets; none by default).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from localmem.errors import InputError
from localmem.retrieval.context import Candidate, SearchContext
from localmem.retrieval.features import coverage, index_terms
from localmem.store.columns import MemoryColumns

#: fitted on MiniLM's cosines; a store with another embedder names its own calibration in
#: ``search.relevance_calibration`` (scripts/calibrate_relevance.py --embedder fits one)
CALIBRATION_FILE = Path(__file__).with_name("relevance.json")
#: the relevance floor for an agent (MCP): a hit below it is left out unless asked for. On the
#: held-out halves of every data shape (default pipeline) 0.05 keeps 98.8% of the relevant hits
#: and drops 1.7% of the others; 0.1 keeps 96% and drops 12%, but a long markdown chunk that
#: answers the query scored 0.051 in a hand test (its cosine is diluted by its other topics),
#: so the default is the safe one: it removes what is clearly unrelated, not a precision filter
#: (docs/benchmarks.md, section relevance)
DEFAULT_MIN_RELEVANCE = 0.05
#: the signals a calibration may read, each computed for the hits of a search
SIGNALS = ("cosine", "coverage", "exact", "rerank", "lexical")


@dataclass(frozen=True)
class Calibration:
    """``relevance = sigmoid(bias + sum(weight[s] * signal[s]))``, one model for searches that
    ran the model-free reranker and one for those that did not (its score is then missing)."""

    reranked: tuple[dict[str, float], float]
    plain: tuple[dict[str, float], float]
    source: str = ""

    def relevance(self, signals: dict[str, float], *, reranked: bool) -> float:
        """The calibrated relevance of one hit's signals (pure)."""
        weights, bias = self.reranked if reranked else self.plain
        z = bias + sum(w * float(signals.get(name, 0.0)) for name, w in weights.items())
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


@lru_cache(maxsize=8)
def load_calibration(path: str | None = None) -> Calibration:
    """A calibration file (``{"models": {"reranked": {"weights", "bias"}, "plain": ...}}``)."""
    file = Path(path).expanduser() if path else CALIBRATION_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        models = {
            name: (
                {str(k): float(v) for k, v in data["models"][name]["weights"].items()},
                float(data["models"][name]["bias"]),
            )
            for name in ("reranked", "plain")
        }
    except FileNotFoundError:
        raise InputError(f"relevance calibration not found: {file}") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"relevance calibration {file} is not readable: {exc}") from None
    unknown = sorted({n for weights, _ in models.values() for n in weights} - set(SIGNALS))
    if unknown:
        raise InputError(f"relevance calibration {file} names unknown signals: {unknown}")
    return Calibration(models["reranked"], models["plain"], str(file))


def cosines(ctx: SearchContext, labels: list[int]) -> np.ndarray:
    """The query's cosine with each memory (known from the dense search, else computed from the
    stored vectors; a lexical-only search embeds the query here)."""
    out = np.array([ctx.cosines.get(label, np.nan) for label in labels], dtype=np.float64)
    missing = np.flatnonzero(np.isnan(out))
    if len(missing):
        vectors = ctx.label_vectors([labels[i] for i in missing]).astype(np.float64)
        out[missing] = vectors @ np.asarray(ctx.vector(ctx.query), dtype=np.float64)
    return out


def signals(ctx: SearchContext, cands: list[Candidate]) -> list[dict[str, float]]:
    """Every signal of :data:`SIGNALS` for each candidate, in their order."""
    labels = [c.label for c in cands]
    items = ctx.items(labels)
    found = [items[x] for x in labels if x in items]
    cover = np.zeros(len(labels))  # a memory gone holds nothing
    at = {x: i for i, x in enumerate(labels)}
    held = index_terms(ctx, MemoryColumns.of_items(found))
    cover[[at[item.label] for item in found]] = coverage(ctx, held)
    cos = cosines(ctx, labels)
    out = []
    for i, cand in enumerate(cands):
        row = {
            "cosine": float(cos[i]),
            "coverage": float(cover[i]),
            "exact": 1.0 if "exact" in cand.flags else 0.0,
            "lexical": 1.0 if "bm25" in cand.evidence else 0.0,
        }
        if "rerank" in cand.evidence:
            row["rerank"] = float(cand.evidence["rerank"])
        out.append(row)
    return out


def hit_signals(ctx: SearchContext, top: list[Candidate]) -> tuple[list[dict[str, float]], bool]:
    """The signals of the hits ``top`` and whether the model-free reranker scored them (what
    the calibration reads; ``scripts/calibrate_relevance.py`` collects them the same way)."""
    reranked = any(r.stage == "rerank" and r.implementation == "model-free" for r in ctx.reports)
    rows = signals(ctx, top)
    if reranked:
        for cand, row in zip(top, rows, strict=True):
            row.setdefault("rerank", cand.score)  # below the reranker's pool: its floor score
    return rows, reranked


def relevance_stage(ctx: SearchContext) -> dict:
    """Give the best ``k`` candidates their relevance; leave out those below the floor."""
    k, floor = ctx.options.k, ctx.options.min_relevance
    top = ctx.ranked()[:k]
    if floor is not None:  # a candidate past k must not move up without its relevance
        ctx.keep_top(k)
    model = load_calibration(ctx.kernel.config.search.relevance_calibration)
    rows, reranked = hit_signals(ctx, top)
    dropped = 0
    for cand, row in zip(top, rows, strict=True):
        for name in ("cosine", "coverage"):
            cand.evidence[name] = row[name]
        ctx.relevance[cand.label] = value = model.relevance(row, reranked=reranked)
        if floor is not None and value < floor:
            del ctx.candidates[cand.label]
            dropped += 1
    notes: dict = {"calibration": Path(model.source).name, "scored": len(top)}
    if floor is not None:
        notes.update(floor=floor, below_floor=dropped)
    return notes
