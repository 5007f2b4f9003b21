"""Server benchmark (issue 19): what `localmem serve` costs against using the store in-process.

Usage:
    python scripts/bench_serve.py [--sizes 10000 100000] [--queries 200] [--rounds 2]
        [--clients 1 4 16] [--adds 320] [--docs docs/benchmarks.md]

For each size a store is built once (in .bench/serve/) through ``Memory.add_many`` with MiniLM
vectors computed beforehand (scripts/bench_data.py), as scripts/bench_scale.py does. Then, in
``--rounds`` alternated rounds (in-process, served, in-process, served... so that the machine's
load drifts over both alike):

- **search**: the same queries at k=10 (default hybrid), each searched once to warm the query
  vector cache and then timed, so both sides time the search itself; the served side goes
  through ``Memory.connect`` (HTTP on loopback, JSON both ways) to ``localmem serve`` in a child
  process. The overhead is the difference of the percentiles.
- **add**: ``--adds`` new texts added one ``add`` call at a time (each embedded by the store's
  real embedder): one in-process writer against 1, 4 and 16 client threads of a served store.

Results go to the ``serve`` section of ``--docs`` (with the machine's load).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_data  # noqa: E402
from bench_scale import Precomputed, segment_vectors  # noqa: E402
from bench_store import pct  # noqa: E402
from bench_store import queries as make_queries  # noqa: E402
from lab.served import start_server, stop_server  # noqa: E402

from localmem import Memory  # noqa: E402

WORK = ROOT / ".bench" / "serve"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build(size: int) -> Path:
    """A store of ``size`` synthetic memories (kept for reruns)."""
    store = WORK / f"store-{size}"
    if (store / "built").exists():
        return store
    shutil.rmtree(store, ignore_errors=True)
    texts = bench_data.texts(size)
    emb = Precomputed("all-MiniLM-L6-v2+int8", 384)
    emb.serve(texts, segment_vectors("real", 0, size))
    t0 = time.perf_counter()
    with Memory.open(store, embedder=emb) as mem:
        mem.add_many(texts, batch_size=1000)
    (store / "built").write_text("ok")
    log(f"built {size} memories in {time.perf_counter() - t0:.0f} s")
    return store


def timed_searches(mem, queries: list[str]) -> list[float]:
    for q in queries:  # warm: the query vectors are cached on both sides alike
        mem.search(q, k=10)
    out = []
    for q in queries:
        t0 = time.perf_counter()
        mem.search(q, k=10)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def adds(open_client, texts: list[str], clients: int) -> float:
    """Items per second adding ``texts`` one call at a time from ``clients`` threads."""
    shares = [texts[i::clients] for i in range(clients)]
    errors: list[BaseException] = []

    def run(share: list[str]) -> None:
        try:
            with open_client() as mem:
                for text in share:
                    mem.add(text, kind="note")
        except BaseException as exc:  # reported below; a benchmark that lost writes is void
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(share,)) for share in shares]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"an add failed: {errors[0]!r}")
    return len(texts) / (time.perf_counter() - t0)


def fresh_texts(size: int, round_no: int, n: int, label: str) -> list[str]:
    return [f"{label} round {round_no} note {i}: {t}" for i, t in enumerate(bench_data.texts(n))]


def measure(size: int, args) -> dict:
    store = build(size)
    queries = make_queries(args.queries)
    local_ms: list[float] = []
    served_ms: list[float] = []
    local_add: list[float] = []
    served_add: dict[int, list[float]] = {c: [] for c in args.clients}
    loads = []
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        with Memory.open(store) as mem:
            local_ms += timed_searches(mem, queries)
            texts = fresh_texts(size, r, args.adds, "local")
            local_add.append(adds(lambda m=mem: _Borrowed(m), texts, 1))
        log(f"{size}: round {r + 1} in-process done")
        proc = start_server(store, timeout_s=300)
        try:
            with Memory.connect(store) as remote:
                served_ms += timed_searches(remote, queries)
            for c in args.clients:
                texts = fresh_texts(size, r, args.adds, f"served{c}")
                served_add[c].append(adds(lambda: Memory.connect(store), texts, c))
        finally:
            stop_server(proc)
        log(f"{size}: round {r + 1} served done")
    return {
        "size": size,
        "queries": len(queries),
        "rounds": args.rounds,
        "local": {"p50": pct(local_ms, 50), "p95": pct(local_ms, 95)},
        "served": {"p50": pct(served_ms, 50), "p95": pct(served_ms, 95)},
        "local_add": statistics.median(local_add),
        "served_add": {c: statistics.median(v) for c, v in served_add.items()},
        "load": statistics.mean(loads),
    }


class _Borrowed:
    """An open Memory lent to ``adds`` without closing it at the end."""

    def __init__(self, mem) -> None:
        self.mem = mem

    def __enter__(self):
        return self.mem

    def __exit__(self, *exc) -> None:
        return None


def report(results: list[dict], args) -> str:
    lines = [
        "## Server overhead (issue 19)",
        "",
        f"`python scripts/bench_serve.py --sizes {' '.join(map(str, args.sizes))} "
        f"--queries {args.queries} --rounds {args.rounds} "
        f"--clients {' '.join(map(str, args.clients))} --adds {args.adds}`, "
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores, "
        f"load average during the runs {', '.join(format(r['load'], '.1f') for r in results)} "
        "(1-minute load average; 2 or more means other jobs shared the cores).",
        "",
        "Search, k=10, default hybrid, query vectors cached on both sides (so the search is "
        "timed, not the embedding); served = `Memory.connect` over loopback HTTP to "
        "`localmem serve` in another process. In-process and served rounds alternate.",
        "",
        "| memories | in-process p50 / p95 ms | served p50 / p95 ms | overhead p50 / p95 ms |",
        "|---|---|---|---|",
    ]
    for r in results:
        lo, se = r["local"], r["served"]
        lines.append(
            f"| {r['size']:,} | {lo['p50']:.1f} / {lo['p95']:.1f} | {se['p50']:.1f} / "
            f"{se['p95']:.1f} | {se['p50'] - lo['p50']:+.1f} / {se['p95'] - lo['p95']:+.1f} |"
        )
    lines += [
        "",
        f"Adds, one `add` call per memory (each embedded by the real MiniLM int8), {args.adds} "
        "per run, items/s (median of the rounds):",
        "",
        "| memories | in-process, 1 writer | "
        + " | ".join(f"served, {c} clients" for c in args.clients)
        + " |",
        "|---|---|" + "---|" * len(args.clients),
    ]
    for r in results:
        cells = " | ".join(f"{r['served_add'][c]:.0f}" for c in args.clients)
        lines.append(f"| {r['size']:,} | {r['local_add']:.0f} | {cells} |")
    return "\n".join(lines) + "\n"


def write_section(docs: Path, text: str) -> None:
    body = docs.read_text(encoding="utf-8") if docs.exists() else ""
    head = text.splitlines()[0]
    if head in body:
        start = body.index(head)
        nxt = body.find("\n## ", start + len(head))
        body = body[:start] + text + (body[nxt + 1 :] if nxt != -1 else "")
    else:
        body = body.rstrip() + "\n\n" + text
    docs.write_text(body, encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--adds", type=int, default=320)
    ap.add_argument("--docs", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = ap.parse_args()
    results = [measure(size, args) for size in args.sizes]
    (WORK / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    text = report(results, args)
    print(text)
    if args.docs:
        write_section(args.docs, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
