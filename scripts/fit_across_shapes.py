"""Fit the reranker on LoCoMo dev plus half of the notes set, and measure it on every shape.

    LOCALMEM_HOME=/tmp/r python scripts/fit_across_shapes.py --work /tmp/shapes \
        [--notes-weight 1 4] [--out-dir /tmp/weights] [--docs docs/benchmarks.md]

``--work`` is the folder of ``scripts/bench_shapes.py`` (its stores are reused). Each variant
fits the model-free reranker on LoCoMo dev (both forms) and, unless it is the LoCoMo-only
recipe, the *training* half of the notes set (its people split in two by
``shapes.notes_split``), each notes question counting ``--notes-weight`` times a LoCoMo one.
Measured: LoCoMo leave-one-conversation-out within the rerank pool (the notes half stays in
every fold's training), the notes set's *held-out* half, and agentmemory, MemInsight and A-Mem
as shapes never fitted on, searched with the variant's weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from lab import reranker_training as training
from lab import shapes
from lab.locomo import load_locomo
from lab.report import provenance, write_section

from localmem.memory import Memory

OTHER = ("notes", "agentmemory", "meminsight", "amem")


def notes_examples(memory: Memory, names: list[str], people: set[str]) -> list[training.Example]:
    """The pools of the notes questions about ``people`` (the default pipeline's features)."""
    data = json.loads((shapes.DATA / "notes" / "notes.json").read_text(encoding="utf-8"))
    out = []
    for q in data["queries"]:
        if q["person"] not in people:
            continue
        _, items, x = training.collect_features(
            memory, q["query"], names=names, **training.PIPELINE
        )
        gold = {str(r) for r in q["relevant"]}
        pos = np.array([it.metadata.get("n") in gold for it in items], dtype=bool)
        out.append(training.Example(f"notes:{q['person']}", 0, x, pos, len(gold), "notes"))
    return out


def loco(locomo: list, extra: list) -> dict[str, float]:
    """LoCoMo R@10 within the pool, each conversation ranked by weights fitted without it
    (and with ``extra`` always in the training)."""
    scored = {"locomo": [], "locomo-plain": []}
    for held in sorted({e.sample_id for e in locomo}):
        beta = training.fit([e for e in locomo if e.sample_id != held] + extra)
        for e in locomo:
            if e.sample_id == held:
                scored[e.shape].append((e, e.features @ beta))
    return {
        shape: training.rank_metrics([e for e, _ in rows], [s for _, s in rows])["overall"]["R@10"]
        for shape, rows in scored.items()
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo/locomo_dev.json"))
    p.add_argument("--agentmemory", type=Path, default=Path("/work/shared/data/agentmemory"))
    p.add_argument("--notes-weight", type=float, nargs="+", default=[1.0, 4.0])
    p.add_argument("--drop", nargs="*", default=[], help="features to leave out of every fit")
    p.add_argument("--out-dir", type=Path, default=Path("/tmp/fit-across-shapes"))
    p.add_argument("--docs", type=Path)
    args = p.parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731

    names = [n for n in training.DEFAULT_FEATURES if n not in args.drop]
    convs = load_locomo(args.locomo)
    locomo = []
    for shape, plain in (("locomo", False), ("locomo-plain", True)):
        with Memory.open(args.work / shape) as memory:
            locomo += training.collect(
                memory, convs, names, training.PIPELINE, progress=say, plain=plain
            )
    data = json.loads((shapes.DATA / "notes" / "notes.json").read_text(encoding="utf-8"))
    train_people, _ = shapes.notes_split(data["queries"])
    shapes.run(args.work, ["notes"], {}, locomo=args.locomo, agentmemory=args.agentmemory)
    with Memory.open(args.work / "notes") as memory:  # stored by the run above if it was not
        notes = notes_examples(memory, names, train_people)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    variants = {"LoCoMo only (the shipped recipe)": []}
    for w in args.notes_weight:
        label = f"LoCoMo + notes training half (weight {w:g})"
        variants[label] = [
            training.Example(
                e.sample_id, e.category, e.features, e.positive, e.evidence, e.shape, w
            )
            for e in notes
        ]
    rows, configs = {}, {}
    for i, (label, extra) in enumerate(variants.items()):
        rows[label] = loco(locomo, extra)
        beta = training.fit(locomo + extra)
        path = args.out_dir / f"weights{i}.json"
        weights = {n: round(float(b), 4) for n, b in zip(names, beta, strict=True)}
        path.write_text(json.dumps({"weights": weights}, indent=2) + "\n", encoding="utf-8")
        configs[label] = {"_weights": str(path)}
        say(f"{label}: {rows[label]} -> {path}")
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
    heads[2] = "notes held-out half MRR"
    lines = ["| reranker fitted on | " + " | ".join(heads) + " |", "|---|" + "---|" * len(cols)]
    for label, row in rows.items():
        lines.append(f"| {label} | " + " | ".join(f"{row[c]:.3f}" for c in cols) + " |")
    for base in shapes.BASELINES:
        cells = ["", ""] + [
            f"{other['results'][s][base]['overall'][shapes.MAIN[s]]:.3f}" for s in OTHER
        ]
        lines.append(f"| ({base}, no reranker) | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    if args.docs:
        command = "python scripts/fit_across_shapes.py " + " ".join(sys.argv[1:])
        write_section(args.docs, "fit-across-shapes", provenance(command) + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
