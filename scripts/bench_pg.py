"""The embedded store against the PostgreSQL store (issue 21), side by side in one run.

Usage:
    python scripts/bench_pg.py store [--sizes 10000 100000 1000000] [--queries 200] [--bulk-at N]
        [--vectors real|random] [--recommended] [--out FILE]
    python scripts/bench_pg.py locomo [--configs dense bm25 hybrid +temporal+rerank]
    python scripts/bench_pg.py servers [--servers 1 2 4] [--clients 8] [--adds 40]
    python scripts/bench_pg.py pool [--size 20000] [--threads 4] [--pools 1 2 4]
    python scripts/bench_pg.py report        # the `postgres` section of docs/benchmarks.md

``store``: one embedded store (a folder: DuckDB + hnswlib) and one PostgreSQL store (a local
PostgreSQL 16 + pgvector 0.6 started by pgserver, over its Unix socket) are grown to each size
with the *same* MiniLM vectors of the same synthetic texts (scripts/bench_data.py; the
embedding step is replaced by the precomputed vectors, every other step of ``add_many`` is
real). At each size, for both: the add throughput of the segment just added; search p50/p95
over ``--queries`` queries in dense and hybrid mode with the query vector given (the backend's
work, not MiniLM's); recall@10 of the approximate index (hnswlib; pgvector HNSW) against exact
search over the same vectors; size on disk (the store folder; the database's tables and
indexes). Both stores have M 16, ef_construction 100, ef_search 96 (pgvector raises its beam to
2k for k results as the embedded store does).

``locomo``: `python scripts/experiment.py locomo` on LoCoMo dev, once on a new embedded store and
once on a new PostgreSQL database, the same configurations; recall and search times of each.

Results go to .bench/pg/*.json; ``report`` writes them into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_data  # noqa: E402
from bench_scale import Precomputed  # noqa: E402
from bench_store import pct  # noqa: E402
from bench_store import queries as make_queries  # noqa: E402

from localmem import Memory  # noqa: E402
from localmem.embed import make_embedder  # noqa: E402
from localmem.store.copy import copy_store  # noqa: E402

WORK = ROOT / ".bench" / "pg"
LOCOMO = Path("/work/shared/data/locomo/locomo_dev.json")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def start_postgres(folder: Path):
    """A PostgreSQL 16 with pgvector in ``folder`` (pgserver); returns (server, url)."""
    import pgserver

    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o755)  # pgserver runs postgres as its own user when we are root
    server = pgserver.get_server(folder, cleanup_mode="stop")
    server.psql("DROP DATABASE IF EXISTS bench;")
    server.psql("CREATE DATABASE bench;")
    return server, server.get_uri("bench")


def machine() -> str:
    cpus = os.cpu_count()
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "?",
    )
    return f"{cpus} cores ({model})"


# -- store ---------------------------------------------------------------------------------------
def grow(mem: Memory, emb: Precomputed, texts: list[str], vectors: np.ndarray) -> float:
    emb.serve(texts, vectors)
    t0 = time.perf_counter()
    mem.add_many(texts, batch_size=1000)
    return len(texts) / (time.perf_counter() - t0)


def search_times(mem: Memory, qs: list[str], mode: str) -> list[float]:
    """``mode``: dense or hybrid alone (the backends' work), or ``default`` (search(q))."""
    opts = {} if mode == "default" else {"mode": mode, "temporal": False, "rerank": "off"}
    out = []
    for q in qs:
        t0 = time.perf_counter()
        mem.search(q, k=10, **opts)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def apply_recommended(server, url: str, emb: Precomputed) -> list[str]:
    """Set what `localmem doctor` recommends for the store at ``url`` (ALTER SYSTEM) and
    restart the server; returns the settings applied."""
    from pgserver import pg_ctl

    with Memory.open(url, embedder=emb) as mem:
        settings = mem.store.check()["server_settings"]
    applied = []
    for s in settings:
        if not s["ok"]:
            server.psql(f"ALTER SYSTEM SET {s['setting']} = '{s['recommended_mb']}MB';")
            applied.append(f"{s['setting']} = {s['recommended_mb']} MB")
    if applied:
        pg_ctl(["-w", "stop"], pgdata=server.pgdata, user=server.system_user)
        server.ensure_postgres_running()
    return applied


def restart(server) -> None:
    """Stop the server (fast) and start it again: its buffers empty, new settings read."""
    from pgserver import pg_ctl

    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
    server.ensure_postgres_running()


def blocks(mem: Memory) -> tuple[int, int]:
    """The database's blocks read from outside PostgreSQL's buffers and found in them so far
    (the statistics lag each connection's last second)."""
    row = mem.store.db.fetchone(
        "SELECT blks_read, blks_hit FROM pg_stat_database WHERE datname = current_database()"
    )
    return int(row[0]), int(row[1])


def vectors_of(mode: str, n: int) -> np.ndarray:
    """MiniLM vectors of the first ``n`` synthetic texts, or random unit vectors (``random``:
    the path's cost without an hour of embedding; ANN recall then means little)."""
    if mode == "real":
        return np.asarray(bench_data.vectors(n), dtype=np.float32)
    v = np.random.default_rng(7).standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def ann_recall(mem: Memory, qvecs: np.ndarray, base: np.ndarray) -> float:
    """Mean share of the exact top 10 (over ``base``; label = row) the index returns."""
    lo, hi, n = mem.store.db.fetchone("SELECT min(label), max(label), count(*) FROM memories")
    assert (lo, hi + 1) == (0, n) == (0, len(base)), (lo, hi, n)
    hits = []
    for q in qvecs:
        exact = np.argpartition(-(base @ q), 10)[:10]
        labels, _ = mem.store.vectors.search(q, 10)
        hits.append(len(set(labels.tolist()) & set(exact.tolist())) / 10)
    return float(np.mean(hits))


def cmd_store(args: argparse.Namespace) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    sizes = sorted(args.sizes)
    texts = bench_data.texts(sizes[-1])
    log(f"{args.vectors} vectors of {sizes[-1]} texts")
    vectors = vectors_of(args.vectors, sizes[-1])
    qs = make_queries(args.queries + 1)
    real = make_embedder()
    qvecs = real.embed_batch(qs).astype(np.float32)
    name = real.name
    tmp = Path(tempfile.mkdtemp(prefix="bench-pg-", dir="/tmp"))
    server, url = start_postgres(tmp / "pgdata")
    folder = tmp / "embedded"
    results: dict = {"machine": machine(), "sizes": {}, "queries": args.queries}
    results["vectors"] = args.vectors
    results.update(bulk_at=args.bulk_at, tail=args.tail)
    try:
        emb = Precomputed(name, 384)
        stores = {
            "embedded": Memory.open(folder, embedder=emb),
            "postgres": Memory.open(url, embedder=emb),
        }
        have = 0
        for size in sizes:
            row: dict = {}
            bulk = size >= args.bulk_at
            grown = size - args.tail if bulk else size
            rates = {}
            for backend in stores:  # both grow to ``grown`` (PostgreSQL copies, in bulk)
                mem = stores[backend]
                if bulk and backend == "postgres":
                    # a new database filled by migrate-store's copy of the embedded store (the
                    # same rows and labels): growing PostgreSQL by adds would take hours here
                    mem.close()
                    server.psql("CREATE DATABASE bulk;")
                    mem = stores[backend] = Memory.open(server.get_uri("bulk"), embedder=emb)
                    log(f"postgres: bulk load of {grown} memories (copy_store)")
                    t0 = time.perf_counter()
                    copy_store(stores["embedded"].store, mem.store)
                    row["bulk_load_s"] = time.perf_counter() - t0
                    log(f"postgres: bulk load took {row['bulk_load_s']:.0f} s")
                else:
                    log(f"{backend}: growing {have} -> {grown}")
                    rates[backend] = grow(mem, emb, texts[have:grown], vectors[have:grown])
            if args.recommended:  # the server as `localmem doctor` would have it
                stores["postgres"].close()
                pg_url = server.get_uri("bulk") if bulk else url
                row["settings"] = apply_recommended(server, pg_url, emb)
                log(f"recommended settings: {row['settings'] or 'already met'}")
                stores["postgres"] = Memory.open(pg_url, embedder=emb)
            for backend, mem in stores.items():
                rate = rates.get(backend, 0.0)
                if bulk:  # the add rate at this size: the same last ``tail`` adds on both
                    log(f"{backend}: adding the last {args.tail}")
                    rate = grow(mem, emb, texts[grown:size], vectors[grown:size])
                emb.serve(qs, qvecs)  # the queries' vectors, given
                mem.search(qs[0], k=10)  # warm: BM25 loaded, connections open
                dense = search_times(mem, qs[1:], "dense")
                hybrid = search_times(mem, qs[1:], "hybrid")
                default = search_times(mem, qs[1:], "default")
                recall = ann_recall(mem, qvecs[1:], vectors[:size])
                if backend == "embedded":
                    mem.store.save_index()
                row[backend] = {
                    "add_items_per_s": rate,
                    "dense_p50_ms": pct(dense, 50),
                    "dense_p95_ms": pct(dense, 95),
                    "hybrid_p50_ms": pct(hybrid, 50),
                    "hybrid_p95_ms": pct(hybrid, 95),
                    "default_p50_ms": pct(default, 50),
                    "default_p95_ms": pct(default, 95),
                    "recall_at_10": recall,
                    "disk_mb": mem.store.bytes_on_disk() / 1e6,
                    "loadavg": os.getloadavg(),
                }
                log(f"{backend} @ {size}: {json.dumps(row[backend])}")
            have = size
            results["sizes"][str(size)] = row
            args.out.write_text(json.dumps(results, indent=2))
        for mem in stores.values():
            mem.close()
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.out.write_text(json.dumps(results, indent=2))


# -- scale: a kept embedded store against its copy on PostgreSQL -------------------------------
def interleaved(stores: dict[str, Memory], qs: list[str], mode: str) -> dict[str, list[float]]:
    """Search times (ms) of each store on the same queries, one store after the other per
    query, so both see the same load."""
    out: dict[str, list[float]] = {b: [] for b in stores}
    for q in qs:
        for backend, mem in stores.items():
            out[backend] += search_times(mem, [q], mode)
    return out


#: PostgreSQL variants of ``scale``: new vectors pending (this code), or indexed inside the
#: INSERT as before pending vectors (the column's default false: the pgvector insert per row)
VARIANTS = {"postgres": "pgdata", "inline": "pgdata-inline"}


def cmd_scale(args: argparse.Namespace) -> None:
    """``--phase load``: a database per variant filled from the kept embedded store by
    migrate-store's copy (the source opened read-only), then doctor's settings. ``--phase
    query``: dense and hybrid p50/p95 of every store, interleaved; then the same ``--tail`` adds
    on each PostgreSQL variant, dense search with them pending, and the drain that indexes
    them. Each variant has a server of its own (its own shared buffers). Results accumulate in
    ``--out``."""
    import pgserver

    args.work.mkdir(parents=True, exist_ok=True)
    os.chmod(args.work, 0o755)  # pgserver runs postgres as its own user when we are root
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results.update(machine=machine(), source=str(args.source), variants=args.variants)
    real = make_embedder()
    emb = Precomputed(real.name, 384)
    servers = {v: pgserver.get_server(args.work / VARIANTS[v], cleanup_mode="stop")
               for v in args.variants}  # fmt: skip
    urls = {v: server.get_uri("scale") for v, server in servers.items()}

    def save() -> None:
        args.out.write_text(json.dumps(results, indent=2))

    try:
        if "load" in args.phase:
            for variant, server in servers.items():
                server.psql("DROP DATABASE IF EXISTS scale;")
                server.psql("CREATE DATABASE scale;")
                with (
                    Memory.open(args.source, embedder=emb, read_only=True, engine=False) as src,
                    Memory.open(urls[variant], embedder=emb, engine=False) as dst,
                ):
                    log(f"{variant}: copying {src.store.live_count()} memories")
                    t0 = time.perf_counter()
                    copy_store(src.store, dst.store)
                    results[f"{variant}_load_s"] = time.perf_counter() - t0
                    results[f"{variant}_load_loadavg"] = os.getloadavg()
                    if variant == "inline":
                        with dst.store.db.transaction():  # outside one, nothing would commit
                            dst.store.db.execute(
                                "ALTER TABLE memories ALTER COLUMN vector_pending SET DEFAULT false"
                            )
                log(f"{variant}: copy with the index build {results[f'{variant}_load_s']:.0f} s")
                results[f"{variant}_settings"] = apply_recommended(server, urls[variant], emb)
                log(f"{variant}: recommended settings {results[f'{variant}_settings']}")
                save()
        if "query" in args.phase:
            for variant, server in servers.items():  # what doctor recommends now, restarted
                results[f"{variant}_query_settings"] = apply_recommended(server, urls[variant], emb)
                if args.shared_buffers:  # another size, to compare (doctor's otherwise)
                    server.psql(f"ALTER SYSTEM SET shared_buffers = '{args.shared_buffers}MB';")
                    restart(server)
                    results[f"{variant}_query_settings"].append(
                        f"shared_buffers = {args.shared_buffers} MB (--shared-buffers)"
                    )
                log(f"{variant}: recommended settings {results[f'{variant}_query_settings']}")
            qs = make_queries(args.queries + 1)
            qvecs = real.embed_batch(qs).astype(np.float32)
            emb.serve(qs, qvecs)
            stores = {
                "embedded": Memory.open(args.source, embedder=emb, read_only=True, engine=False)
            }
            for variant, url in urls.items():
                stores[variant] = Memory.open(url, embedder=emb, engine=False)
            results["live"] = stores["embedded"].store.live_count()
            row: dict = {"queries": args.queries, "loadavg_start": os.getloadavg()}
            warm = make_queries(args.warm + 1, seed=11)[1:]  # other queries than those timed
            emb.serve(warm + qs, np.vstack([real.embed_batch(warm), qvecs]).astype(np.float32))
            t0 = time.perf_counter()
            for mem in stores.values():  # warm: BM25 loaded, connections open, pages read
                for q in warm:
                    mem.search(q, k=10, mode="hybrid", temporal=False, rerank="off")
            row["warm_queries"], row["warm_s"] = args.warm, time.perf_counter() - t0
            for mode in ("dense", "hybrid"):
                before = {v: blocks(stores[v]) for v in urls}
                times = interleaved(stores, qs[1:], mode)
                for backend, t in times.items():
                    row[f"{backend}_{mode}_p50_ms"] = pct(t, 50)
                    row[f"{backend}_{mode}_p95_ms"] = pct(t, 95)
                for v in urls:  # pages the timed searches read from outside the buffers
                    (read0, hit0), (read1, hit1) = before[v], blocks(stores[v])
                    row[f"{v}_{mode}_blocks_read"] = read1 - read0
                    row[f"{v}_{mode}_blocks_hit"] = hit1 - hit0
                log(json.dumps({k: v for k, v in row.items() if mode in k}))
            row["loadavg_end"] = os.getloadavg()
            results["searches"] = row
            save()
            texts = [
                f"{args.tail_name} memory {i}: {t}"
                for i, t in enumerate(bench_data.texts(args.tail))
            ]
            tail_vectors = vectors_of("random", args.tail)
            tail: dict = {"adds": args.tail}
            for variant in urls:  # the same adds on each, one after the other
                emb.serve(texts, tail_vectors)
                mem = stores[variant]
                t0 = time.perf_counter()
                mem.add_many(texts, batch_size=1000)
                add_s = time.perf_counter() - t0
                tail[f"{variant}_add_s"] = add_s
                tail[f"{variant}_add_items_per_s"] = args.tail / add_s
                tail[f"{variant}_pending"] = mem.store.pending_vectors
                tail[f"{variant}_add_loadavg"] = os.getloadavg()
                log(f"{variant}: {args.tail / add_s:.0f} adds/s, {mem.store.pending_vectors} left")
            emb.serve(qs, qvecs)
            after = interleaved(stores, qs[1:], "dense")  # the tail still pending
            for backend, t in after.items():
                tail[f"{backend}_dense_after_p50_ms"] = pct(t, 50)
                tail[f"{backend}_dense_after_p95_ms"] = pct(t, 95)
            for variant in urls:
                t0 = time.perf_counter()
                drained = stores[variant].store.drain_vectors()
                tail[f"{variant}_drained"] = drained
                tail[f"{variant}_drain_s"] = time.perf_counter() - t0
                tail[f"{variant}_drain_ms_per_row"] = (
                    tail[f"{variant}_drain_s"] * 1000 / drained if drained else None
                )
            tail["loadavg"] = os.getloadavg()
            results["tail"] = tail
            log(json.dumps(tail))
            save()
            for mem in stores.values():
                mem.close()
    finally:
        for server in servers.values():
            server.cleanup()
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    save()


# -- locomo --------------------------------------------------------------------------------------
def cmd_locomo(args: argparse.Namespace) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench-pg-locomo-", dir="/tmp"))
    server, url = start_postgres(tmp / "pgdata")
    lab = Path(__file__).with_name("experiment.py")  # the lab's command
    out = {}
    try:
        for backend, store in (("embedded", str(tmp / "embedded")), ("postgres", url)):
            log(f"locomo on {backend}")
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, str(lab), "locomo", str(LOCOMO), "--store", store,
                 "--configs", *args.configs, "--out", str(tmp / backend)],
                check=True, cwd=str(ROOT),
            )  # fmt: skip
            data = json.loads((tmp / backend / "locomo.json").read_text())
            out[backend] = {
                "wall_s": time.perf_counter() - t0,
                "summaries": {name: s["overall"] for name, s in data["summaries"].items()},
                "per_question": data["per_question"],
                "loadavg": os.getloadavg(),
            }
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    out["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out["configs"] = args.configs
    (WORK / "locomo.json").write_text(json.dumps(out, indent=2))


# -- several servers -----------------------------------------------------------------------------
def start_serve(url: str, home: Path) -> tuple[subprocess.Popen, Path]:
    from localmem.discovery import find_server
    from localmem.store.postgres.store import local_folder

    env = dict(os.environ, LOCALMEM_HOME=str(home))
    proc = subprocess.Popen(
        [sys.executable, "-m", "localmem", "serve", url],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    folder = home / "postgres" / local_folder(url).name
    deadline = time.monotonic() + 120
    while find_server(folder) is None:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"serve did not start: {proc.stderr.read()[-2000:]}")
        time.sleep(0.1)
    return proc, folder


def parallel(n: int, work) -> float:
    """Run ``work(i)`` for i < n in n threads; the wall time."""
    import threading

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return time.perf_counter() - t0


def cmd_servers(args: argparse.Namespace) -> None:
    """N `localmem serve` processes on one database, ``--clients`` client threads spread over
    them: each adds ``--adds`` memories one call at a time (embedded by the server), then runs
    ``--adds`` searches; total adds/s and searches/s."""
    import signal

    from localmem.remote import connect

    WORK.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench-pg-serve-", dir="/tmp"))
    server, url = start_postgres(tmp / "pgdata")
    texts = bench_data.texts(args.prefill + 20 * args.clients * args.adds)
    qs = make_queries(args.adds * args.clients, seed=11)
    with Memory.open(url) as mem:  # the real embedder: the servers embed what they add
        mem.add_many(texts[: args.prefill], batch_size=500)
    results: dict = {"machine": machine(), "prefill": args.prefill, "clients": args.clients}
    offset = args.prefill
    try:
        for n in args.servers:
            procs = [start_serve(url, tmp / f"home{n}-{i}") for i in range(n)]
            try:
                clients = [connect(procs[i % n][1]) for i in range(args.clients)]
                for c in clients:
                    c.search("warm up", k=10)
                batches = [
                    texts[offset + i * args.adds : offset + (i + 1) * args.adds]
                    for i in range(args.clients)
                ]
                offset += args.clients * args.adds

                add_s = parallel(
                    len(clients), lambda i, c=clients, b=batches: [c[i].add(x) for x in b[i]]
                )
                search_s = parallel(
                    len(clients),
                    lambda i, c=clients, m=args.adds: [
                        c[i].search(q, k=10) for q in qs[i * m : (i + 1) * m]
                    ],
                )
                total = args.clients * args.adds
                results[str(n)] = {
                    "adds_per_s": total / add_s,
                    "searches_per_s": total / search_s,
                    "loadavg": os.getloadavg(),
                }
                log(f"{n} server(s): {results[str(n)]}")
            finally:
                for proc, _ in procs:
                    proc.send_signal(signal.SIGTERM)
                for proc, _ in procs:
                    proc.wait(timeout=60)
        with Memory.open(url) as mem:
            results["memories_at_end"] = mem.stats()["memories"]
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    (WORK / "servers.json").write_text(json.dumps(results, indent=2))


# -- the connection pool ------------------------------------------------------------------------
def cmd_pool(args: argparse.Namespace) -> None:
    """One process, one PostgreSQL store of ``--size`` memories, ``--threads`` threads each
    searching ``--searches`` times (hybrid and the default pipeline, query vectors given), with
    the pool holding 1, 2 or 4 connections: searches/s of each, side by side."""
    from localmem.config import Config

    WORK.mkdir(parents=True, exist_ok=True)
    texts = bench_data.texts(args.size)
    vectors = np.asarray(bench_data.vectors(args.size), dtype=np.float32)
    qs = make_queries(args.threads * args.searches, seed=5)
    real = make_embedder()
    qvecs = real.embed_batch(qs).astype(np.float32)
    tmp = Path(tempfile.mkdtemp(prefix="bench-pg-pool-", dir="/tmp"))
    server, url = start_postgres(tmp / "pgdata")
    results: dict = {"machine": machine(), "size": args.size, "threads": args.threads}
    try:
        emb = Precomputed(real.name, 384)
        with Memory.open(url, embedder=emb) as mem:
            grow(mem, emb, texts, vectors)
        for pool in args.pools:
            config = Config().model_copy(
                update={"store": Config().store.model_copy(update={"pg_pool_size": pool})}
            )
            with Memory.open(url, embedder=emb, config=config) as mem:
                emb.serve(qs, qvecs)
                row = {}
                plain = {"temporal": False, "rerank": "off"}
                for name, opts in (("hybrid", plain), ("default", {})):
                    mem.search(qs[0], k=10, **opts)  # warm
                    m = args.searches
                    wall = parallel(
                        args.threads,
                        lambda i, m=m, o=opts: [
                            mem.search(q, k=10, **o) for q in qs[i * m : (i + 1) * m]
                        ],
                    )
                    row[f"{name}_searches_per_s"] = args.threads * m / wall
                row["loadavg"] = os.getloadavg()
                results[str(pool)] = row
                log(f"pool {pool}: {row}")
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    (WORK / "pool.json").write_text(json.dumps(results, indent=2))


# -- report --------------------------------------------------------------------------------------
def _load(name: str) -> dict | None:
    path = WORK / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _la(values) -> str:
    return f"{values[0]:.1f}"


def store_table(res: dict) -> str:
    lines = [
        "| size | backend | add (items/s) | dense p50 / p95 (ms) | hybrid p50 / p95 (ms) "
        "| ANN recall@10 | on disk (MB) | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size, row in res["sizes"].items():
        for backend in ("embedded", "postgres"):
            r = row[backend]
            lines.append(
                f"| {int(size):,} | {backend} | {r['add_items_per_s']:.0f} "
                f"| {r['dense_p50_ms']:.1f} / {r['dense_p95_ms']:.1f} "
                f"| {r['hybrid_p50_ms']:.1f} / {r['hybrid_p95_ms']:.1f} "
                f"| {r['recall_at_10']:.3f} | {r['disk_mb']:.0f} | {_la(r['loadavg'])} |"
            )
    return "\n".join(lines)


def locomo_table(res: dict) -> str:
    lines = [
        "| config | R@10 embedded | R@10 PostgreSQL | same top 10 | search p50 / p95 (ms) "
        "embedded | PostgreSQL |",
        "|---|---|---|---|---|---|",
    ]
    emb, pg = res["embedded"], res["postgres"]
    for cfg in res["configs"]:
        a, b = emb["summaries"][cfg], pg["summaries"][cfg]
        qa, qb = emb["per_question"][cfg], pg["per_question"][cfg]
        same = sum(x["retrieved"] == y["retrieved"] for x, y in zip(qa, qb, strict=True))
        lines.append(
            f"| {cfg} | {a['R@10']:.4f} | {b['R@10']:.4f} | {same} / {len(qa)} "
            f"| {a['search_p50_ms']:.1f} / {a['search_p95_ms']:.1f} "
            f"| {b['search_p50_ms']:.1f} / {b['search_p95_ms']:.1f} |"
        )
    return "\n".join(lines)


def servers_table(res: dict) -> str:
    lines = ["| servers | adds/s | searches/s | load |", "|---|---|---|---|"]
    for n in sorted(k for k in res if k.isdigit()):
        r = res[n]
        lines.append(
            f"| {n} | {r['adds_per_s']:.1f} | {r['searches_per_s']:.1f} | {_la(r['loadavg'])} |"
        )
    return "\n".join(lines)


def pool_table(res: dict) -> str:
    lines = [
        "| pool size | hybrid searches/s | default-pipeline searches/s | load |",
        "|---|---|---|---|",
    ]
    for n in sorted((k for k in res if k.isdigit()), key=int):
        r = res[n]
        lines.append(
            f"| {n} | {r['hybrid_searches_per_s']:.1f} | {r['default_searches_per_s']:.1f} "
            f"| {_la(r['loadavg'])} |"
        )
    return "\n".join(lines)


def cmd_report(args: argparse.Namespace) -> None:
    from lab.report import write_section

    parts = [Path(args.notes).read_text(encoding="utf-8").strip()] if args.notes else []
    store, locomo, servers = _load("store"), _load("locomo"), _load("servers")
    if store:
        parts += [
            f"**Store** (`python scripts/bench_pg.py store --sizes "
            f"{' '.join(store['sizes'])} --queries {store['queries']}`"
            + (f" `--bulk-at {store['bulk_at']}`" if "bulk_at" in store else "")
            + f", {store.get('date')}, "
            f"{store['machine']}; PostgreSQL 16.2 + pgvector 0.6.2 from pgserver on the same "
            "machine, over its Unix socket; load = 1-minute load average at the measurement):",
            store_table(store),
        ]
    if locomo:
        parts += [
            f"**LoCoMo dev** (`python scripts/bench_pg.py locomo`, {locomo.get('date')}; "
            "`python scripts/experiment.py locomo` on a new store of each backend, same pipeline, "
            "onnx-int8; "
            "*same top 10*: questions whose ten retrieved turns are the same, in the same order):",
            locomo_table(locomo),
        ]
    pool = _load("pool")
    if pool:
        parts += [
            f"**The connection pool** (`python scripts/bench_pg.py pool --size {pool['size']} "
            f"--threads {pool['threads']}`, {pool.get('date')}): one process, one PostgreSQL "
            f"store of {pool['size']:,} memories, {pool['threads']} threads searching at once "
            "(query vectors given), the pool holding 1, 2 or 4 connections:",
            pool_table(pool),
        ]
    if servers:
        parts += [
            f"**Several servers on one database** (`python scripts/bench_pg.py servers`, "
            f"{servers.get('date')}; {servers['clients']} client threads spread over the "
            f"servers, each adding memories one `add` at a time (embedded by the server), then "
            f"searching; database prefilled with {servers['prefill']:,} memories):",
            servers_table(servers),
        ]
    write_section(args.docs, "postgres", "\n\n".join(parts))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("store")
    s.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    s.add_argument("--queries", type=int, default=200)
    s.add_argument(
        "--bulk-at",
        type=int,
        default=500_000,
        help="from this size on, PostgreSQL is filled by copying the embedded store "
        "(migrate-store's bulk load) and both measure their adds on the last --tail",
    )
    s.add_argument("--tail", type=int, default=10_000)
    s.add_argument("--vectors", choices=("real", "random"), default="real")
    s.add_argument(
        "--recommended",
        action="store_true",
        help="before measuring, give the server the settings `localmem doctor` recommends",
    )
    s.add_argument("--out", type=Path, default=WORK / "store.json", help="the results' file")
    s.set_defaults(func=cmd_store)
    sc = sub.add_parser("scale", help="a kept embedded store against its PostgreSQL copy")
    sc.add_argument("--source", type=Path, required=True, help="the embedded store (read only)")
    sc.add_argument("--work", type=Path, required=True, help="where the PostgreSQL data goes")
    sc.add_argument("--phase", nargs="+", choices=("load", "query"), default=["load", "query"])
    sc.add_argument("--queries", type=int, default=200)
    sc.add_argument("--tail", type=int, default=2000)
    sc.add_argument(
        "--warm", type=int, default=50, help="hybrid searches on each store before timing"
    )
    sc.add_argument(
        "--tail-name", default="tail", help="the tail texts' prefix (a new one per run)"
    )
    sc.add_argument(
        "--shared-buffers", type=int, help="MB instead of doctor's recommendation (to compare)"
    )
    sc.add_argument(
        "--variants",
        nargs="+",
        choices=tuple(VARIANTS),
        default=["postgres"],
        help="postgres: new vectors pending (this code); inline: indexed inside the INSERT, as "
        "before pending vectors (the before of a before/after run)",
    )
    sc.add_argument("--out", type=Path, required=True)
    sc.set_defaults(func=cmd_scale)
    loc = sub.add_parser("locomo")
    loc.add_argument(
        "--configs", nargs="+", default=["dense", "bm25", "hybrid", "+temporal+rerank"]
    )
    loc.set_defaults(func=cmd_locomo)
    sv = sub.add_parser("servers")
    sv.add_argument("--servers", type=int, nargs="+", default=[1, 2, 4])
    sv.add_argument("--clients", type=int, default=8)
    sv.add_argument("--adds", type=int, default=40)
    sv.add_argument("--prefill", type=int, default=10_000)
    sv.set_defaults(func=cmd_servers)
    pl = sub.add_parser("pool")
    pl.add_argument("--size", type=int, default=20_000)
    pl.add_argument("--threads", type=int, default=4)
    pl.add_argument("--searches", type=int, default=50)
    pl.add_argument("--pools", type=int, nargs="+", default=[1, 2, 4])
    pl.set_defaults(func=cmd_pool)
    rp = sub.add_parser("report")
    rp.add_argument("--docs", default=str(ROOT / "docs" / "benchmarks.md"))
    rp.add_argument(
        "--notes",
        default=str(ROOT / "scripts" / "bench_pg_notes.md"),
        help="a markdown file: the section's heading and findings",
    )
    rp.set_defaults(func=cmd_report)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
