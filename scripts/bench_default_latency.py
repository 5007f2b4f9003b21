"""Search latency of the default pipeline against plain hybrid, side by side (issue 18).

    python scripts/bench_default_latency.py [--size 100000] [--queries 300] \
        [--vectors random|real] [--work .bench/latency]

The store is grown as ``scripts/bench_scale.py`` grows it (its synthetic texts through
``add_many``; ``--vectors random`` uses random unit vectors instead of MiniLM's, which takes
minutes instead of an hour on 2 cores: the dense list is then random, but every step of the
search costs what it costs with real vectors). A fresh process then runs each query through
each configuration in alternation, the query embedded every time (the embedder's cache
emptied), and reports p50/p95 per configuration: the ratio is the figure to trust on a shared
machine, where absolute times move with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_scale import grow, log  # noqa: E402
from bench_store import queries as make_queries  # noqa: E402

from localmem.embed import make_embedder  # noqa: E402

CONFIGS = {
    "hybrid": {"temporal": False, "rerank": "off"},
    "default": {},
}

PROBE = r"""
import json, os, sys, time
from localmem import Memory
from localmem.text import content_hash
queries, configs = json.loads(sys.argv[2]), json.loads(sys.argv[3])
mem = Memory.open(sys.argv[1], create=False)
for name, opts in configs.items():  # warm up every path once
    mem.search(queries[0], k=10, **opts)
times = {name: [] for name in configs}
for i, q in enumerate(queries[1:]):
    names = list(configs) if i % 2 == 0 else list(reversed(configs))
    for name in names:
        mem.embedder._query_cache.pop(content_hash(q), None)
        a = time.perf_counter(); mem.search(q, k=10, **configs[name]); b = time.perf_counter()
        times[name].append((b - a) * 1000)
mem.close()
print(json.dumps({"ms": times, "loadavg": os.getloadavg()}))
"""


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--vectors", choices=("random", "real"), default="random")
    p.add_argument("--work", type=Path, default=ROOT / ".bench" / "latency")
    p.add_argument("--docs", type=Path, help="write the result into this markdown file")
    args = p.parse_args(argv)

    store = args.work / f"store-{args.size}-{args.vectors}"
    if not store.exists():
        name = make_embedder().name
        have = 0
        for stop in range(min(args.size, 20_000), args.size + 1, 20_000):
            log(f"growing to {stop}")
            grow(store, stop, have, args.vectors, name)
            have = stop
        if have < args.size:
            grow(store, args.size, have, args.vectors, name)
    queries = make_queries(args.queries + 1)
    log(f"probing {len(queries)} queries x {len(CONFIGS)} configurations")
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(store), json.dumps(queries), json.dumps(CONFIGS)],
        check=True,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    base = None
    load = ", ".join(f"{x:.1f}" for x in result["loadavg"])
    lines = [
        f"{args.size:,} memories, {args.vectors} vectors, {len(queries) - 1} queries, k=10, "
        f"each query embedded every time; load average at the end (1, 5, 15 min): {load}",
        "",
        "| configuration | p50 ms | p95 ms | p50 / hybrid's |",
        "|---|---|---|---|",
    ]
    for name, ms in result["ms"].items():
        p50, p95 = pct(ms, 50), pct(ms, 95)
        base = base or p50
        lines.append(f"| {name} | {p50:.2f} | {p95:.2f} | {p50 / base:.2f} |")
    text = "\n".join(lines)
    if args.docs:
        from localmem.experiments.report import provenance, write_section

        command = "python scripts/bench_default_latency.py " + " ".join(sys.argv[1:])
        write_section(args.docs, "default-latency", provenance(command) + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
