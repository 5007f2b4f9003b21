"""Fit the relevance calibration (a hit's chance of being relevant, 0 to 1) and measure it.

    LOCALMEM_HOME=/tmp/r nice -n 15 python scripts/calibrate_relevance.py --work /tmp/shapes \
        [--out localmem/retrieval/relevance.json] [--docs docs/benchmarks.md] [--embedder NAME]

Every labelled data shape of ``scripts/lab/shapes.py`` (LoCoMo with its metadata and as plain
text, agentmemory's chunks, the MemInsight and A-Mem thought sessions, the synthetic notes)
is searched as a user would (k=10) under the default pipeline and under the pipelines without
the reranker (hybrid, dense, lexical). Each hit gives the signals of
:mod:`localmem.retrieval.relevance` and a label: is it one of the query's relevant memories.
LoCoMo is reranked with weights fitted without the conversation searched (as
``scripts/bench_shapes.py`` does), so its reranker scores are those of a store never seen.

Each shape's queries are split in two: dev (LoCoMo conv-26, conv-30, conv-41; the notes'
training people; every other query of the small shapes) and held out (the rest). The shipped
calibration is a logistic regression fitted on the dev halves, each shape weighing the same;
measured on the held-out halves, and, to see a store unlike any fitted on, leave-one-shape-out
(fitted on the other shapes' dev halves, measured on this shape's held-out half).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from lab import shapes
from lab.locomo import asked_at, ensure_ingested, load_locomo
from lab.locomo_bench import reranker_weights
from lab.report import provenance, write_section

from localmem.retrieval.pipeline import run_stages, start
from localmem.retrieval.relevance import SIGNALS, hit_signals

K = 10
#: the pipelines searched: the default one (model-free reranker) and three without a reranker
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "hybrid": {"temporal": False, "rerank": "off"},
    "dense": {"mode": "dense", "temporal": False, "rerank": "off"},
    "lexical": {"mode": "lexical", "temporal": False, "rerank": "off"},
}
LOCOMO_DEV = {"conv-26", "conv-30", "conv-41"}
#: relevance floors measured (localmem.retrieval.relevance.DEFAULT_MIN_RELEVANCE among them)
FLOORS = (0.05, 0.1, 0.15, 0.2, 0.3)
#: feature sets compared (the reranked model adds ``rerank`` to each)
CANDIDATES = {
    "cosine": ["cosine"],
    "cosine+coverage": ["cosine", "coverage"],
    "cosine+coverage+exact": ["cosine", "coverage", "exact"],
    "all": ["cosine", "coverage", "exact", "lexical"],
}


@dataclass
class Asked:
    """One labelled query of a shape."""

    text: str
    gold: set[str]
    split: str  # "dev" or "heldout"
    scope: dict[str, Any]
    weights: str | None = None  # reranker weights to search with (LoCoMo: held out)


@dataclass
class Row:
    shape: str
    split: str
    config: str
    query: int
    rank: int
    reranked: bool
    signals: dict[str, float]
    relevant: bool


def _locomo(work: Path, locomo: Path, plain: bool, held: dict[str, str]):
    convs = load_locomo(locomo)
    memory = shapes._open(work / ("locomo-plain" if plain else "locomo"))
    asked = []
    for conv in convs:
        ensure_ingested(memory, conv, plain=plain)
        split = "dev" if conv.sample_id in LOCOMO_DEV else "heldout"
        for q in conv.questions:
            if q.category in (1, 2, 3, 4) and q.evidence:
                scope = {"user_id": conv.sample_id, "now": asked_at(conv)}
                asked.append(
                    Asked(q.question, set(q.evidence), split, scope, held.get(conv.sample_id))
                )
    return memory, "dia_id", asked


def _agentmemory(work: Path, folder: Path):
    from lab.agentmemory import load_corpus, load_published_chunks, load_questions

    chunks = load_published_chunks(folder, "fixed_256", load_corpus(folder))
    rows = [
        {"content": c.text, "kind": "chunk", "metadata": {"chunk_id": c.id, "title": c.title}}
        for c in chunks
    ]
    memory = shapes._fresh(work / "agentmemory", len(rows), lambda m: m.add_many(rows))
    asked = [
        Asked(q.question, set(q.gold_chunk_ids.get("fixed_256", ())), _parity(i), {})
        for i, q in enumerate(load_questions(folder))
    ]
    return memory, "chunk_id", asked


def _parity(i: int) -> str:
    return "dev" if i % 2 == 0 else "heldout"


def _sessions(work: Path, name: str, sessions: list[dict]):
    def make(memory):
        for s in sessions:
            memory.add_many(
                [{"content": t, "metadata": {"n": str(i)}} for i, t in enumerate(s["thoughts"], 1)],
                user_id=s["id"],
            )

    total = sum(len(s["thoughts"]) for s in sessions)
    memory = shapes._fresh(work / name, total, make)
    queries = [(q, s["id"]) for s in sessions for q in s["queries"]]
    asked = [
        Asked(q["text"], set(q["relevant"]), _parity(i), {"user_id": user})
        for i, (q, user) in enumerate(queries)
    ]
    return memory, "n", asked


def _meminsight(work: Path):
    data = json.loads((shapes.DATA / "meminsight" / "sessions.json").read_text(encoding="utf-8"))
    sessions = [
        {
            "id": s["id"],
            "thoughts": s["thoughts"],
            "queries": [
                {"text": q["text"], "relevant": [str(x) for x in q["relevant"]]}
                for q in s["queries"]
            ],
        }
        for s in data["sessions"]
    ]
    return _sessions(work, "meminsight", sessions)


def _amem(work: Path):
    sessions = []
    for file in sorted((shapes.DATA / "amem").glob("*.json")):
        if file.stem == "quick":
            continue
        d = json.loads(file.read_text(encoding="utf-8"))
        queries = [
            {"text": q["query"], "relevant": [n for n, g in q["relevance"].items() if g >= 4]}
            for q in d["queries"]
        ]
        sessions.append({"id": d["name"], "thoughts": d["thoughts"], "queries": queries})
    return _sessions(work, "amem", sessions)


def _notes(work: Path):
    data = json.loads((shapes.DATA / "notes" / "notes.json").read_text(encoding="utf-8"))
    notes, (train, _) = data["notes"], shapes.notes_split(data["queries"])
    rows = [
        {"content": notes[i], "metadata": {"n": str(i)}} for i in shapes.notes_order(len(notes))
    ]
    memory = shapes._fresh(work / "notes", len(notes), lambda m: m.add_many(rows))
    asked = [
        Asked(
            q["query"],
            {str(x) for x in q["relevant"]},
            "dev" if q["person"] in train else "heldout",
            {},
        )
        for q in data["queries"]
    ]
    return memory, "n", asked


def collect(args, say) -> Iterator[Row]:
    """Every hit of every query of every shape under every configuration."""
    held = shapes.heldout_weights(args.work, args.locomo, say)
    makers = {
        "locomo": lambda: _locomo(args.work, args.locomo, False, held),
        "locomo-plain": lambda: _locomo(args.work, args.locomo, True, held),
        "agentmemory": lambda: _agentmemory(args.work, args.agentmemory),
        "meminsight": lambda: _meminsight(args.work),
        "amem": lambda: _amem(args.work),
        "notes": lambda: _notes(args.work),
    }
    for shape, make in makers.items():
        memory, key, asked = make()
        with memory:
            for config, options in CONFIGS.items():
                for n, q in enumerate(asked):
                    weights = reranker_weights(memory, q.weights) if q.weights else nullcontext()
                    with weights:
                        ctx = start(memory.kernel, q.text, k=K, **q.scope, **options)
                        run_stages(ctx, memory.stages, until="relevance")
                        top = ctx.ranked()[:K]
                        items = ctx.items([c.label for c in top])
                        top = [c for c in top if c.label in items and not items[c.label].deleted]
                        signals, reranked = hit_signals(ctx, top)
                    for rank, (cand, sig) in enumerate(zip(top, signals, strict=True), 1):
                        label = str(items[cand.label].metadata.get(key, items[cand.label].id))
                        yield Row(shape, q.split, config, n, rank, reranked, sig, label in q.gold)
                say(f"{shape} {config}: {len(asked)} queries")


# -- fitting and measuring (pure) ---------------------------------------------------------------
def matrix(rows: list[Row], names: list[str]) -> np.ndarray:
    return np.array([[r.signals.get(n, 0.0) for n in names] for r in rows], dtype=np.float64)


def shape_weights(rows: list[Row]) -> np.ndarray:
    """Each shape weighs the same in a fit (LoCoMo has twenty times the notes' queries)."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.shape] = counts.get(r.shape, 0) + 1
    return np.array([len(rows) / (len(counts) * counts[r.shape]) for r in rows])


def fit(rows: list[Row], names: list[str]) -> tuple[dict[str, float], float]:
    from sklearn.linear_model import LogisticRegression

    x, y = matrix(rows, names), np.array([r.relevant for r in rows])
    model = LogisticRegression(C=10.0, max_iter=1000)
    model.fit(x, y, sample_weight=shape_weights(rows))
    return dict(zip(names, model.coef_[0].tolist(), strict=True)), float(model.intercept_[0])


def predict(rows: list[Row], model: tuple[dict[str, float], float]) -> np.ndarray:
    weights, bias = model
    names = list(weights)
    z = bias + matrix(rows, names) @ np.array([weights[n] for n in names])
    return 1.0 / (1.0 + np.exp(-z))


def measures(p: np.ndarray, y: np.ndarray, bins: int = 10) -> dict[str, float]:
    """Expected calibration error (equal-width bins), Brier, log loss, AUC, mean p and rate."""
    from sklearn.metrics import roc_auc_score

    edges = np.minimum((p * bins).astype(int), bins - 1)
    ece = sum(
        abs(p[edges == b].mean() - y[edges == b].mean()) * (edges == b).sum()
        for b in range(bins)
        if (edges == b).any()
    ) / max(len(p), 1)
    eps = 1e-9
    loss = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
    auc = roc_auc_score(y, p) if 0 < y.sum() < len(y) else float("nan")
    return {
        "n": len(p),
        "ece": float(ece),
        "brier": float(np.mean((p - y) ** 2)),
        "logloss": float(loss),
        "auc": float(auc),
        "mean_p": float(p.mean()),
        "rate": float(y.mean()),
    }


def reliability(
    p: np.ndarray, y: np.ndarray, bins: int = 10
) -> list[tuple[str, int, float, float]]:
    edges = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        at = edges == b
        if at.any():
            out.append(
                (f"{b / bins:.1f}-{(b + 1) / bins:.1f}", int(at.sum()), p[at].mean(), y[at].mean())
            )
    return out


def models_for(rows: list[Row], names: list[str]) -> dict[str, tuple[dict[str, float], float]]:
    return {
        "reranked": fit([r for r in rows if r.reranked], [*names, "rerank"]),
        "plain": fit([r for r in rows if not r.reranked], names),
    }


def scored(rows: list[Row], models) -> tuple[np.ndarray, np.ndarray]:
    p = np.zeros(len(rows))
    for which, keep in (("reranked", True), ("plain", False)):
        at = [i for i, r in enumerate(rows) if r.reranked == keep]
        if at:
            p[at] = predict([rows[i] for i in at], models[which])
    return p, np.array([r.relevant for r in rows], dtype=np.float64)


def evaluate(rows: list[Row]) -> dict[str, Any]:
    """Every candidate feature set: held-out measures per shape and configuration, and
    leave-one-shape-out."""
    dev = [r for r in rows if r.split == "dev"]
    held = [r for r in rows if r.split == "heldout"]
    found_shapes = sorted({r.shape for r in rows})
    out: dict[str, Any] = {}
    for cand, names in CANDIDATES.items():
        models = models_for(dev, names)
        per: dict[str, Any] = {}
        for shape in found_shapes:
            for config in CONFIGS:
                part = [r for r in held if r.shape == shape and r.config == config]
                if part:
                    per[f"{shape}/{config}"] = measures(*scored(part, models))
        loso = {}
        for shape in found_shapes:
            others = models_for([r for r in dev if r.shape != shape], names)
            part = [r for r in held if r.shape == shape]
            loso[shape] = measures(*scored(part, others))
        out[cand] = {
            "models": models,
            "heldout": measures(*scored(held, models)),
            "per": per,
            "loso": loso,
        }
    return out


def choose(results: dict[str, Any]) -> str:
    """The feature set with the lowest mean held-out log loss over the shapes (each the same)."""

    def score(cand: str) -> float:
        return float(np.mean([m["logloss"] for m in results[cand]["loso"].values()]))

    return min(results, key=score)


def report(rows: list[Row], results: dict[str, Any], best: str, command: str) -> str:
    held = [r for r in rows if r.split == "heldout"]
    models = results[best]["models"]
    p, y = scored(held, models)
    lines = [
        "A hit's relevance (0 to 1): a logistic model over the signals of "
        "`localmem/retrieval/relevance.py`, fitted on the dev half of every shape (each shape "
        "weighing the same) and measured on the held-out half. ECE: expected calibration error "
        "(10 equal bins; 0 is perfect); AUC: how well it separates relevant from not; "
        "`mean p` against `rate`: the mean relevance against the share of hits that are "
        "relevant. Leave-one-shape-out: fitted without the shape, measured on its held-out "
        "half (a store unlike any fitted on).",
        "",
        provenance(command),
        "",
        "Feature sets (mean over shapes, leave-one-shape-out):",
        "",
        "| features | log loss | ECE | AUC |",
        "|---|---|---|---|",
    ]
    for cand, res in results.items():
        loso = res["loso"].values()
        mark = " (shipped)" if cand == best else ""
        lines.append(
            f"| {cand}{mark} | {np.mean([m['logloss'] for m in loso]):.3f} | "
            f"{np.mean([m['ece'] for m in loso]):.3f} | {np.mean([m['auc'] for m in loso]):.3f} |"
        )
    lines += [
        "",
        f"Shipped ({best}), held-out half, by shape and pipeline:",
        "",
        "| shape / pipeline | hits | mean p | rate | ECE | Brier | AUC |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in results[best]["per"].items():
        lines.append(
            f"| {name} | {m['n']} | {m['mean_p']:.3f} | {m['rate']:.3f} | {m['ece']:.3f} | "
            f"{m['brier']:.3f} | {m['auc']:.3f} |"
        )
    lines += ["", "Leave-one-shape-out (shipped features):", ""]
    lines += ["| shape | hits | mean p | rate | ECE | AUC |", "|---|---|---|---|---|---|"]
    for shape, m in results[best]["loso"].items():
        lines.append(
            f"| {shape} | {m['n']} | {m['mean_p']:.3f} | {m['rate']:.3f} | {m['ece']:.3f} | "
            f"{m['auc']:.3f} |"
        )
    lines += ["", "Floors (`min_relevance`), held-out hits of the default pipeline (shipped):", ""]
    lines += [
        "| floor | relevant hits kept | other hits left out | queries left with no hit |",
        "|---|---|---|---|",
    ]
    default = [r for r in held if r.config == "default"]
    pd, yd = scored(default, models)
    asked = [(r.shape, r.query) for r in default]
    for floor in FLOORS:
        kept = pd >= floor
        some = {q for q, k in zip(asked, kept, strict=True) if k}
        lines.append(
            f"| {floor:.2f} | {kept[yd == 1].mean():.3f} | {(~kept[yd == 0]).mean():.3f} | "
            f"{1 - len(some) / len(set(asked)):.3f} |"
        )
    lines += ["", "Reliability, every held-out hit (shipped):", ""]
    lines += ["| relevance | hits | mean relevance | share relevant |", "|---|---|---|---|"]
    for span, n, mean_p, rate in reliability(p, y):
        lines.append(f"| {span} | {n} | {mean_p:.3f} | {rate:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True, help="folder for the stores (reused)")
    p.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo/locomo_dev.json"))
    p.add_argument("--agentmemory", type=Path, default=Path("/work/shared/data/agentmemory"))
    p.add_argument("--out", type=Path, help="write the chosen calibration here")
    p.add_argument("--rows", type=Path, help="cache of the collected hits (JSON lines)")
    p.add_argument("--docs", type=Path, help="write the report into this markdown file")
    p.add_argument("--section", default="relevance")
    p.add_argument("--embedder", help="the embedder of new stores under --work (default MiniLM)")
    args = p.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if args.embedder:
        from localmem.config import Config, EmbedderConfig

        shapes.STORE_CONFIG = Config(embedder=EmbedderConfig(model=args.embedder))
    if args.rows and args.rows.exists():
        rows = [Row(**json.loads(line)) for line in args.rows.read_text().splitlines()]
    else:
        rows = list(collect(args, say))
        if args.rows:
            args.rows.write_text("".join(json.dumps(r.__dict__) + "\n" for r in rows))
    unknown = {n for r in rows for n in r.signals} - set(SIGNALS)
    assert not unknown, unknown
    results = evaluate(rows)
    best = choose(results)
    command = "python scripts/calibrate_relevance.py " + " ".join(argv or sys.argv[1:])
    text = report(rows, results, best, command)
    print(text)
    if args.out:
        models = results[best]["models"]
        args.out.write_text(
            json.dumps(
                {
                    "about": "relevance = sigmoid(bias + sum(weight * signal)); fitted by "
                    "scripts/calibrate_relevance.py on the dev half of every data shape; "
                    "docs/benchmarks.md, section relevance",
                    "features": best,
                    "models": {
                        name: {"weights": weights, "bias": bias}
                        for name, (weights, bias) in models.items()
                    },
                    "heldout": results[best]["heldout"],
                },
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    if args.docs:
        write_section(args.docs, args.section, "## A hit's relevance\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
