"""Search latency of the default pipeline against plain hybrid, side by side (issue 18).

    python scripts/bench_default_latency.py [--size 100000 [1000000 ...]] [--queries 300] \
        [--vectors random|real] [--chat] [--work .bench/latency] [--settings NAME=JSON]

Several ``--size`` values (issue 34: the default at 1M against 100k) are probed in the same
process, each query through every store and configuration in alternation, so the ratios
between sizes are measured side by side as those between configurations are.

``--chat`` stores every text as a chat turn ("Ana: ..." with seven speakers in turn), so the
reranker reads each candidate's neighbours as it does on a chat log stored as plain text (the
synthetic texts alone are notes: no speaker, no session, so no neighbours; docs/architecture.md).

The store is grown as ``scripts/bench_scale.py`` grows it (its synthetic texts through
``add_many``; ``--vectors random`` uses random unit vectors instead of MiniLM's, which takes
minutes instead of an hour on 2 cores: the dense list is then random, but every step of the
search costs what it costs with real vectors). A fresh process then runs each query through
each configuration in alternation, the query embedded every time (the embedder's cache
emptied), and reports p50/p95 per configuration: the ratio is the figure to trust on a shared
machine, where absolute times move with the load. Beside the wall clock, the CPU time the
process spent on each search (``time.process_time``, every thread): on a machine whose cores
other jobs hold, it is closer to what the search costs than the wall clock, which also counts
the time spent waiting for a core. And the CPU time of the searching thread alone
(``time.thread_time``): the query's embedding runs on two onnxruntime threads, so the process
time counts ~1 ms a search that the wall clock does not (the other thread's, in parallel),
the same in every configuration, which brings their ratios closer to 1 than the wall clock's;
on an idle machine the wall clock's ratios follow the searching thread's
(docs/benchmarks.md, ``latency15``).
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

import bench_data  # noqa: E402
from bench_scale import Precomputed, grow, log, segment_vectors  # noqa: E402
from bench_store import queries as make_queries  # noqa: E402
from lab.stats import percentile as pct  # noqa: E402

from localmem import Memory  # noqa: E402
from localmem.embed import make_embedder  # noqa: E402

CONFIGS = {
    "hybrid": {"temporal": False, "rerank": "off"},
    "default": {},
}

PROBE = r"""
import json, os, sys, time
from localmem import Memory
from localmem.text import content_hash
stores, queries, configs = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
read_only = sys.argv[4] == "read-only"
mems = [Memory.open(path, create=False, read_only=read_only) for path in stores]
extra = {n: o.pop("_settings", {}) for n, o in configs.items()}
settings = [{n: m.config.with_updates(search=extra[n]) for n in configs} for m in mems]
for mem, mine in zip(mems, settings):  # warm up every path once
    for name, opts in configs.items():
        mem.config = mine[name]
        mem.search(queries[0], k=10, **opts)
times = [{name: [] for name in configs} for _ in mems]
cpu = [{name: [] for name in configs} for _ in mems]
own = [{name: [] for name in configs} for _ in mems]
loads = []
for i, q in enumerate(queries[1:]):
    names = list(configs) if i % 2 == 0 else list(reversed(configs))
    order = range(len(mems)) if i % 2 == 0 else reversed(range(len(mems)))
    for s in order:
        mem = mems[s]
        for name in names:
            mem.config = settings[s][name]
            mem.embedder._query_cache.pop(content_hash(q), None)
            t = time.thread_time(); c = time.process_time(); a = time.perf_counter()
            mem.search(q, k=10, **configs[name])
            b = time.perf_counter(); d = time.process_time(); e = time.thread_time()
            times[s][name].append((b - a) * 1000)
            cpu[s][name].append((d - c) * 1000)
            own[s][name].append((e - t) * 1000)
    if i % 50 == 0:
        loads.append(os.getloadavg()[0])
for mem in mems:
    mem.close()
print(json.dumps({"ms": times, "cpu_ms": cpu, "thread_ms": own, "loadavg": os.getloadavg(),
                  "loads": loads}))
"""


SPEAKERS = ("Ana", "Ben", "Chen", "Dana", "Eli", "Farah", "Gus")


def grow_chat(store: Path, size: int, have: int, mode: str, name: str) -> None:
    """As ``bench_scale.grow``, each text stored as a turn of one of :data:`SPEAKERS`."""
    texts = [
        f"{SPEAKERS[i % len(SPEAKERS)]}: {t}"
        for i, t in enumerate(bench_data.texts(size)[have:size], start=have)
    ]
    emb = Precomputed(name, 384)
    emb.serve(texts, segment_vectors(mode, have, size))
    with Memory.open(store, embedder=emb) as mem:
        mem.add_many(texts, batch_size=1000)


def count(store: Path, name: str, *, read_only: bool = False) -> int:
    """Memories in a store (0 when there is none yet)."""
    if not store.exists():
        return 0
    with Memory.open(store, embedder=Precomputed(name, 384), read_only=read_only) as mem:
        return mem.count()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, nargs="+", default=[100_000])
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--vectors", choices=("random", "real"), default="random")
    p.add_argument("--chat", action="store_true", help="store the texts as chat turns")
    p.add_argument(
        "--as-is",
        action="store_true",
        help="measure the stores as they are (one cut short is not grown; its own size shows)",
    )
    p.add_argument("--work", type=Path, default=ROOT / ".bench" / "latency")
    p.add_argument(
        "--read-only",
        action="store_true",
        help="open the stores read-only (with --as-is: stores another process reads too)",
    )
    p.add_argument("--docs", type=Path, help="write the result into this markdown file")
    p.add_argument("--section", help="the section of --docs (default: default-latency[-chat])")
    p.add_argument(
        "--settings",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="also time the default with these search settings of the store (a candidate); "
        'or {"settings": {...}, "options": {...}}: settings and search options',
    )
    args = p.parse_args(argv)
    configs = dict(CONFIGS)
    for spec in args.settings:
        name, _, raw = spec.partition("=")
        data = json.loads(raw)
        if "settings" in data or "options" in data:  # {"settings": {...}, "options": {...}}
            configs[name] = {"_settings": data.get("settings", {}), **data.get("options", {})}
        else:
            configs[name] = {"_settings": data}

    add = grow_chat if args.chat else grow
    stores, counts = [], []
    name = make_embedder().name
    for size in args.size:
        store = args.work / f"store-{size}-{args.vectors}{'-chat' if args.chat else ''}"
        have = count(store, name, read_only=args.read_only)
        if have < size and not args.as_is:  # a store cut short grows on from where it is
            for stop in [*range(have - have % 20_000 + 20_000, size, 20_000), size]:
                log(f"growing to {stop}")
                add(store, stop, have, args.vectors, name)
                have = stop
        stores.append(str(store))
        counts.append(have)
    queries = make_queries(args.queries + 1)
    log(f"probing {len(queries)} queries x {len(configs)} configurations x {len(stores)} stores")
    out = subprocess.run(
        [
            sys.executable,
            "-P",  # not the working directory first: PYTHONPATH=<other checkout> must win
            "-c",
            PROBE,
            json.dumps(stores),
            json.dumps(queries),
            json.dumps(configs),
            "read-only" if args.read_only else "read-write",
        ],
        check=True,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    load = ", ".join(f"{x:.1f}" for x in result["loadavg"])
    during = ", ".join(f"{x:.1f}" for x in result["loads"])
    sizes = " and ".join(f"{n:,}" for n in counts)
    lines = [
        f"{sizes} memories{' stored as chat turns' if args.chat else ''}, "
        f"{args.vectors} vectors, {len(queries) - 1} queries, k=10, "
        f"each query embedded every time; load average (1 min) every 50 queries: {during}; "
        f"at the end (1, 5, 15 min): {load}",
        "",
        "| memories | configuration | p50 ms | p95 ms | p50 / hybrid's | p95 / hybrid's "
        "| p95 / smallest store's | CPU p50 / p95 ms | CPU p50, p95 / hybrid's "
        "| thread CPU p50, p95 / hybrid's |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    first = result["ms"][0]
    spent = zip(result["ms"], result["cpu_ms"], result["thread_ms"], strict=True)
    for size, (timed, used, mine) in zip(counts, spent, strict=True):
        base50, base95 = pct(timed["hybrid"], 50), pct(timed["hybrid"], 95)
        cpu50, cpu95 = pct(used["hybrid"], 50), pct(used["hybrid"], 95)
        own50, own95 = pct(mine["hybrid"], 50), pct(mine["hybrid"], 95)
        for name, ms in timed.items():
            p50, p95 = pct(ms, 50), pct(ms, 95)
            c50, c95 = pct(used[name], 50), pct(used[name], 95)
            t50, t95 = pct(mine[name], 50), pct(mine[name], 95)
            lines.append(
                f"| {size:,} | {name} | {p50:.2f} | {p95:.2f} | {p50 / base50:.2f} "
                f"| {p95 / base95:.2f} | {p95 / pct(first[name], 95):.2f} "
                f"| {c50:.2f} / {c95:.2f} | {c50 / cpu50:.2f}, {c95 / cpu95:.2f} "
                f"| {t50 / own50:.2f}, {t95 / own95:.2f} |"
            )
    text = "\n".join(lines)
    if args.docs:
        from lab.report import provenance, write_section

        command = "python scripts/bench_default_latency.py " + " ".join(sys.argv[1:])
        section = args.section or ("default-latency-chat" if args.chat else "default-latency")
        write_section(args.docs, section, provenance(command) + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
