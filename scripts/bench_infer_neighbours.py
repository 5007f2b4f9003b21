"""What one neighbour search saves ``add(infer=True)`` (issue 35), side by side in one run.

Usage:
    python scripts/bench_infer_neighbours.py [--out docs/benchmarks.md]

Three stores, each dialogue added to all three in turn (so the load falls on them alike): raw
``add``; ``add(infer=True)`` with the neighbour search as it was before (a search of now and a
search of what was true at the fact's time, the fact embedded again as the query); and with
today's (:func:`localmem.infer.plan.neighbours`: one search with the fact's own vector, the
second only when the memories true then differ). Sets: the hand-written dev halves and the
shipped sets (never the held-out half). Writes the ``infer-neighbours`` section: per-add p50
and p95, and p95 over raw's.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np
from lab.infer_eval import Run, ingest, load_dialogues
from lab.report import provenance, write_section
from lab.stats import percentile

from localmem import Memory
from localmem.embed import make_embedder
from localmem.infer import plan
from localmem.retrieval.pipeline import search
from localmem.store import memories

HERE = Path(__file__).resolve().parent
SETS = (HERE / "lab/data/infer/dev.json", HERE / "lab/data/infer/dev2.json", "dialogues", "heldout")


def two_searches(kernel, fact, scope, when=None, vectors=None):
    """The neighbour search before issue 35's second pass (e2c4ea1^), for comparison."""
    k = kernel.config.infer.neighbours
    if memories.count(kernel) == 0:
        return []
    filters = {name: scope.get(name) for name in ("user_id", "agent_id")}
    plain = {"mode": "hybrid", "temporal": False, "rerank": "off", **filters}
    # the fact is embedded again as its query (a new text: the embedder's cache misses)
    hits = list(search(kernel, fact.text, k=k, **plain).hits)
    if when is not None:
        past = search(kernel, fact.text, k=k, as_of=when, **plain).hits
        seen = {h.memory.id for h in hits}
        hits += [h for h in past if h.memory.id not in seen]
    out = []
    for hit in hits:
        vec = memories.stored_vector(kernel, hit.memory.id)
        cos = float(np.dot(vec, fact.vector)) if vec is not None else 0.0
        if vec is not None and vectors is not None:
            vectors[hit.memory.content] = vec
        out.append((hit.memory, cos))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/benchmarks.md")
    args = parser.parse_args()
    embedder = make_embedder()
    one_search = plan.neighbours
    runs = {n: Run(n) for n in ("raw", "infer, two searches (before)", "infer, one search (now)")}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        stores = {n: Memory.open(Path(tmp) / str(i), embedder=embedder) for i, n in enumerate(runs)}
        try:
            for s in SETS:
                dialogues = load_dialogues(s) if isinstance(s, Path) else load_dialogues(name=s)
                for dialogue in dialogues:
                    for name, memory in stores.items():
                        plan.neighbours = two_searches if "before" in name else one_search
                        ingest(memory, dialogue, infer=name != "raw", run=runs[name])
        finally:
            plan.neighbours = one_search
            for memory in stores.values():
                memory.close()
    after = os.getloadavg()[0]
    raw95 = percentile(runs["raw"].add_ms, 95)
    rows = ["| add | turns | p50 ms | p95 ms | p95 / raw p95 |", "|---|---|---|---|---|"]
    for name, run in runs.items():
        p50, p95 = percentile(run.add_ms, 50), percentile(run.add_ms, 95)
        rows.append(f"| {name} | {len(run.add_ms)} | {p50:.1f} | {p95:.1f} | {p95 / raw95:.2f} |")
    body = "\n".join(
        [
            "## Inference on add: one neighbour search (issue 35)",
            "",
            provenance("python scripts/bench_infer_neighbours.py"),
            f"- load average (1 min) before / after: {load:.2f} / {after:.2f}",
            "- the three stores take each dialogue in turn; dev, dev2 and the shipped sets",
            "",
            *rows,
        ]
    )
    write_section(args.out, "infer-neighbours", body)
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
