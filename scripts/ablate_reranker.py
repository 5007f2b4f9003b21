"""What each reranker feature is worth on every shape: refit without it, measure everywhere.

    LOCALMEM_HOME=/tmp/r python scripts/ablate_reranker.py --work /tmp/shapes \
        [--docs docs/benchmarks.md]

``--work`` is the folder of ``scripts/bench_shapes.py`` (its LoCoMo stores, with and without
metadata, are reused). For each group of features left out, the weights are fitted on LoCoMo
dev as the shipped ones are (both forms, every conversation): LoCoMo is scored
leave-one-conversation-out on the rerank pools (R@10 within the pool of 100), the other shapes
by searching with those weights (the default pipeline otherwise). Nothing is fitted on the
other shapes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from lab import reranker_training as training
from lab import shapes
from lab.locomo import load_locomo
from lab.report import provenance, write_section

from localmem.memory import Memory

GROUPS = {
    "dense (z, raw, rank)": ["dense", "dense_raw", "dense_rank"],
    "neighbours (context, context_bm25)": ["context", "context_bm25"],
    "session": ["session"],
    "speaker (speaker, other_speaker)": ["speaker", "other_speaker"],
    "length": ["length"],
    "time (time_stated, time_close)": ["time_stated", "time_close"],
}
OTHER = ("agentmemory", "meminsight", "amem", "notes")


def _subset(examples, names, keep):
    idx = [names.index(n) for n in keep]
    return [
        training.Example(
            e.sample_id, e.category, e.features[:, idx], e.positive, e.evidence, e.shape
        )
        for e in examples
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo/locomo_dev.json"))
    p.add_argument("--agentmemory", type=Path, default=Path("/work/shared/data/agentmemory"))
    p.add_argument("--docs", type=Path)
    args = p.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731

    # and the ones left out of the shipped weights, to show why
    names = [*training.DEFAULT_FEATURES, "coverage", "bm25", "bm25_rank"]
    convs = load_locomo(args.locomo)
    examples = []
    for shape, plain in (("locomo", False), ("locomo-plain", True)):
        with Memory.open(args.work / shape) as memory:
            examples += training.collect(
                memory, convs, names, training.PIPELINE, progress=say, plain=plain
            )
    rows = {}
    with tempfile.TemporaryDirectory(prefix="localmem-ablate-") as tmp:
        configs = {}
        left_out = ["coverage", "bm25", "bm25_rank"]
        variants = {
            "shipped": left_out,
            "shipped + coverage": ["bm25", "bm25_rank"],
            "shipped + own bm25 (z, rank)": ["coverage"],
            **{k: v + left_out for k, v in GROUPS.items()},
        }
        for label, dropped in variants.items():
            keep = [n for n in names if n not in dropped]
            sub = _subset(examples, names, keep)
            loco = training.cross_validate(sub)
            row = {}
            for shape in ("locomo", "locomo-plain"):
                held = [(e, s) for e, s in loco["scored"] if e.shape == shape]
                m = training.rank_metrics([e for e, _ in held], [s for _, s in held])
                row[shape] = m["overall"]["R@10"]
            beta = training.fit(sub)
            path = Path(tmp) / f"w{len(configs)}.json"
            weights = {n: float(b) for n, b in zip(keep, beta, strict=True)}
            path.write_text(json.dumps({"weights": weights}), encoding="utf-8")
            configs[label] = {"_weights": str(path)}
            rows[label] = row
            say(f"{label}: {row}")
        other = shapes.run(
            args.work,
            OTHER,
            {**shapes.BASELINES, **configs},
            locomo=args.locomo,
            agentmemory=args.agentmemory,
            progress=say,
        )
    for label in rows:
        for shape in OTHER:
            rows[label][shape] = other["results"][shape][label]["overall"][shapes.MAIN[shape]]
    cols = ["locomo", "locomo-plain", *OTHER]
    heads = [f"{c} {'R@10 pool LOCO' if c.startswith('locomo') else shapes.MAIN[c]}" for c in cols]
    lines = [
        "| reranker features | " + " | ".join(heads) + " |",
        "|---|" + "---|" * len(cols),
    ]
    for label, row in rows.items():
        name = label if label.startswith("shipped") else f"shipped without {label}"
        lines.append(f"| {name} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + " |")
    for base in shapes.BASELINES:
        cells = ["" for c in cols[:2]] + [
            f"{other['results'][s][base]['overall'][shapes.MAIN[s]]:.3f}" for s in OTHER
        ]
        lines.append(f"| ({base}, no reranker) | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    if args.docs:
        command = "python scripts/ablate_reranker.py " + " ".join(sys.argv[1:])
        write_section(args.docs, "shapes-ablation", provenance(command) + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
