"""Training the model-free reranker: logistic regression over the pipeline's own features.

Each question of a LoCoMo-shaped file gives one pool of candidates (the pipeline up to the
reranker, with the features it computes at search time); a candidate is positive when it is one
of the question's evidence turns. The weights are fitted by Newton's method on an L2-penalised,
class-balanced logistic loss, with every question counting the same.

Because the weights are fitted on the same kind of data they are measured on, the honest
number is leave-one-conversation-out: train on all conversations but one, rank the held-out
one, repeat; :func:`cross_validate` reports that next to the in-sample fit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from lab.locomo import Conversation, asked_at, ensure_ingested
from localmem.retrieval.context import Candidate
from localmem.retrieval.features import build_pool, feature_matrix
from localmem.retrieval.joining import scored_pool
from localmem.retrieval.pipeline import run_stages, start

if TYPE_CHECKING:
    from localmem.memory import Memory

KS = (1, 5, 10, 20)
#: the features the shipped weights use (every one the LoCoMo pipeline can fill; the
#: ablation in docs/benchmarks.md, section ``shapes-ablation``, says what each is worth).
#: ``coverage`` is in since the neighbour rule of 38b909d: before it, +.003 R@10 on LoCoMo and
#: -.02 to -.05 on every other shape; after it, +.005 / +.002 on LoCoMo (both forms), MemInsight
#: +.018, A-Mem +.004, agentmemory equal, notes -.008. The
#: memory's own BM25 (z and rank) is left out: with it every shape measured equal or
#: worse (A-Mem -.021, agentmemory one question, plain LoCoMo -.002), and ``context_bm25``
#: carries BM25. It was once kept for the demo's "sliding window rate limiter", whose answer
#: it lost to the thought beside it; the near-exact rule of the exact stage now keeps that one.
DEFAULT_FEATURES = [
    "dense",
    "dense_raw",
    "dense_rank",
    "context",
    "context_bm25",
    "session",
    "speaker",
    "other_speaker",
    "length",
    "time_stated",
    "time_close",
    "coverage",
]
#: the stages before the reranker when its pools are collected: the default pipeline's
PIPELINE: dict[str, Any] = {"mode": "hybrid", "expand": "off", "temporal": True}


def collect_features(
    memory: Memory, query: str, *, names: list[str], joined: bool = False, **options: Any
) -> tuple[list[Candidate], list[Any], np.ndarray]:
    """Run the store's pipeline up to the reranker and return its pool, their memories and
    features: the evidence the reranker sees at search time, for the best ``rerank_pool``
    candidates. ``joined``: the whole pool it scores, with the memories that join it (the
    neighbours and the time window, :func:`localmem.retrieval.joining.scored_pool`); the
    shipped weights are fitted without them, which ranks better (docs/architecture.md)."""
    ctx = start(memory.kernel, query, **options)
    run_stages(ctx, memory.stages, until="rerank")
    if joined:
        pool, _ = scored_pool(ctx)
    else:
        pool = build_pool(ctx, ctx.ranked()[: memory.config.search.rerank_pool])
    return pool.cands, pool.items, feature_matrix(pool, names)


@dataclass
class Example:
    """One question's pool: features, which candidates are evidence, its fused order."""

    sample_id: str
    category: int
    features: np.ndarray  # (pool, features)
    positive: np.ndarray  # (pool,) bool
    evidence: int  # evidence turns in total (some may be outside the pool)
    shape: str = "locomo"  # "locomo-plain" for turns stored as plain text
    weight: float = 1.0  # how much this question counts in the fit, against the others


def collect(
    memory: Memory,
    convs: Sequence[Conversation],
    names: list[str],
    options: dict[str, Any],
    *,
    progress: Callable[[str], None] | None = None,
    plain: bool = False,
    joined: bool = False,
) -> list[Example]:
    """Features of every scorable question (categories 1-4 with evidence); ``plain``: the
    store holds (or gets) the turns as plain text; ``joined``: as :func:`collect_features`."""
    out: list[Example] = []
    # every conversation first: features such as BM25's idf depend on the whole store, so a
    # question's features must not depend on which conversations happened to be stored yet
    for conv in convs:
        ensure_ingested(memory, conv, plain=plain)
    for conv in convs:
        now = asked_at(conv)
        for q in conv.questions:
            if q.category not in (1, 2, 3, 4) or not q.evidence:
                continue
            _, items, x = collect_features(
                memory,
                q.question,
                names=names,
                joined=joined,
                user_id=conv.sample_id,
                now=now,
                **options,
            )
            gold = set(q.evidence)
            pos = np.array([it.metadata.get("dia_id") in gold for it in items], dtype=bool)
            shape = "locomo-plain" if plain else "locomo"
            out.append(Example(conv.sample_id, q.category, x, pos, len(gold), shape))
        if progress:
            progress(f"features of {conv.sample_id}")
    return out


def fit(examples: Sequence[Example], *, l2: float = 1.0, iterations: int = 25) -> np.ndarray:
    """Weights (no intercept: it cannot change a ranking) of a balanced logistic regression.

    Within a question positives and negatives get equal total weight, and every question the
    same, so long pools or many-evidence questions do not dominate.
    """
    xs, ys, ws = [], [], []
    for ex in examples:
        n_pos, n_neg = int(ex.positive.sum()), int((~ex.positive).sum())
        if n_pos == 0 or n_neg == 0:
            continue
        xs.append(ex.features)
        ys.append(ex.positive.astype(np.float64))
        ws.append(ex.weight * np.where(ex.positive, 0.5 / n_pos, 0.5 / n_neg))
    if not xs:
        raise ValueError("no question has both evidence and other candidates in its pool")
    x, y, w = np.concatenate(xs), np.concatenate(ys), np.concatenate(ws)
    x = np.hstack([x, np.ones((len(x), 1))])  # intercept while fitting, dropped after
    beta = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - y)) + penalty * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(hess, grad)
        beta -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return beta[:-1]


def rank_metrics(examples: Sequence[Example], scores: Sequence[np.ndarray]) -> dict[str, Any]:
    """Recall@k, hit@k and MRR per category and overall for given pool scores."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for ex, s in zip(examples, scores, strict=True):
        order = np.argsort(-s, kind="stable")
        hits = ex.positive[order]
        row = {f"R@{k}": hits[:k].sum() / ex.evidence for k in KS}
        row.update({f"hit@{k}": float(hits[:k].any()) for k in KS})
        first = np.flatnonzero(hits)
        row["MRR"] = 1.0 / (first[0] + 1) if len(first) else 0.0
        groups[str(ex.category)].append(row)
        groups["overall"].append(row)
    return {
        g: {m: float(np.mean([r[m] for r in rows])) for m in rows[0]} | {"n": len(rows)}
        for g, rows in groups.items()
    }


def heldout_weights(
    examples: Sequence[Example], names: Sequence[str], *, l2: float = 1.0, with_all: bool = False
) -> dict[str, dict[str, float]]:
    """For each conversation, weights fitted on every *other* conversation (by sample id);
    ``with_all``: also ``"none"``, the weights fitted on all of them (what would ship)."""
    convs = sorted({ex.sample_id for ex in examples})
    if len(convs) < 2:
        raise ValueError("held-out weights need questions from at least two conversations")
    out = {}
    for held in ["none"] * with_all + convs:
        beta = fit([ex for ex in examples if ex.sample_id != held], l2=l2)
        out[held] = {n: float(b) for n, b in zip(names, beta, strict=True)}
    return out


def cross_validate(
    examples: Sequence[Example], *, l2: float = 1.0, score_on: Sequence[Example] | None = None
) -> dict[str, Any]:
    """Leave-one-conversation-out metrics, plus the weights of each fold. ``score_on``: the
    same questions with other pools to rank (fitted on ``examples``, scored on these)."""
    convs = sorted({ex.sample_id for ex in examples})
    scored: list[tuple[Example, np.ndarray]] = []
    folds = {}
    for held in convs:
        train = [ex for ex in examples if ex.sample_id != held]
        test = [ex for ex in (examples if score_on is None else score_on) if ex.sample_id == held]
        beta = fit(train, l2=l2)
        folds[held] = beta.tolist()
        scored += [(ex, ex.features @ beta) for ex in test]
    metrics = rank_metrics([e for e, _ in scored], [s for _, s in scored])
    return {"metrics": metrics, "folds": folds, "scored": scored}
