"""Query-level trust signals for the reranker: fit on LoCoMo dev + the notes training half,
measure on every shape from the rerank pools (issue 18).

    LOCALMEM_HOME=/tmp/r python scripts/fit_trust.py --work /tmp/shapes [--cache pools.pkl] \
        [--docs docs/benchmarks.md]

``--work`` is the folder of ``scripts/bench_shapes.py`` (its stores are reused). Every question
of every shape is run through the default pipeline up to the reranker once; its pool's
features, its raw cosines and BM25 scores and which candidates are relevant are kept
(``--cache``). Each variant is then a set of features, some of them products of a per-query
signal (below) with a per-memory feature, fitted as the shipped weights
are (balanced logistic regression) on LoCoMo dev in both forms plus the notes *training* half:

- LoCoMo: R@10 within the pool, each conversation ranked by weights fitted without it;
- notes: MRR on the held-out half of its people;
- agentmemory (MRR@3), MemInsight, A-Mem (MRR): never fitted on.

Scores are computed within the rerank pool (the search then lifts exact matches, which these
figures leave out); ``scripts/bench_shapes.py`` measures the chosen weights by searching.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from lab import reranker_training as training
from lab import shapes
from lab.locomo import asked_at, load_locomo
from lab.report import provenance, write_section

from localmem.memory import Memory
from localmem.retrieval import features as F
from localmem.retrieval.pipeline import run_stages, start
from localmem.store.maxscore import K1
from localmem.text import terms

BASE = [
    *training.DEFAULT_FEATURES,
    *(f for f in ("bm25", "bm25_rank", "coverage") if f not in training.DEFAULT_FEATURES),
]


# -- per-query signals: how far the pool lets the reranker trust each retriever -------------
# ``agreement``: share of the pool's ten best by cosine among its ten best by BM25;
# ``dense_top``: the best cosine; ``dense_gap``: it minus the mean of the ten best;
# ``lexical_cover``: the best BM25 as a share of the most the query's terms could give
# (their idf times k1 + 1). A constant per query cannot reorder a pool, so a variant uses
# products ``signal*feature``: a linear model over them can shift its trust with the signal.
TOP = 10  # the "best few" the signals compare


def _top(scores: np.ndarray, n: int = TOP) -> np.ndarray:
    return np.argsort(-scores, kind="stable")[:n]


def agreement(cosine: np.ndarray, bm25: np.ndarray) -> float:
    """Share of the ten best by cosine that are among the ten best by BM25 (pure)."""
    if len(cosine) == 0:
        return 0.0
    n = min(TOP, len(cosine))
    lexical = set(_top(bm25, n)[bm25[_top(bm25, n)] > 0].tolist())
    return len(set(_top(cosine, n).tolist()) & lexical) / n


def dense_top(cosine: np.ndarray) -> float:
    """The best cosine in the pool (pure)."""
    return float(cosine.max()) if len(cosine) else 0.0


def dense_gap(cosine: np.ndarray) -> float:
    """The best cosine minus the mean of the ten best (pure)."""
    if len(cosine) == 0:
        return 0.0
    best = np.sort(cosine)[::-1][:TOP]
    return float(best[0] - best.mean())


def lexical_cover(best_bm25: float, idfs: list[float]) -> float:
    """The best BM25 score as a share of the most the query's terms could give (pure)."""
    most = sum(idfs) * (K1 + 1)
    return float(min(best_bm25 / most, 1.0)) if most > 0 else 0.0


def query_idfs(lexical, query: str) -> list[float]:
    """The idf of each distinct term of the query, as the lexical index scores it."""
    stems = list(dict.fromkeys(terms(query)))
    n = max(lexical.doc_count, 1)
    df = lexical.document_frequencies(stems)
    return [float(np.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))) for t in stems if df.get(t)]


#: signal name -> function(cosine, bm25, idfs) -> one number for the query
SIGNALS: dict[str, Callable[[np.ndarray, np.ndarray, list[float]], float]] = {
    "agreement": lambda c, b, i: agreement(c, b),
    "disagreement": lambda c, b, i: 1.0 - agreement(c, b),
    "dense_top": lambda c, b, i: dense_top(c),
    "dense_gap": lambda c, b, i: dense_gap(c),
    "lexical_cover": lambda c, b, i: lexical_cover(float(b.max()) if len(b) else 0.0, i),
}


@dataclass
class Pool:
    shape: str
    group: str  # LoCoMo: the conversation; notes: "train" or "held"
    x: np.ndarray  # (pool, BASE)
    positive: np.ndarray
    evidence: int
    signals: dict[str, float]


def _pool(memory: Memory, query: str, gold, key: str, shape: str, group: str, **options) -> Pool:
    ctx = start(memory.kernel, query, **training.PIPELINE, **options)
    run_stages(ctx, memory.stages, until="rerank")
    pool = F.build_pool(ctx, ctx.ranked()[: memory.config.search.rerank_pool])
    x = F.feature_matrix(pool, BASE)
    cosine = pool.cached("cosine", lambda: F._cosine(pool))
    bm25 = pool.cached("bm25", lambda: F._bm25(pool))
    idfs = query_idfs(memory.kernel.store.lexical, query)
    signals = {name: fn(cosine, bm25, idfs) for name, fn in SIGNALS.items()}
    pos = np.array([str(it.metadata.get(key)) in gold for it in pool.items], dtype=bool)
    return Pool(shape, group, x, pos, max(len(gold), 1), signals)


def collect(work: Path, locomo: Path, agentmemory: Path, say) -> list[Pool]:
    from lab.agentmemory import load_questions

    out: list[Pool] = []
    convs = load_locomo(locomo)
    for shape in ("locomo", "locomo-plain"):
        with Memory.open(work / shape) as memory:
            for conv in convs:
                for q in conv.questions:
                    if q.category in (1, 2, 3, 4) and q.evidence:
                        out.append(
                            _pool(
                                memory,
                                q.question,
                                set(q.evidence),
                                "dia_id",
                                shape,
                                conv.sample_id,
                                user_id=conv.sample_id,
                                now=asked_at(conv),
                            )
                        )
        say(f"{shape}: {len(out)} pools")
    data = json.loads((shapes.DATA / "notes" / "notes.json").read_text(encoding="utf-8"))
    train_people, _ = shapes.notes_split(data["queries"])
    with Memory.open(work / "notes") as memory:
        for q in data["queries"]:
            group = "train" if q["person"] in train_people else "held"
            gold = {str(r) for r in q["relevant"]}
            out.append(_pool(memory, q["query"], gold, "n", "notes", group))
    with Memory.open(work / "agentmemory") as memory:
        for q in load_questions(agentmemory):
            gold = set(q.gold_chunk_ids.get("fixed_256", ()))
            out.append(_pool(memory, q.question, gold, "chunk_id", "agentmemory", "all"))
    sessions = json.loads((shapes.DATA / "meminsight" / "sessions.json").read_text("utf-8"))
    with Memory.open(work / "meminsight") as memory:
        for s in sessions["sessions"]:
            for q in s["queries"]:
                gold = {str(r) for r in q["relevant"]}
                out.append(
                    _pool(memory, q["text"], gold, "n", "meminsight", s["id"], user_id=s["id"])
                )
    with Memory.open(work / "amem") as memory:
        for file in sorted((shapes.DATA / "amem").glob("*.json")):
            if file.stem == "quick":
                continue
            d = json.loads(file.read_text(encoding="utf-8"))
            for q in d["queries"]:
                gold = {n for n, g in q["relevance"].items() if g >= 4}
                out.append(
                    _pool(memory, q["query"], gold, "n", "amem", d["name"], user_id=d["name"])
                )
    say(f"all shapes: {len(out)} pools")
    return out


def design(pool: Pool, spec: list[str]) -> np.ndarray:
    """Columns for a variant: a BASE name, or ``signal*feature`` (a product)."""
    cols = []
    for name in spec:
        if "*" in name:
            signal, feature = name.split("*")
            cols.append(pool.signals[signal] * pool.x[:, BASE.index(feature)])
        else:
            cols.append(pool.x[:, BASE.index(name)])
    return np.stack(cols, axis=1)


def _example(pool: Pool, spec: list[str], weight: float = 1.0) -> training.Example:
    return training.Example(
        pool.group, 0, design(pool, spec), pool.positive, pool.evidence, pool.shape, weight
    )


def score(pool: Pool, order_scores: np.ndarray) -> dict[str, float]:
    order = np.argsort(-order_scores, kind="stable")
    hits = pool.positive[order]
    first = np.flatnonzero(hits)
    r = first[0] + 1 if len(first) else 10**9
    return {
        "R@10": hits[:10].sum() / pool.evidence,
        "MRR": 1.0 / r if r <= 10 else 0.0,
        "MRR@3": 1.0 / r if r <= 3 else 0.0,
    }


def pool_scores(pools: list[Pool], spec: list[str], notes_weight: float) -> list[np.ndarray]:
    """The reranker's score of every candidate of every pool: LoCoMo pools by weights fitted
    without their conversation, the others by weights fitted on all of LoCoMo (each with the
    notes training half at ``notes_weight``, none when 0)."""
    locomo = [i for i, p in enumerate(pools) if p.shape.startswith("locomo")]
    notes_train = [p for p in pools if p.shape == "notes" and p.group == "train"]
    extra = [_example(p, spec, notes_weight) for p in notes_train] if notes_weight else []
    examples = {i: _example(pools[i], spec) for i in locomo}
    out: list[np.ndarray] = [design(p, spec) for p in pools]
    for held in sorted({pools[i].group for i in locomo}):
        train = [e for i, e in examples.items() if pools[i].group != held]
        beta = training.fit(train + extra)
        for i in locomo:
            if pools[i].group == held:
                out[i] = out[i] @ beta
    beta = training.fit(list(examples.values()) + extra)
    return [x if i in examples else x @ beta for i, x in enumerate(out)], beta


def _metric(pool: Pool) -> str:
    return "R@10" if pool.shape.startswith("locomo") else shapes.MAIN[pool.shape]


def summarise(pools: list[Pool], per_pool: list[float]) -> dict[str, float]:
    """Mean per shape (the notes set: its held-out half only)."""
    out: dict[str, list[float]] = {}
    for p, v in zip(pools, per_pool, strict=True):
        if not (p.shape == "notes" and p.group == "train"):
            out.setdefault(p.shape, []).append(v)
    return {k: float(np.mean(v)) for k, v in out.items()}


def evaluate(pools: list[Pool], spec: list[str], notes_weight: float):
    """Per shape: its main metric, as the module docstring says."""
    scores, beta = pool_scores(pools, spec, notes_weight)
    per_pool = [score(p, s)[_metric(p)] for p, s in zip(pools, scores, strict=True)]
    return summarise(pools, per_pool), beta


def second_model(pools: list[Pool], l2: float) -> dict[str, float]:
    """The shapes that are not chat logs (no speaker, no session) ranked by weights fitted on
    the notes training half alone (the shipped features); LoCoMo pools, all chat turns, would
    keep the shipped weights, so their figures do not move."""
    notes_train = [p for p in pools if p.shape == "notes" and p.group == "train"]
    beta = training.fit([_example(p, SHIPPED) for p in notes_train], l2=l2)
    out: dict[str, list[float]] = {}
    for p in pools:
        if p.shape.startswith("locomo") or (p.shape == "notes" and p.group == "train"):
            continue
        out.setdefault(p.shape, []).append(score(p, design(p, SHIPPED) @ beta)[_metric(p)])
    return {k: float(np.mean(v)) for k, v in out.items()}


def gates(pools: list[Pool], spec: list[str]) -> list[str]:
    """A per-query gate: rank by cosine alone when a signal passes a threshold, else rerank.
    For each signal and direction, the threshold (over the training pools' values) that lifts
    the notes training half most while LoCoMo, both forms, loses at most .005."""
    scores, _ = pool_scores(pools, spec, 0.0)
    rerank = [score(p, s)[_metric(p)] for p, s in zip(pools, scores, strict=True)]
    dense = [score(p, p.x[:, BASE.index("dense_raw")])[_metric(p)] for p in pools]
    train = [i for i, p in enumerate(pools) if p.shape.startswith("locomo")]
    notes_train = [i for i, p in enumerate(pools) if p.shape == "notes" and p.group == "train"]
    base = summarise(pools, rerank)
    lines = []
    for signal in SIGNALS:
        values = np.array([p.signals[signal] for p in pools])
        best = None
        for side in (1, -1):
            for t in np.unique(np.percentile(values[train + notes_train], np.arange(1, 100))):
                use = side * (values - t) > 0
                mixed = [d if u else r for d, r, u in zip(dense, rerank, use, strict=True)]
                m = summarise(pools, mixed)
                if max(base[s] - m[s] for s in ("locomo", "locomo-plain")) > 0.005:
                    continue
                gain = float(np.mean([mixed[i] for i in notes_train]))
                if best is None or gain > best[0]:
                    best = (gain, side, t, m, float(use[notes_train].mean()))
        if best is None:
            continue
        gain, side, t, m, share = best
        label = f"{signal} {'>' if side > 0 else '<'} {t:.3f} (notes train: {share:.0%} to dense)"
        lines.append(row(label, m))
    return lines


def baseline(pools: list[Pool], column: str) -> dict[str, float]:
    """A shape's main metric ranking each pool by one raw column (dense_raw: dense order)."""
    out: dict[str, list[float]] = {}
    for p in pools:
        if p.shape == "notes" and p.group == "train":
            continue
        metric = "R@10" if p.shape.startswith("locomo") else shapes.MAIN[p.shape]
        out.setdefault(p.shape, []).append(score(p, p.x[:, BASE.index(column)])[metric])
    return {k: float(np.mean(v)) for k, v in out.items()}


COLS = ["locomo", "locomo-plain", "notes", "agentmemory", "meminsight", "amem"]


def row(label: str, m: dict[str, float]) -> str:
    cells = (f"{m[c]:.3f}" if c in m else "as shipped" for c in COLS)
    return f"| {label} | " + " | ".join(cells) + " |"


SHIPPED = list(training.DEFAULT_FEATURES)
#: the variants tried: the shipped features plus products of a signal with the features that
#: carry each retriever's evidence
VARIANTS = {
    "+ disagreement x (dense_rank, context_bm25)": [
        *SHIPPED,
        "disagreement*dense_rank",
        "disagreement*context_bm25",
    ],
    "+ disagreement x (dense, dense_rank, context, context_bm25, length)": [
        *SHIPPED,
        *(
            f"disagreement*{f}"
            for f in ("dense", "dense_rank", "context", "context_bm25", "length")
        ),
    ],
    "+ lexical_cover x (context_bm25, dense_rank)": [
        *SHIPPED,
        "lexical_cover*context_bm25",
        "lexical_cover*dense_rank",
    ],
    "+ dense_gap x (dense, dense_rank)": [*SHIPPED, "dense_gap*dense", "dense_gap*dense_rank"],
    "+ dense_top x (dense, dense_rank, context_bm25)": [
        *SHIPPED,
        *(f"dense_top*{f}" for f in ("dense", "dense_rank", "context_bm25")),
    ],
    "+ every signal x (dense_rank, context_bm25, context)": [
        *SHIPPED,
        *(
            f"{s}*{f}"
            for s in ("disagreement", "lexical_cover", "dense_gap", "dense_top")
            for f in ("dense_rank", "context_bm25", "context")
        ),
    ],
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo/locomo_dev.json"))
    p.add_argument("--agentmemory", type=Path, default=Path("/work/shared/data/agentmemory"))
    p.add_argument("--cache", type=Path, help="keep the pools here (and reuse them)")
    p.add_argument("--variants", type=Path, help="JSON {label: [features]} to try as well")
    p.add_argument("--notes-weight", type=float, nargs="+", default=[0.0, 1.0])
    p.add_argument("--docs", type=Path, help="write the tables into this markdown file")
    args = p.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if args.cache and args.cache.exists():
        pools = pickle.loads(args.cache.read_bytes())
    else:
        pools = collect(args.work, args.locomo, args.agentmemory, say)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(pools))
    variants = {"shipped features": SHIPPED, **VARIANTS}
    if args.variants:
        variants.update(json.loads(args.variants.read_text(encoding="utf-8")))
    lines = ["| variant | " + " | ".join(COLS) + " |", "|---|" + "---|" * len(COLS)]
    for label, spec in variants.items():
        for w in args.notes_weight:
            m, beta = evaluate(pools, spec, w)
            name = f"{label}, notes half x{w:g}" if w else f"{label}, LoCoMo only"
            lines.append(row(name, m))
            say(
                lines[-1]
                + "  "
                + json.dumps(dict(zip(spec, np.round(beta, 3).tolist(), strict=True)))
            )
    lines.append(row("(dense order within the pool)", baseline(pools, "dense_raw")))
    lines += [
        "",
        "Gates (cosine order for a query whose signal passes the threshold, else the "
        "shipped reranker):",
        "",
        lines[0],
        lines[1],
        row("(no gate)", evaluate(pools, list(training.DEFAULT_FEATURES), 0.0)[0]),
    ]
    lines += gates(pools, list(training.DEFAULT_FEATURES))
    lines += [
        "",
        "A second model for memories that are not chat turns, fitted on the notes training "
        "half alone (LoCoMo keeps the shipped weights and its figures):",
        "",
        lines[0],
        lines[1],
        *(row(f"notes-fitted, l2 {l2:g}", second_model(pools, l2)) for l2 in (1.0, 10.0)),
    ]
    text = "\n".join(lines)
    if args.docs:
        command = "python scripts/fit_trust.py " + " ".join(sys.argv[1:])
        write_section(args.docs, "trust", provenance(command) + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
