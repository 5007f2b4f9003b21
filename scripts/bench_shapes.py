"""Score dense, BM25, hybrid and candidate default pipelines on every data shape, in one run.

    LOCALMEM_HOME=/tmp/r python scripts/bench_shapes.py --work /tmp/shapes \
        [--shapes locomo locomo-plain agentmemory meminsight amem notes] \
        [--configs dense bm25 hybrid +temporal+rerank default] [--json out.json] \
        [--docs docs/benchmarks.md --section shapes] [--embedder multilingual-e5-small]

Shapes and metrics: ``scripts/lab/shapes.py``. Stores are kept under ``--work`` and
reused by the next run (embeddings are the slow part). ``--option NAME=JSON`` adds a
configuration ``NAME`` from JSON search options, to try a candidate without editing code.
The run ends with the guard: shapes where ``default`` is below the best of dense, BM25 and
hybrid by more than .01.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from lab import shapes
from lab.report import provenance, write_section


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", type=Path, required=True, help="folder for the stores (reused)")
    p.add_argument("--shapes", nargs="+", default=list(shapes.SHAPES), choices=shapes.SHAPES)
    p.add_argument("--configs", nargs="+", default=list(shapes.CONFIGS))
    p.add_argument("--option", action="append", default=[], metavar="NAME=JSON")
    p.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo/locomo_dev.json"))
    p.add_argument("--agentmemory", type=Path, default=Path("/work/shared/data/agentmemory"))
    p.add_argument("--json", type=Path, help="write every metric here")
    p.add_argument("--docs", type=Path, help="write the table into this markdown file")
    p.add_argument("--section", default="shapes", help="the section name in --docs")
    p.add_argument("--render", type=Path, help="only write the tables of an earlier --json")
    p.add_argument(
        "--embedder",
        help="the embedder of new stores under --work (embedder.model; default: MiniLM); "
        "stores already there keep theirs",
    )
    args = p.parse_args(argv)
    if args.embedder:
        from localmem.config import Config, EmbedderConfig

        shapes.STORE_CONFIG = Config(embedder=EmbedderConfig(model=args.embedder))
    if args.render:
        results = json.loads(args.render.read_text(encoding="utf-8"))
        return report(results, args, "(tables of an earlier run's --json)")

    configs = {}
    for name in args.configs:
        if name not in shapes.CONFIGS:
            p.error(f"unknown configuration {name}; known: {', '.join(shapes.CONFIGS)}")
        configs[name] = shapes.CONFIGS[name]
    for spec in args.option:
        name, _, raw = spec.partition("=")
        configs[name] = json.loads(raw)
    results = shapes.run(
        args.work,
        args.shapes,
        configs,
        locomo=args.locomo,
        agentmemory=args.agentmemory,
        progress=lambda m: print(m, file=sys.stderr, flush=True),
    )
    results["configs"] = configs
    command = "python scripts/bench_shapes.py " + " ".join(sys.argv[1:])
    results["provenance"] = (
        provenance(command) + f"\n- load average (1, 5, 15 min) at the end: {_load()}"
    )
    if args.json:  # first, so a later mistake cannot lose the run
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return report(results, args, command)


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def report(results: dict, args: argparse.Namespace, command: str) -> int:
    """Print the tables (and write them into --docs)."""
    text = shapes.table(results)
    if "default" in results["configs"]:
        failures = shapes.guard(results, "default")
        text += "\n\nGuard (default within .01 of the best of dense, BM25, hybrid): " + (
            "; ".join(failures) if failures else "met on every shape"
        )
    text += "\n\n" + shapes.details(results)
    if args.docs:
        made = results.get("provenance") or provenance(command)
        write_section(args.docs, args.section, made + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
