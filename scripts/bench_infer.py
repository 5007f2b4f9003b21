"""Inference on add (issue 20): the labelled dialogues and LoCoMo, raw against inferred.

Usage:
    python scripts/bench_infer.py [--locomo /path/to/locomo_dev.json] [--gguf MODEL.gguf]
        [--out docs/benchmarks.md] [--json results.json]

Stores the shipped dialogues (``localmem/infer/data/dialogues.json``) raw and with
``infer=True`` (model-free; with ``--gguf`` also through that model) in fresh stores side by
side, and reports update accuracy, false supersession, duplicates, stale answers at 5 for
"now", past recall at 5 with ``as_of`` and add latency (``lab.infer_eval``).
With ``--locomo``, also LoCoMo evidence recall (hybrid search, no model) with every turn stored
raw and inferred, and the add latency of each. Writes the ``infer`` section.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from lab.infer_eval import SETS, load_dialogues, rates, run_dialogues, table
from lab.locomo import load_locomo
from lab.report import provenance, write_section
from lab.retrieval import markdown_table, run_questions, summarize
from lab.stats import percentile

from localmem import Memory
from localmem.embed import make_embedder


def locomo(path: str, embedder, tmp: Path) -> tuple[str, dict]:
    convs = load_locomo(path)
    results: dict[str, list] = {"raw": [], "infer": []}
    add_ms: dict[str, list[float]] = {"raw": [], "infer": []}
    counts: dict[str, int] = {"raw": 0, "infer": 0}
    superseded: dict[str, int] = {"raw": 0, "infer": 0}
    for name in ("raw", "infer"):
        with Memory.open(tmp / f"locomo-{name}", embedder=embedder) as mem:
            for conv in convs:
                for t in conv.turns:
                    started = time.perf_counter()
                    mem.add(
                        t.content,
                        kind="message",
                        user_id=conv.sample_id,
                        event_time=t.when,
                        session_id=f"{conv.sample_id}:S{t.session}",
                        metadata={"dia_id": t.dia_id, "speaker": t.speaker, "session": t.session},
                        infer=name == "infer",
                    )
                    add_ms[name].append((time.perf_counter() - started) * 1000)
                rows, _ = run_questions(mem, conv, {"mode": "hybrid"}, k=20)
                results[name] += rows
                print(f"locomo {name} {conv.sample_id} done", file=sys.stderr)
            counts[name] = mem.count()
            listed = mem.list(limit=1_000_000)
            superseded[name] = sum(m.valid_to is not None for m in listed)
    summaries = {name: summarize(rows) for name, rows in results.items()}
    import numpy as np

    lines = [
        markdown_table(summaries, metrics=("R@5", "R@10", "R@20", "hit@10", "MRR")),
        "",
        "| storage | memories | superseded | add p50 ms | add p95 ms |",
        "|---|---|---|---|---|",
    ]
    for name in ("raw", "infer"):
        ms = np.array(add_ms[name])
        lines.append(
            f"| {name} | {counts[name]} | {superseded[name]} | {percentile(ms, 50):.1f} | "
            f"{percentile(ms, 95):.1f} |"
        )
    return "\n".join(lines), {"summaries": summaries, "memories": counts, "superseded": superseded}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", help="locomo10.json-shaped file (LoCoMo dev)")
    parser.add_argument("--gguf", help="also run the engine path with this GGUF")
    parser.add_argument("--dialogues", help="another labelled set (default: the shipped one)")
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--json", default=None)
    parser.add_argument("--section", default="infer", help="section of --out to write")
    parser.add_argument(
        "--sample",
        type=int,
        default=1,
        help="every Nth dialogue of each set only (a slow engine); every run on the same ones",
    )
    args = parser.parse_args()
    sets = (
        {"given": load_dialogues(args.dialogues)}
        if args.dialogues
        else {name: load_dialogues(name=name) for name in SETS}
    )
    sets = {name: dialogues[:: max(1, args.sample)] for name, dialogues in sets.items()}
    embedder = make_embedder()
    load = os.getloadavg()
    out: dict = {}
    sections: list[str] = []
    engine = None
    if args.gguf:
        from localmem.llm.llama import LlamaEngine

        engine = LlamaEngine(args.gguf, n_ctx=4096, n_threads=2)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for set_name, dialogues in sets.items():
            runs = run_dialogues(
                lambda n, s=set_name: Memory.open(tmp / f"{s}-{n}", embedder=embedder), dialogues
            )
            if engine is not None:
                engine_runs = run_dialogues(
                    lambda n, s=set_name: Memory.open(
                        tmp / f"{s}-engine-{n}", embedder=embedder, engine=engine
                    ),
                    dialogues,
                )
                runs[f"infer ({engine.name})"] = engine_runs["infer"]
            out[set_name] = {n: {**rates(r), **r.counts} for n, r in runs.items()}
            sections += [
                f"**{set_name}**: {len(dialogues)} dialogues, "
                f"{sum(len(s['turns']) for d in dialogues for s in d['sessions'])} turns, "
                f"{sum(len(d['supersede']) for d in dialogues)} labelled supersessions, "
                f"{sum(len(d['now']) for d in dialogues)} now and "
                f"{sum(len(d['past']) for d in dialogues)} past questions.",
                "",
                table(runs),
                "",
            ]
        if args.locomo:
            md, data = locomo(args.locomo, embedder, tmp)
            out["locomo"] = data
            sections += ["LoCoMo dev evidence recall (hybrid search, no model):", "", md]
    after = os.getloadavg()
    command = "python scripts/bench_infer.py" + (f" --locomo {args.locomo}" if args.locomo else "")
    if args.gguf:
        command += f" --gguf {args.gguf}"
    if args.sample > 1:
        command += f" --sample {args.sample}"
    body = "\n".join(
        [
            "## Inference on add (issue 20)" + (" through an engine" if args.gguf else ""),
            "",
            provenance(command),
            f"- load average (1 min) before / after: {load[0]:.2f} / {after[0]:.2f}",
            "",
            *sections,
        ]
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    write_section(args.out, args.section, body)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
