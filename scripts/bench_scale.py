"""Scale benchmark (issue 10): one store grown 10k -> 100k -> 1M memories, measured at each size.

Usage:
    python scripts/bench_scale.py [--sizes 10000 100000 1000000] [--queries 300]
        [--vectors real|random] [--ratio-n 4000] [--redo]

The store is grown through ``Memory.add_many`` (batches of 1000) with MiniLM vectors computed
beforehand (scripts/bench_data.py, cached in .bench/data): the embedding step is replaced, every
other step of the add path (validation, DuckDB rows, BM25 postings, hnswlib) is real. At each size:
- add throughput of the segment just added (items/s, embedding excluded);
- index build: the hnswlib file deleted and rebuilt from DuckDB by a fresh ``Memory.open``;
- a fresh process opens the store and searches ``--queries`` queries at k=10 (``search(q)``):
  open time, first search, p50/p95 with the query embedded (*cold*) and with its vector cached
  (*warm*), peak RSS of that process;
- size on disk.
Separately, ``--ratio-n`` texts are embedded raw and through ``add_many`` into a fresh store
(three alternated rounds) for the ingest/raw-embedding ratio, with the default embedder.
``--vectors random`` uses random unit vectors instead of MiniLM's (for trying the path quickly;
its numbers are labelled and are not results). Each size's results are cached under
.bench/scale/results; the grown store stays in .bench/scale/store, so a rerun resumes.
Results go to the ``scale`` section of docs/benchmarks.md and docs/scale.png.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_data  # noqa: E402
from bench_store import pct  # noqa: E402
from bench_store import queries as make_queries  # noqa: E402
from bench_store import throughput as store_throughput  # noqa: E402

from localmem import Memory  # noqa: E402
from localmem.embed import make_embedder  # noqa: E402
from localmem.embed.base import Embedder  # noqa: E402

WORK = ROOT / ".bench" / "scale"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def hwm_mb() -> float:
    """Peak RSS of this process (VmHWM: unlike ru_maxrss it is not inherited across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Precomputed(Embedder):
    """Serves vectors computed beforehand for the texts of the current segment (same name)."""

    def __init__(self, name: str, dim: int) -> None:
        super().__init__(query_cache_size=0)
        self.name, self._dim = name, dim
        self.rows: dict[str, np.ndarray] = {}

    @property
    def dim(self) -> int:
        return self._dim

    def serve(self, texts: list[str], vectors: np.ndarray) -> None:
        self.rows = dict(zip(texts, vectors, strict=True))

    def embed_batch(self, texts):
        return np.stack([self.rows[t] for t in texts]).astype(np.float32)


def segment_vectors(mode: str, start: int, stop: int) -> np.ndarray:
    if mode == "real":
        return np.asarray(bench_data.vectors(stop)[start:stop], dtype=np.float32)
    rng = np.random.default_rng(start)
    v = rng.standard_normal((stop - start, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def grow(store: Path, size: int, have: int, mode: str, name: str) -> dict:
    """Add texts[have:size] to the store; returns the segment's add rate."""
    texts = bench_data.texts(size)[have:size]
    vectors = segment_vectors(mode, have, size)
    emb = Precomputed(name, 384)
    emb.serve(texts, vectors)
    with Memory.open(store, embedder=emb) as mem:
        t0 = time.perf_counter()
        mem.add_many(texts, batch_size=1000)
        add_s = time.perf_counter() - t0
        t0 = time.perf_counter()
    close_s = time.perf_counter() - t0  # the index save on close
    return {
        "segment": len(texts),
        "add_s": add_s,
        "add_items_per_s": len(texts) / add_s,
        "close_s": close_s,
        "builder_rss_mb": hwm_mb(),
    }


PROBE = r"""
import json, os, sys, time
t0 = time.perf_counter()
from localmem import Memory
from localmem.text import content_hash
t1 = time.perf_counter()
queries = json.loads(sys.argv[2])
mem = Memory.open(sys.argv[1], create=False)
t2 = time.perf_counter()
mem.search(queries[0], k=10)
t3 = time.perf_counter()
cold, warm = [], []
for q in queries[1:]:
    mem.embedder._query_cache.pop(content_hash(q), None)
    a = time.perf_counter(); mem.search(q, k=10); b = time.perf_counter()
    mem.search(q, k=10); c = time.perf_counter()
    cold.append((b - a) * 1000); warm.append((c - b) * 1000)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
mem.close()
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1, "first_search_s": t3 - t2,
                  "cold_ms": cold, "warm_ms": warm, "rss_mb": int(hwm) / 1024,
                  "loadavg": os.getloadavg()}))
"""

REBUILD = r"""
import json, sys, time
from localmem import Memory
t0 = time.perf_counter()
mem = Memory.open(sys.argv[1], create=False)
t1 = time.perf_counter()
notices = list(mem.store.notices)
mem.close()
print(json.dumps({"rebuild_open_s": t1 - t0, "notices": notices}))
"""


def run_py(code: str, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=str(ROOT)
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cli_search_s(store: Path, query: str, runs: int = 3) -> list[float]:
    """Wall clock of ``localmem search`` in a fresh process each time (interpreter start,
    imports, open, the query embedded, the answer printed): what a person at a shell waits."""
    cli = Path(sys.executable).parent / "localmem"
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([str(cli), "search", "--store", str(store), "-k", "10", query],
                       check=True, capture_output=True, cwd=str(ROOT))  # fmt: skip
        times.append(time.perf_counter() - t0)
    return times


def measure(store: Path, qs: list[str]) -> dict:
    (store / "vectors.hnsw").unlink(missing_ok=True)
    rebuilt = run_py(REBUILD, str(store))
    probe = run_py(PROBE, str(store), json.dumps(qs))
    cli = cli_search_s(store, qs[-1])
    disk = sum(p.stat().st_size for p in store.iterdir() if p.is_file())
    return {
        **rebuilt,
        "import_s": probe["import_s"],
        "open_s": probe["open_s"],
        "first_search_s": probe["first_search_s"],
        "cold_p50_ms": pct(probe["cold_ms"], 50),
        "cold_p95_ms": pct(probe["cold_ms"], 95),
        "warm_p50_ms": pct(probe["warm_ms"], 50),
        "warm_p95_ms": pct(probe["warm_ms"], 95),
        "search_rss_mb": probe["rss_mb"],
        "cli_search_s": cli,
        "disk_mb": disk / 1e6,
        "loadavg": probe["loadavg"],
    }


def ingest_ratio(n: int, rounds: int = 3) -> dict:
    """Raw batch embedding against add_many (embedding included), alternated, medians."""
    r = store_throughput(bench_data.texts(n), rounds)
    return {"n": n, "embedder": r["embedder"], "backend": r["backend"],
            "raw": r["raw_runs"], "add_many": r["add_many_runs"], "ratio": r["ratio"]}  # fmt: skip


def cli_text(times: list[float] | None) -> str:
    return f"{statistics.median(times):.2f} (max {max(times):.2f})" if times else "–"


def report(results: dict, ratio: dict | None, args, out: str) -> str:
    from lab.report import provenance, write_section

    rows = [
        "| memories | add items/s | index rebuild s | open s | first search s | search p50 / p95 "
        "ms (query embedded) | p50 / p95 ms (vector cached) | search RSS MB | disk MB | "
        "cold `localmem search` s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sorted(results, key=int):
        r = results[size]
        rows.append(
            f"| {int(size):,} | {r['add_items_per_s']:.0f} | {r['rebuild_open_s']:.1f} | "
            f"{r['open_s']:.2f} | {r['first_search_s']:.2f} | {r['cold_p50_ms']:.1f} / "
            f"{r['cold_p95_ms']:.1f} | {r['warm_p50_ms']:.1f} / {r['warm_p95_ms']:.1f} | "
            f"{r['search_rss_mb']:.0f} | {r['disk_mb']:.0f} | "
            f"{cli_text(r.get('cli_search_s'))} |"
        )
    loads = [results[s]["loadavg"][0] for s in results]
    ratio_text = ""
    if ratio:
        ratio_text = (
            f"**Ingest against raw embedding** ({ratio['n']:,} texts, batches of 256, "
            f"{ratio['backend']}, three alternated rounds, medians): raw "
            f"{statistics.median(ratio['raw']):.0f} items/s, `add_many` "
            f"{statistics.median(ratio['add_many']):.0f} items/s: **ratio {ratio['ratio']:.2f}** "
            "(target >= 0.9)."
        )
    vectors = (
        f"MiniLM vectors computed beforehand (scripts/bench_data.py, {make_embedder().name}, the "
        "default embedder)"
        if args.vectors == "real"
        else "**random unit vectors (a trial of the path, not a result)**"
    )
    md = f"""## Scale (issue 10)

{provenance(" ".join(["python", *sys.argv]))}
- load average (1 min) during the probes: {min(loads):.1f}-{max(loads):.1f} on \
{os.cpu_count()} cores

One store grown 10k -> 100k -> 1M with `add_many` (batches of 1000) and {vectors}: the embedding
step is replaced, the rest of the add path is real. *Add* is the rate of the segment that took the
store to that size. *Index rebuild*: the hnswlib file deleted and rebuilt from DuckDB by
`Memory.open`. *Open*, *first search* (loads the BM25 postings and the embedder), the search
latencies ({args.queries} queries, k=10, the default `search(q)`: hybrid, temporal attention and
the model-free reranker) and *search RSS* (peak of that process) come from a fresh process per
size. *Cold `localmem search`*: the wall clock of the CLI
answering one query in a fresh process (interpreter start included), median of three runs.

{chr(10).join(rows)}

{ratio_text}

Targets: ingest >= 0.9x raw embedding; at 1M search p95 < 50 ms and RSS < 4 GB; a cold
`localmem search` on a 100k store < 3 s.

![scale](scale.png)
"""
    write_section(out, "scale", md)
    return md


def plot(results: dict, file: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(int(s) for s in results)
    get = lambda key: [results[str(s)][key] for s in sizes]  # noqa: E731
    panels = [
        (["add_items_per_s"], "add, items/s"),
        (["rebuild_open_s"], "index rebuild, s"),
        (["cold_p95_ms", "warm_p95_ms"], "search p95, ms"),
        (["open_s", "first_search_s"], "open / first search, s"),
        (["search_rss_mb"], "search process RSS, MB"),
        (["disk_mb"], "disk, MB"),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5))
    for ax, (keys, title) in zip(axes.ravel(), panels, strict=True):
        for key in keys:
            ax.plot(sizes, get(key), marker="o", label=key)
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("memories")
        if len(keys) > 1:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(file, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--vectors", choices=("real", "random"), default="real")
    parser.add_argument("--ratio-n", type=int, default=4000, help="0 skips the ratio")
    parser.add_argument("--redo", action="store_true", help="start the store again")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()

    work = WORK / args.vectors
    store, results_dir = work / "store", work / "results"
    if args.redo:
        shutil.rmtree(work, ignore_errors=True)
    results_dir.mkdir(parents=True, exist_ok=True)
    qs = make_queries(args.queries + 1)
    name = make_embedder().name
    results: dict[str, dict] = {}
    have = 0
    for size in sorted(args.sizes):
        file = results_dir / f"{size}.json"
        if file.exists():
            results[str(size)] = json.loads(file.read_text())
            have = size
            log(f"{size}: cached")
            continue
        with Memory.open(store, embedder=Precomputed(name, 384)) as mem:
            have = mem.count()
        if have > size:
            raise SystemExit(f"{store} already holds {have} memories (> {size}); use --redo")
        log(f"growing to {size} ({args.vectors} vectors)")
        entry = grow(store, size, have, args.vectors, name)
        log(f"  {entry['add_items_per_s']:.0f} items/s; measuring")
        entry.update(measure(store, qs))
        file.write_text(json.dumps(entry, indent=2))
        results[str(size)] = entry
        log(f"{size}: {json.dumps({k: v for k, v in entry.items() if k != 'notices'})}")
        have = size
    ratio = None
    if args.ratio_n:
        ratio_file = work / f"ratio-{args.ratio_n}.json"
        if ratio_file.exists() and not args.redo:
            ratio = json.loads(ratio_file.read_text())
        else:
            log(f"ingest ratio on {args.ratio_n} texts")
            ratio = ingest_ratio(args.ratio_n)
            ratio_file.write_text(json.dumps(ratio, indent=2))
    if args.no_write:
        print(json.dumps({"sizes": results, "ratio": ratio}, indent=2))
        return 0
    plot(results, Path(args.out).parent / "scale.png")
    print(report(results, ratio, args, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
