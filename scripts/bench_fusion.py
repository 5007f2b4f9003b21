"""Hybrid fusion on LoCoMo dev: reciprocal-rank fusion against calibrated score fusion.

Usage:
    python scripts/bench_fusion.py /path/to/locomo_dev.json [--out docs/benchmarks.md]

Ingests each conversation into its own fresh store (MiniLM, no model) and measures evidence
recall@k, hit@k and MRR for dense, BM25 and every fusion, per category and overall. The choice of
the default fusion (SearchConfig.fusion) rests on this table. Writes the `fusion` section.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from lab.locomo import ingest_conversation, load_locomo
from lab.report import provenance, write_section
from lab.retrieval import category_table, markdown_table, run_questions, summarize

from localmem import Memory
from localmem.embed import make_embedder

CONFIGS = {
    "dense": {"mode": "dense"},
    "bm25": {"mode": "lexical"},
    "hybrid rrf (k=60)": {"mode": "hybrid", "fusion": "rrf"},
    "hybrid zscore": {"mode": "hybrid", "fusion": "zscore"},
    "hybrid minmax": {"mode": "hybrid", "fusion": "minmax"},
    "hybrid zscore dense 0.6": {"mode": "hybrid", "fusion": "zscore", "dense_weight": 0.6},
    "hybrid zscore dense 0.4": {"mode": "hybrid", "fusion": "zscore", "dense_weight": 0.4},
}
# fusion alone: the later stages that search(q) runs by default (issue 18) stay off
CONFIGS = {name: {**o, "temporal": False, "rerank": "off"} for name, o in CONFIGS.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="locomo10.json-shaped file")
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--json", default=None, help="also write the raw summaries here")
    args = parser.parse_args()
    convs = load_locomo(args.data)
    embedder = make_embedder()
    results: dict[str, list] = {name: [] for name in CONFIGS}
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for conv in convs:
            with Memory.open(Path(tmp) / conv.sample_id, embedder=embedder) as mem:
                ingest_conversation(mem, conv)
                for name, options in CONFIGS.items():
                    rows, _ = run_questions(mem, conv, options, k=20)
                    results[name] += rows
            print(f"{conv.sample_id}: done ({time.time() - started:.0f} s)", file=sys.stderr)
    summaries = {name: summarize(rows) for name, rows in results.items()}
    if args.json:
        Path(args.json).write_text(json.dumps(summaries, indent=2))
    n = summaries["dense"]["overall"]["n"]
    md = "\n\n".join(
        [
            "## Hybrid fusion on LoCoMo dev (issue 2)",
            f"Evidence retrieval, categories 1-4 ({n} questions, five conversations), MiniLM, "
            "no model. One fresh store per conversation.",
            provenance(" ".join(["python", *sys.argv])),
            "### Overall",
            markdown_table(summaries, metrics=("R@1", "R@5", "R@10", "R@20", "hit@10", "MRR")),
            "### Recall@10 per category",
            category_table(summaries, "R@10"),
        ]
    )
    write_section(args.out, "fusion", md)
    print(markdown_table(summaries, metrics=("R@1", "R@5", "R@10", "R@20", "MRR")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
