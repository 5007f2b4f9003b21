"""Store benchmark (issue 2): ingest overhead, search latency at 10k / 100k, open time, RSS.

Usage:
    python scripts/bench_store.py [--sizes 10000 100000] [--throughput-n 4000] [--queries 300]

1. Ingest overhead: raw MiniLM batch encoding of N texts against ``Memory.add_many`` on the same
   texts into a fresh store (embedding included), alternated (5 rounds by default); the ratio of the
   medians is the figure (target >= 0.9: the store adds < 10% on top of embedding).
2. Stores of each size are built with ``add_many`` from vectors computed once by MiniLM (a
   cache-backed embedder: the store path is real, the model is not run twice for the same text).
3. Search latency at k=10 per size: each query once cold (the query embedding included) and once
   warm (its vector cached: the store's own work), hybrid and dense.
4. Opening the largest store in a fresh process: time to open, to the first search, peak RSS.
Results go to the `store` section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from lab.report import provenance, write_section
from lab.stats import percentile as pct
from lab.synthetic import synthetic_texts

from localmem import Memory
from localmem.embed import make_embedder
from localmem.embed.base import Embedder
from localmem.text import content_hash


class CachedEmbedder(Embedder):
    """Serves vectors MiniLM already computed for these exact texts (same name and dim)."""

    def __init__(self, real: Embedder, vectors: dict[str, np.ndarray]) -> None:
        super().__init__(query_cache_size=0)
        self.real, self.vectors, self.name = real, vectors, real.name

    @property
    def dim(self) -> int:
        return self.real.dim

    def embed_batch(self, texts):
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.real.embed_batch(missing), strict=True))
        return np.stack([self.vectors[t] for t in texts])

    def count_tokens(self, text: str) -> int:
        return self.real.count_tokens(text)


def queries(n: int, seed: int = 7) -> list[str]:
    from lab import synthetic as s

    rng = random.Random(seed)
    forms = [
        lambda: f"What did {rng.choice(s._NAMES)} do in {rng.choice(s._PLACES)}?",
        lambda: f"Which problem does {rng.choice(s._TECH_SUBJECTS)} have?",
        lambda: f"who {rng.choice(s._ACTIVITIES)} {rng.choice(s._WHEN)}",
        lambda: f"{rng.choice(s._TECH_FINDINGS)}",
        lambda: f"How did {rng.choice(s._NAMES)} feel about it?",
    ]
    return [rng.choice(forms)() for _ in range(n)]


def throughput(texts: list[str], rounds: int = 3) -> dict:
    real = make_embedder()
    real.embed_batch(["warm up"])
    raw, store = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            t0 = time.perf_counter()
            for i in range(0, len(texts), 256):
                real.embed_batch(texts[i : i + 256])
            raw.append(len(texts) / (time.perf_counter() - t0))
            with Memory.open(Path(tmp) / f"s{r}", embedder=real) as mem:
                t0 = time.perf_counter()
                mem.add_many(texts, batch_size=256)
                store.append(len(texts) / (time.perf_counter() - t0))
    return {
        "n": len(texts),
        "embedder": real.name,
        "backend": type(real).__name__,
        "raw_items_per_s": statistics.median(raw),
        "add_many_items_per_s": statistics.median(store),
        "raw_runs": raw,
        "add_many_runs": store,
        "ratio": statistics.median(store) / statistics.median(raw),
    }


def latency(mem: Memory, qs: list[str], mode: str) -> dict:
    cold, warm = [], []
    for q in qs:
        mem.embedder._query_cache.pop(content_hash(q), None)
        t0 = time.perf_counter()
        mem.search(q, k=10, mode=mode)
        cold.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        mem.search(q, k=10, mode=mode)
        warm.append((time.perf_counter() - t0) * 1000)
    return {
        "cold_p50": pct(cold, 50), "cold_p95": pct(cold, 95),
        "warm_p50": pct(warm, 50), "warm_p95": pct(warm, 95),
    }  # fmt: skip


OPEN_PROBE = """
import json, resource, sys, time
t0 = time.perf_counter()
from localmem import Memory
t1 = time.perf_counter()
mem = Memory.open(sys.argv[1])
t2 = time.perf_counter()
mem.search("What did Ana do in Lisbon?", k=10)
t3 = time.perf_counter()
mem.search("Which problem does the cache layer have?", k=10)
t4 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1, "first_search_s": t3 - t2,
                  "second_search_ms": (t4 - t3) * 1000,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
mem.close()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--throughput-n", type=int, default=4000)
    parser.add_argument(
        "--rounds", type=int, default=5, help="alternated raw / add_many rounds (medians)"
    )
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--keep", help="keep the largest store in this folder")
    args = parser.parse_args()

    biggest = max(args.sizes)
    texts = list(synthetic_texts(biggest))
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731

    log(f"throughput on {args.throughput_n} texts ...")
    tp = throughput(texts[: args.throughput_n], args.rounds)
    log(json.dumps(tp))

    real = make_embedder()
    log(f"embedding {biggest} texts once ...")
    t0 = time.perf_counter()
    vectors: dict[str, np.ndarray] = {}
    for i in range(0, biggest, 512):
        batch = texts[i : i + 512]
        vectors.update(zip(batch, real.embed_batch(batch), strict=True))
    embed_s = time.perf_counter() - t0
    cached = CachedEmbedder(real, vectors)
    qs = queries(args.queries)

    sizes: dict[int, dict] = {}
    tmp = tempfile.TemporaryDirectory()
    root = Path(args.keep) if args.keep else Path(tmp.name)
    for size in sorted(args.sizes):
        path = root / f"store-{size}"
        with Memory.open(path, embedder=cached) as mem:
            t0 = time.perf_counter()
            mem.add_many(texts[:size], batch_size=1000)
            build_s = time.perf_counter() - t0
        mem = Memory.open(path, embedder=real)  # real MiniLM for queries
        mem.search("warm up the lexical index", k=10)
        entry = {"build_s_without_embedding": build_s,
                 "store_items_per_s_without_embedding": size / build_s}  # fmt: skip
        for mode in ("hybrid", "dense"):
            entry[mode] = latency(mem, qs, mode)
        mem.close()
        disk = sum(p.stat().st_size for p in path.iterdir() if p.is_file())
        entry["disk_mb"] = disk / 1e6
        sizes[size] = entry
        log(f"{size}: {json.dumps(entry)}")
    probe = subprocess.run(
        [sys.executable, "-c", OPEN_PROBE, str(root / f"store-{biggest}")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    opened = json.loads(probe.stdout.strip().splitlines()[-1])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tmp.cleanup()

    rows = [
        "| memories | mode | p50 cold | p95 cold | p50 warm | p95 warm |",
        "|---|---|---|---|---|---|",
    ]
    for size, e in sizes.items():
        for mode in ("hybrid", "dense"):
            lat = e[mode]
            rows.append(f"| {size:,} | {mode} | {lat['cold_p50']:.1f} | {lat['cold_p95']:.1f} | "
                        f"{lat['warm_p50']:.1f} | {lat['warm_p95']:.1f} |")  # fmt: skip
    build = ", ".join(
        f"{s:,}: {e['store_items_per_s_without_embedding']:.0f} items/s" for s, e in sizes.items()
    )
    runs = lambda values: ", ".join(f"{x:.0f}" for x in values)  # noqa: E731
    md = f"""## Store (issue 2)

{provenance(" ".join(["python", *sys.argv]))}

**Ingest overhead** ({tp["n"]:,} synthetic texts, batches of 256, {len(tp["raw_runs"])} alternated
rounds, medians): raw MiniLM batch encoding {tp["raw_items_per_s"]:.0f} items/s; `Memory.add_many`
on the same texts into a fresh store {tp["add_many_items_per_s"]:.0f} items/s:
**ratio {tp["ratio"]:.2f}** (target >= 0.9). Runs: raw {runs(tp["raw_runs"])}; add_many
{runs(tp["add_many_runs"])}.

**Search latency at k=10**, ms, {args.queries} queries; *cold* includes embedding the query with
MiniLM, *warm* is the same query again (vector cached: the store's own work). Stores built with
`add_many` from vectors MiniLM computed once ({biggest:,} texts in {embed_s:.0f} s).

{chr(10).join(rows)}

Targets: p95 < 30 ms including the query embedding, < 5 ms without it.

**Build without embedding**: {build}.
**On disk**: {", ".join(f"{s:,}: {e['disk_mb']:.0f} MB" for s, e in sizes.items())}.

**Opening the {biggest:,}-memory store in a fresh process**: import {opened["import_s"]:.2f} s,
open {opened["open_s"]:.2f} s, first search {opened["first_search_s"]:.2f} s (loads MiniLM and the
BM25 postings), next search {opened["second_search_ms"]:.1f} ms; peak RSS of that process
{opened["peak_rss_mb"]:.0f} MB. Peak RSS of the whole benchmark process: {peak:.0f} MB.
"""
    write_section(args.out, "store", md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
