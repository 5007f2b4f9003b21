"""Reranking: a second, closer look at the best candidates.

- ``engine``: the model scores the relevance (0..1) of the best ``rerank_depth`` candidates
  to the query, ``rerank_batch`` memories per call (the ``rerank`` task); they are resorted by
  that score, the rest stay below them in their order.
- ``model-free``: a linear model over the evidence in :mod:`localmem.retrieval.features`
  (lexical, dense, neighbouring context, session, speaker, length, temporal, attribute, link).
  Its weights ship in ``reranker.json``: trained with ``scripts/train_reranker.py`` (logistic
  regression) on LoCoMo; docs/benchmarks.md (section ``locomo-reranker``) reports them with
  leave-one-conversation-out results.
- ``auto``: the engine when one is configured, else model-free.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from localmem.errors import InputError
from localmem.retrieval.context import Candidate, SearchContext
from localmem.retrieval.features import feature_matrix
from localmem.retrieval.joining import scored_pool

WEIGHTS_FILE = Path(__file__).with_name("reranker.json")
#: weights fitted on another embedder's vectors (its dense features mean other things), by the
#: name a store records for its vectors; any other embedder takes WEIGHTS_FILE (fitted on MiniLM)
WEIGHTS_BY_EMBEDDER = {
    "multilingual-e5-small+q4": Path(__file__).with_name("reranker-e5.json"),
}


def weights_for(embedder_name: str) -> Path:
    """The shipped weights for vectors made by ``embedder_name``."""
    return WEIGHTS_BY_EMBEDDER.get(embedder_name, WEIGHTS_FILE)


@dataclass(frozen=True)
class LinearReranker:
    """``score = sum(weight[f] * feature[f])`` over named features."""

    weights: dict[str, float]
    source: str = ""

    @cached_property
    def file_name(self) -> str:
        """The name of the file its weights came from (reported with each search)."""
        return Path(self.source).name

    @property
    def names(self) -> list[str]:
        """The features it reads, in a fixed order."""
        return list(self.weights)

    @cached_property
    def _vector(self) -> np.ndarray:
        """The weights in the order of :attr:`names` (made once per loaded reranker)."""
        return np.array([self.weights[n] for n in self.names], dtype=np.float64)

    def score(self, matrix: np.ndarray) -> np.ndarray:
        """Scores for rows of :func:`feature_matrix` built with :attr:`names`."""
        return matrix @ self._vector


@lru_cache(maxsize=8)
def load_reranker(path: str | None = None) -> LinearReranker:
    """The reranker weights in a JSON file (``{"weights": {feature: weight}}``)."""
    file = Path(path).expanduser() if path else WEIGHTS_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        weights = {str(k): float(v) for k, v in data["weights"].items()}
    except FileNotFoundError:
        raise InputError(f"reranker weights not found: {file}") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"reranker weights {file} are not readable: {exc}") from None
    from localmem.retrieval.features import FEATURES

    unknown = sorted(set(weights) - set(FEATURES))
    if unknown:
        raise InputError(f"reranker weights {file} name unknown features: {', '.join(unknown)}")
    return LinearReranker(weights, str(file))


def rerank_stage(ctx: SearchContext) -> dict | None:
    """Rescore the best candidates (the stage ``rerank``)."""
    mode = ctx.options.rerank
    if mode == "off":
        return None
    if mode == "auto":
        mode = "engine" if ctx.kernel.engine is not None else "model-free"
    if not ctx.candidates:
        return {"implementation": mode}
    if mode == "engine":
        return _engine_rerank(ctx)
    return _model_free_rerank(ctx)


def _reorder(ctx: SearchContext, scored: list[tuple[Candidate, float]]) -> None:
    """Give the scored candidates their new scores; the others follow, in their old order."""
    rest = ctx.ranked(leaving_out={c.label for c, _ in scored})  # before the scores change
    for cand, value in scored:
        cand.score = float(value)
    floor = min((v for _, v in scored), default=0.0)
    for i, cand in enumerate(rest, start=1):
        cand.score = floor - 1.0 - i * 1e-6


def _model_free_rerank(ctx: SearchContext) -> dict:
    cfg = ctx.kernel.config.search
    model = load_reranker(cfg.reranker_weights or str(weights_for(ctx.kernel.embedder.name)))
    pool, joined = scored_pool(ctx)
    scores = model.score(feature_matrix(pool, model.names))
    scored = list(zip(pool.cands, scores.tolist(), strict=True))
    _reorder(ctx, scored)
    for cand, value in scored:
        cand.evidence["rerank"] = float(value)
    return {
        "implementation": "model-free",
        "scored": len(pool.cands),
        "joined": joined,
        "weights": model.file_name,
    }


def _engine_rerank(ctx: SearchContext) -> dict:
    from localmem.llm.schema import MemoryLine
    from localmem.llm.tasks import run_task  # the model stack loads only when used
    from localmem.retrieval.tasks.rerank import SPEC as RERANK

    cfg = ctx.kernel.config.search
    top = ctx.ranked()[: cfg.rerank_depth]
    items = ctx.items([c.label for c in top])
    top = [c for c in top if c.label in items]
    scored: list[tuple[Candidate, float]] = []
    served, tokens, calls = "", 0, 0
    for start in range(0, len(top), cfg.rerank_batch):
        batch = top[start : start + cfg.rerank_batch]
        lines = tuple(
            MemoryLine(
                text=items[c.label].text_for_embedding[:2000],
                time=items[c.label].when.date().isoformat(),
            )
            for c in batch
        )
        result = run_task(
            RERANK,
            {"query": ctx.query, "memories": lines},
            engine=ctx.kernel.engine,
            implementation="model",
        )
        served = result.served_by
        tokens += result.usage.prompt_tokens + result.usage.completion_tokens
        calls += 1
        relevance = result.value.by_memory(len(batch))
        for cand, rel in zip(batch, relevance, strict=True):
            # unscored memories keep a neutral relevance
            scored.append((cand, 0.5 if rel is None else float(rel)))
    # retrieval order breaks ties in the ranking; the evidence shows the model's relevance
    # itself (with the tie-break in it, a relevance of 0 read as a negative number)
    _reorder(ctx, [(c, v - i * 1e-6) for i, (c, v) in enumerate(scored)])
    for cand, value in scored:
        cand.evidence["rerank"] = value
    return {
        "implementation": served or "engine",
        "scored": len(scored),
        "calls": calls,
        "tokens": tokens,
    }
