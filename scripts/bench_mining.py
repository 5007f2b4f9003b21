"""What attribute mining costs at ingest: add_many with mining off, inline, and deferred.

Usage:
    python scripts/bench_mining.py [--n 1000] [--out docs/benchmarks.md]

One run, the same synthetic texts (lab.synthetic, fresh texts per configuration so
no cache is shared), the model-free miner. Reports seconds and memories per second for: mining off;
inline (mined before add_many returns); deferred (add_many, then run_jobs); and the time of the
search stage with attributes filter/boost against off. The ratios are the result; absolute
numbers depend on the machine and its load. Writes the `mining` section.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lab.report import provenance, write_section
from lab.stats import percentile
from lab.synthetic import synthetic_texts

from localmem import Memory
from localmem.attributes.mining import miner_for
from localmem.config import Config
from localmem.embed import make_embedder

QUERIES = [
    "who went hiking in the mountains",
    "why is the dashboard query slow",
    "what did we decide about the cache",
    "plans for the next release",
]


def _store(tmp: str, name: str, embedder, mode: str) -> Memory:
    config = Config().with_updates(attributes={"mine_on_add": mode, "miner": "model-free"})
    mem = Memory.open(Path(tmp) / name, config=config, embedder=embedder)
    _ = miner_for(mem).index  # label embeddings are computed once per process: not an ingest cost
    return mem


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="memories per configuration")
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    embedder = make_embedder()
    embedder.embed_batch(["warm up"])
    texts = list(synthetic_texts(4 * args.n, seed=29))
    chunks = [texts[i * args.n : (i + 1) * args.n] for i in range(4)]
    rows = []
    query_ms = 0.0
    search_ms: dict[str, list[float]] = {"off": [], "filter": [], "boost": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i, mode in enumerate(("off", "inline", "deferred", "off")):
            mem = _store(tmp, f"{mode}{i}", embedder, mode)
            t0 = time.perf_counter()
            mem.add_many(chunks[i])
            add_s = time.perf_counter() - t0
            jobs_s = 0.0
            if mode == "deferred":
                t0 = time.perf_counter()
                mem.run_jobs()
                jobs_s = time.perf_counter() - t0
            rows.append((f"{mode} (run {i + 1})", add_s, jobs_s))
            if mode == "inline":
                miner = miner_for(mem)
                t0 = time.perf_counter()
                for q in QUERIES:  # warm: query vectors and query attributes are cached
                    miner.mine(q, vector=embedder.embed_query(q), query=True)
                query_ms = (time.perf_counter() - t0) * 1000 / len(QUERIES)
                mem.search("warm up", k=1)
                for q in QUERIES * 3:
                    for attr in search_ms:
                        result = mem.search(q, k=10, attributes=attr)
                        search_ms[attr].append(result.total_ms)
            mem.close()
            print(f"{mode}: add {add_s:.1f} s, jobs {jobs_s:.1f} s", file=sys.stderr)
    base = statistics.mean([r[1] for r in rows if r[0].startswith("off")])
    lines = [
        provenance("python scripts/bench_mining.py " + " ".join(sys.argv[1:])),
        "",
        f"{args.n} synthetic memories per configuration, model-free miner, MiniLM on CPU.",
        "",
        "| configuration | add_many s | jobs s | total s | memories/s | x mining off |",
        "|---|---|---|---|---|---|",
    ]
    for name, add_s, jobs_s in rows:
        total = add_s + jobs_s
        lines.append(
            f"| {name} | {add_s:.1f} | {jobs_s:.1f} | {total:.1f} | {args.n / total:.0f} | "
            f"{total / base:.2f} |"
        )
    lines += [
        "",
        f"Search latency on the inline store ({len(search_ms['off'])} searches, k=10, hybrid, "
        f"warm: embedding and mining a new query cost {query_ms:.0f} ms once, then cached):",
        "",
        "| attributes | p50 ms | p95 ms |",
        "|---|---|---|",
    ]
    for attr, ms in search_ms.items():
        lines.append(f"| {attr} | {percentile(ms, 50):.1f} | {percentile(ms, 95):.1f} |")
    markdown = "\n".join(lines)
    print(markdown)
    if not args.no_write:
        write_section(args.out, "mining", "### Attribute mining at ingest\n\n" + markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
