"""Train the model-free reranker's weights on a LoCoMo-shaped file and report how they generalise.

    python scripts/train_reranker.py PATH/locomo_dev.json --store /tmp/locomo-store \
        [--plain-store /tmp/locomo-plain] [--out localmem/retrieval/reranker.json] \
        [--docs docs/benchmarks.md]

The pool features come from the pipeline itself (the default one: hybrid candidates and
temporal attention). With ``--plain-store`` the same conversations are also stored as plain
text (no speaker, session or time) and their pools join the training, so the weights fit a
user who stores text the ordinary way too. The report gives the fused order without
reranking, the in-sample fit and leave-one-conversation-out cross-validation (a conversation
is held out in both forms at once): the last is the number to believe for conversations the
weights have not seen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from lab.locomo import CATEGORIES, load_locomo
from lab.report import provenance, write_section
from lab.reranker_training import (
    DEFAULT_FEATURES,
    PIPELINE,
    collect,
    cross_validate,
    fit,
    rank_metrics,
)

from localmem.memory import Memory
from localmem.retrieval.features import FEATURES

#: store search settings that decide which candidates a pool holds (recorded with the weights)
POOL_SETTINGS = (
    "fusion",
    "dense_weight",
    "candidates",
    "rerank_pool",
    "rerank_neighbours",
    "time_window",
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("path", help="a LoCoMo-shaped JSON file")
    p.add_argument("--store", help="store to ingest into / reuse (default: a temporary one)")
    p.add_argument("--plain-store", help="also train on the turns stored as plain text here")
    p.add_argument("--features", nargs="+", default=DEFAULT_FEATURES, choices=list(FEATURES))
    p.add_argument("--l2", type=float, default=1.0, help="L2 penalty (default 1)")
    p.add_argument("--out", type=Path, help="write the weights JSON here")
    p.add_argument(
        "--joined-pools",
        action="store_true",
        help="fit on the whole pool the reranker scores, with the memories that join it "
        "(neighbours, time window); the shipped weights are fitted without them",
    )
    p.add_argument("--docs", type=Path, help="write the report into this markdown file")
    args = p.parse_args(argv)

    convs = load_locomo(args.path)
    stores = [(args.store, False)] + ([(args.plain_store, True)] if args.plain_store else [])
    examples, searched = [], []  # the pools fitted on; the pools the reranker scores
    with tempfile.TemporaryDirectory(prefix="localmem-rerank-") as tmp:
        for store, plain in stores:
            with Memory.open(Path(store) if store else Path(tmp) / "store") as memory:
                cfg = memory.config.search  # the settings that shape a pool: kept with the weights
                settings = {name: getattr(cfg, name) for name in POOL_SETTINGS}
                for joined in sorted({args.joined_pools, True}):
                    found = collect(
                        memory,
                        convs,
                        list(args.features),
                        PIPELINE,
                        progress=lambda m, p=plain: print(
                            f"plain: {m}" if p else m, file=sys.stderr
                        ),
                        plain=plain,
                        joined=joined,
                    )
                    if joined == args.joined_pools:
                        examples += found
                    if joined:
                        searched += found
    names = list(args.features)
    beta = fit(examples, l2=args.l2)
    loco = cross_validate(examples, l2=args.l2)
    # what a search ranks: the pool with the memories that join it, weights left out as above
    loco_searched = cross_validate(examples, l2=args.l2, score_on=searched)
    rows = []  # (ranking, shape, metrics)
    for shape in sorted({ex.shape for ex in examples}):
        mine = [ex for ex in examples if ex.shape == shape]
        held = [(ex, s) for ex, s in loco["scored"] if ex.shape == shape]
        as_searched = [(ex, s) for ex, s in loco_searched["scored"] if ex.shape == shape]
        rows += [
            ("fused", shape, rank_metrics(mine, [-np.arange(len(ex.positive)) for ex in mine])),
            ("in-sample", shape, rank_metrics(mine, [ex.features @ beta for ex in mine])),
            ("LOCO", shape, rank_metrics([e for e, _ in held], [s for _, s in held])),
            (
                "LOCO, pools as searched",
                shape,
                rank_metrics([e for e, _ in as_searched], [s for _, s in as_searched]),
            ),
        ]
    fitted = rank_metrics(examples, [ex.features @ beta for ex in examples])
    weights = {n: round(float(b), 4) for n, b in zip(names, beta, strict=True)}
    report = {
        "weights": weights,
        "trained": {
            "data": Path(args.path).name,
            # the weights are versioned with their data: the file's digest says which one
            "data_sha256": hashlib.sha256(Path(args.path).read_bytes()).hexdigest(),
            "conversations": sorted({ex.sample_id for ex in examples}),
            "questions": len(examples),
            "shapes": sorted({ex.shape for ex in examples}),
            "pipeline": PIPELINE,
            "settings": settings,
            "l2": args.l2,
            "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "loco_R@10": round(loco["metrics"]["overall"]["R@10"], 4),
            "in_sample_R@10": round(fitted["overall"]["R@10"], 4),
        },
    }
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    text = markdown(names, weights, rows, loco, args)
    if args.docs:
        write_section(args.docs, "locomo-reranker", text)
        print(f"wrote section 'locomo-reranker' of {args.docs}", file=sys.stderr)
    print(text)
    return 0


def markdown(names, weights, rows, loco, args) -> str:
    command = "python scripts/train_reranker.py " + " ".join(
        sys.argv[1:] if len(sys.argv) > 1 else [str(args.path)]
    )
    lines = [
        "### Model-free reranker: training and leave-one-conversation-out check",
        "",
        provenance(command),
        "",
        "Pools come from the default pipeline (hybrid candidates, temporal attention); a "
        "candidate is positive when it is an evidence turn. `fused` is the pool's order before "
        "reranking; `in-sample` ranks with weights fitted on every conversation (what ships); "
        "`LOCO` ranks each conversation with weights fitted on the other ones. The pools "
        + (
            "fitted on hold the memories that join the reranker's pool at search time "
            "(`--joined-pools`)"
            if args.joined_pools
            else "fitted on are the best `rerank_pool` candidates, without the memories that "
            "join the reranker's pool at search time (neighbours, time window)"
        )
        + "; `LOCO, pools as searched` ranks with the same fold weights the pools a search "
        "scores, with them: the figure to compare with a search.",
        "",
        "| ranking | shape | "
        + " | ".join(f"R@10 {_label(g)}" for g in _groups(rows[0][2]))
        + " | R@5 | R@1 | MRR |",
        "|---|---|" + "---|" * (len(_groups(rows[0][2])) + 3),
    ]
    for label, shape, m in rows:
        cells = [f"{m[g]['R@10']:.3f}" for g in _groups(m)]
        o = m["overall"]
        cells += [f"{o['R@5']:.3f}", f"{o['R@1']:.3f}", f"{o['MRR']:.3f}"]
        lines.append(f"| {label} | {shape} | " + " | ".join(cells) + " |")
    lines += ["", "Weights (shipped, fitted on every conversation; per held-out fold beside):", ""]
    folds = loco["folds"]
    lines.append("| feature | weight | " + " | ".join(f"without {c}" for c in folds) + " |")
    lines.append("|---|---|" + "---|" * len(folds))
    for i, n in enumerate(names):
        cells = [f"{folds[c][i]:.2f}" for c in folds]
        lines.append(f"| {n} | {weights[n]:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _groups(metrics) -> list[str]:
    keys = [g for g in ("1", "2", "3", "4") if g in metrics]
    return [*keys, "overall"]


def _label(g: str) -> str:
    return f"{g} {CATEGORIES[int(g)]}" if g.isdigit() else g


if __name__ == "__main__":
    raise SystemExit(main())
