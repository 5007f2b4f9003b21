"""hnswlib settings: build time, query time and recall@10 against exact search, on MiniLM vectors.

Usage:
    python scripts/bench_hnsw.py [--n 100000] [--queries 300] [--settings 200:64 100:64 100:96]

The vectors are the first ``n`` synthetic texts embedded by the default embedder (cached by
scripts/bench_data.py); the queries are bench_store's synthetic questions. Recall@10 is the share
of the exact inner-product top 10 (numpy over all vectors) that the index returns. Writes the
``hnsw`` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_data
from bench_store import queries
from lab.report import provenance, write_section

from localmem.embed import make_embedder

ROOT = Path(__file__).resolve().parent.parent


def measure(vectors: np.ndarray, qv: np.ndarray, exact: np.ndarray, m: int, efc: int, efs: int):
    import hnswlib

    index = hnswlib.Index(space="ip", dim=vectors.shape[1])
    index.init_index(max_elements=len(vectors), ef_construction=efc, M=m)
    t0 = time.perf_counter()
    index.add_items(vectors, np.arange(len(vectors)))
    build_s = time.perf_counter() - t0
    index.set_ef(efs)
    t0 = time.perf_counter()
    got = [index.knn_query(q, k=10)[0][0] for q in qv]  # one query at a time, as a search does
    query_ms = (time.perf_counter() - t0) / len(qv) * 1000
    recall = float(np.mean([len(set(g) & set(e)) / 10 for g, e in zip(got, exact, strict=True)]))
    return {"m": m, "efc": efc, "efs": efs, "build_s": build_s, "query_ms": query_ms,
            "recall": recall}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument(
        "--settings", nargs="+", default=["200:64", "100:96", "100:128"],
        help="ef_construction:ef_search pairs",
    )  # fmt: skip
    parser.add_argument(
        "--repeats", type=int, default=3, help="builds per setting (threaded builds vary)"
    )
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args()

    embedder = make_embedder()
    vectors = np.asarray(bench_data.vectors(args.n), dtype=np.float32)
    qv = embedder.embed_batch(queries(args.queries, seed=3))
    exact = np.argsort(-(qv @ vectors.T), axis=1)[:, :10]
    rows = []
    for pair in args.settings:
        efc, efs = (int(x) for x in pair.split(":"))
        runs = []
        for _ in range(args.repeats):
            runs.append(measure(vectors, qv, exact, args.m, efc, efs))
            print(runs[-1], file=sys.stderr, flush=True)
        med = {key: float(np.median([r[key] for r in runs])) for key in runs[0]}
        recalls = [r["recall"] for r in runs]
        rows.append(
            f"| {efc} | {efs} | {med['build_s']:.1f} | {med['query_ms']:.2f} | "
            f"{med['recall']:.4f} | {min(recalls):.4f}-{max(recalls):.4f} |"
        )
    md = f"""## hnswlib settings (issue 10)

{provenance(" ".join(["python", *sys.argv]))}

{args.n:,} synthetic texts embedded by {embedder.name} (scripts/bench_data.py), M={args.m},
{args.queries} synthetic queries, k=10. *Recall@10*: the share of the exact top 10 (inner
product over all vectors) that the index returns. *Query*: one query per call. Medians of
{args.repeats} builds per setting, with the range of recall (hnswlib builds with two threads, so
each build's graph differs).

| ef_construction | ef_search | build s | query ms | recall@10 | recall range |
|---|---|---|---|---|---|
{chr(10).join(rows)}

localmem's defaults are ef_construction 100, ef_search 96 (`store.hnsw_*` in the config).
"""
    write_section(Path(args.out), "hnsw", md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
