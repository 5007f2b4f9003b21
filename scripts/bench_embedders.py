"""The two embedders side by side: embedding and ingest speed, query latency, search at 100k.

    python scripts/bench_embedders.py --locomo PATH/locomo_dev.json [--turns 600] \
        [--size 100000] [--work /tmp/embedders] [--docs docs/benchmarks.md]

Every variant runs in a fresh process (the engine's OpenMP settings are read once, when its
library loads), one after another, in this order, so they share the machine's load:

- **embed**: the first ``--turns`` LoCoMo dev chat turns embedded in batches (texts/s), for
  MiniLM int8 (the default) and E5 with 1 and 2 threads, batch sizes 16/64/256, and E5 with
  OpenMP's default busy-waiting threads instead of ``OMP_WAIT_POLICY=PASSIVE``;
- **ingest**: the same turns through ``Memory.add_many`` into a fresh store (memories/s:
  embedding, DuckDB rows, BM25 postings, hnswlib);
- **query**: one uncached query embedding per LoCoMo question (p50, p95 ms);
- **search at --size**: one store of ``--size`` synthetic texts with random unit vectors
  (embedding 100k texts with E5 takes about an hour here), searched with ``search(q)`` (the
  default pipeline) with each real embedder embedding every query uncached: p50 and p95 of the
  whole search. The vectors are random, so only the time means anything.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from lab.stats import percentile as pct  # noqa: E402

MINILM, E5 = "all-MiniLM-L6-v2", "multilingual-e5-small"
#: name -> (model, threads, batch size, environment)
VARIANTS = {
    "MiniLM int8": (MINILM, None, 64, {}),
    "E5, 2 threads, batch 64": (E5, 2, 64, {}),
    "E5, 1 thread, batch 64": (E5, 1, 64, {}),
    "E5, 2 threads, batch 16": (E5, 2, 16, {}),
    "E5, 2 threads, batch 256": (E5, 2, 256, {}),
    "E5, 2 threads, batch 64, busy-waiting": (E5, 2, 64, {"OMP_WAIT_POLICY": "ACTIVE"}),
}


def locomo_texts(path: Path, turns: int) -> tuple[list[str], list[str]]:
    """The first ``turns`` chat turns and every question of a LoCoMo file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    texts, questions = [], []
    for conv in data:
        for _key, value in conv["conversation"].items():
            if isinstance(value, list):
                texts += [f"{t['speaker']}: {t['text']}" for t in value]
        questions += [q["question"] for q in conv["qa"]]
    return texts[:turns], questions


def config(model: str, threads: int | None, batch: int):
    from localmem.config import Config, EmbedderConfig

    return Config(embedder=EmbedderConfig(model=model, threads=threads, batch_size=batch))


def worker(spec: dict) -> dict:
    """One variant's embed, ingest and query figures (run in a fresh process)."""
    from localmem.embed import make_embedder
    from localmem.memory import Memory

    cfg = config(spec["model"], spec["threads"], spec["batch"])
    texts, questions = locomo_texts(Path(spec["locomo"]), spec["turns"])
    embedder = make_embedder(cfg.embedder)
    start = time.perf_counter()
    embedder.embed_batch(["warm up"])
    load_s = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), 256):  # as add_many hands them over
        embedder.embed_batch(texts[i : i + 256])
    embed_s, embed_cpu = time.perf_counter() - start, time.process_time() - cpu
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory.open(Path(tmp) / "s", config=cfg, embedder=embedder) as mem,
    ):
        start, cpu = time.perf_counter(), time.process_time()
        mem.add_many([{"content": t} for t in texts])
        ingest_s, ingest_cpu = time.perf_counter() - start, time.process_time() - cpu
    times = []
    for q in questions[: spec["queries"]]:
        start = time.perf_counter()
        embedder.embed_queries([q])
        times.append((time.perf_counter() - start) * 1000)
    return {
        "name": embedder.name,
        "load_s": load_s,
        "embed_per_s": len(texts) / embed_s,
        "ingest_per_s": len(texts) / ingest_s,
        # per second of CPU time (all threads): the cost, whatever else the machine runs
        "embed_per_cpu_s": len(texts) / embed_cpu,
        "ingest_per_cpu_s": len(texts) / ingest_cpu,
        "query_p50_ms": pct(times, 50),
        "query_p95_ms": pct(times, 95),
    }


def synthetic_store(folder: Path, size: int) -> None:
    """A store of ``size`` synthetic texts with random unit vectors (made once, reused)."""
    import bench_data

    from localmem.embed.base import Embedder
    from localmem.memory import Memory

    class Random(Embedder):
        name, dim = "synthetic", 384

        def __init__(self) -> None:
            super().__init__()
            self.rng = np.random.default_rng(5)

        def embed_batch(self, texts):
            v = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

    texts = bench_data.texts(size)
    with Memory.open(folder, embedder=Random()) as mem:
        for i in range(0, len(texts), 5000):
            mem.add_many([{"content": t} for t in texts[i : i + 5000]])


def search_worker(spec: dict) -> dict:
    """Search p50/p95 on the synthetic store, each query embedded by the real embedder."""
    from localmem.embed import make_embedder
    from localmem.embed.base import Embedder
    from localmem.memory import Memory

    real = make_embedder(config(spec["model"], spec["threads"], spec["batch"]).embedder)

    class Queries(Embedder):
        """The real embedder's query path under the synthetic store's name; no query cache."""

        name, dim = "synthetic", 384

        def __init__(self) -> None:
            super().__init__(query_cache_size=0)

        def embed_batch(self, texts):
            return real.embed_batch(texts)

        def embed_queries(self, texts):
            return real.embed_queries(texts)

    _, questions = locomo_texts(Path(spec["locomo"]), 0)
    with Memory.open(Path(spec["store"]), embedder=Queries()) as mem:
        mem.search("warm up")
        times = []
        for q in questions[: spec["queries"]]:
            start = time.perf_counter()
            mem.search(q, k=10)
            times.append((time.perf_counter() - start) * 1000)
    return {"search_p50_ms": pct(times, 50), "search_p95_ms": pct(times, 95)}


def run(spec: dict, env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", json.dumps(spec)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"worker failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--locomo", type=Path)
    p.add_argument("--turns", type=int, default=600)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-embedders")
    p.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    p.add_argument("--skip-search", action="store_true")
    p.add_argument("--docs", type=Path)
    p.add_argument("--json", type=Path)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--search-worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if args.search_worker:
        print(json.dumps(search_worker(json.loads(args.search_worker))))
        return 0

    from lab.report import provenance, write_section

    if args.locomo is None:
        p.error("--locomo is required")
    load_start = os.getloadavg()
    rows = {}
    for name in args.variants:
        model, threads, batch, env = VARIANTS[name]
        spec = dict(model=model, threads=threads, batch=batch, locomo=str(args.locomo))
        spec.update(turns=args.turns, queries=args.queries)
        rows[name] = run(spec, env)
        print(name, rows[name], file=sys.stderr, flush=True)
    searches = {}
    if not args.skip_search:
        store = args.work / f"synthetic-{args.size}"
        if not (store / "localmem.duckdb").exists():
            start = time.perf_counter()
            synthetic_store(store, args.size)
            print(f"built {store} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
        for name, (model, threads) in {"MiniLM int8": (MINILM, None), "E5": (E5, 2)}.items():
            spec = dict(model=model, threads=threads, batch=64, locomo=str(args.locomo))
            spec.update(size=args.size, queries=args.queries)
            spec["store"] = str(store)
            done = subprocess.run(
                [sys.executable, __file__, "--search-worker", json.dumps(spec)],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise SystemExit(f"search worker failed: {done.stderr[-2000:]}")
            searches[name] = json.loads(done.stdout.strip().splitlines()[-1])
            print(name, searches[name], file=sys.stderr, flush=True)
    results = {"rows": rows, "search": searches, "load": [load_start, os.getloadavg()]}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    command = "python scripts/bench_embedders.py " + " ".join(sys.argv[1:])
    text = markdown(results, provenance(command), args)
    if args.docs:
        write_section(args.docs, "embedders", text)
    print(text)
    return 0


def markdown(results: dict, prov: str, args: argparse.Namespace) -> str:
    """The tables."""
    start, end = results["load"]
    lines = [
        prov,
        f"- load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in start)} at the start, "
        f"{', '.join(f'{x:.1f}' for x in end)} at the end",
        "",
        f"{args.turns} LoCoMo dev chat turns; {args.queries} questions for the query latency.",
        "",
        "Wall-clock rates depend on what else the machine runs; the rates per CPU-second (all "
        "of the process's threads) are the cost itself: on two idle cores a variant that keeps "
        "both busy reaches at most twice its CPU-second rate.",
        "",
        "| variant | load (s) | embed (turns/s) | embed (turns/CPU-s) | ingest (memories/s) | "
        "ingest (memories/CPU-s) | query p50 (ms) | query p95 (ms) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results["rows"].items():
        lines.append(
            f"| {name} | {r['load_s']:.2f} | {r['embed_per_s']:.1f} | "
            f"{r['embed_per_cpu_s']:.1f} | {r['ingest_per_s']:.1f} | "
            f"{r['ingest_per_cpu_s']:.1f} | {r['query_p50_ms']:.1f} | {r['query_p95_ms']:.1f} |"
        )
    if results["search"]:
        lines += [
            "",
            f"`search(q)` (the default pipeline) at {args.size:,} memories (synthetic texts, "
            "random vectors), the query embedded uncached by the real embedder:",
            "",
            "| embedder | search p50 (ms) | search p95 (ms) |",
            "|---|---|---|",
        ]
        for name, r in results["search"].items():
            lines.append(f"| {name} | {r['search_p50_ms']:.1f} | {r['search_p95_ms']:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
