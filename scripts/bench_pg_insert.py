"""What pgvector's HNSW insert costs per row, and what a lower ``ef_construction`` would save
(issue 34, the alternatives to pending vectors).

A table of ``--base`` random unit vectors (384 dimensions, as MiniLM's) on a local PostgreSQL 16
+ pgvector 0.6.2 (pgserver), the HNSW index built once per ``ef_construction``; then ``--adds``
more rows in one ``INSERT ... SELECT`` (as the store's add does after its COPY): with the index
(the per-row graph insert), and into the same table without it (the floor: what an add costs
when its vector waits). recall@10 of the index against exact search over ``--queries`` random
queries says what a lower ``ef_construction`` gives up. pgvector 0.6.2 has no ``halfvec`` (0.7).

Usage:
    python scripts/bench_pg_insert.py [--base 50000] [--adds 1000] [--ef 100 64 32]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

DIM = 384


def unit(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def literal(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in v) + "]"


def copy_rows(con, table: str, start: int, vectors: np.ndarray) -> None:
    with con.cursor().copy(f"COPY {table} (id, v) FROM STDIN") as cp:
        for i, v in enumerate(vectors):
            cp.write_row((start + i, literal(v)))


def main() -> None:
    import pgserver
    import psycopg

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", type=int, default=50_000)
    p.add_argument("--adds", type=int, default=1000)
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--ef", type=int, nargs="+", default=[100, 64, 32])
    p.add_argument("--out", type=Path, default=Path(".bench/pg/insert.json"))
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-pg-insert-", dir="/tmp"))
    os.chmod(tmp, 0o755)
    server = pgserver.get_server(tmp / "pgdata", cleanup_mode="stop")
    base, adds, queries = unit(args.base, 1), unit(args.adds, 2), unit(args.queries, 3)
    out: dict = {"base": args.base, "adds": args.adds, "runs": []}
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as con:
            con.execute("CREATE EXTENSION IF NOT EXISTS vector")
            con.execute("SET maintenance_work_mem = '512MB'")
            for ef in [None, *args.ef]:
                con.execute("DROP TABLE IF EXISTS t")
                con.execute(f"CREATE TABLE t (id BIGINT, v vector({DIM}))")
                copy_rows(con, "t", 0, base)
                run: dict = {"ef_construction": ef, "loadavg_start": os.getloadavg()}
                if ef is not None:
                    t0 = time.perf_counter()
                    con.execute(
                        "CREATE INDEX ON t USING hnsw (v vector_ip_ops) "
                        f"WITH (m = 16, ef_construction = {ef})"
                    )
                    run["build_s"] = time.perf_counter() - t0
                con.execute("CREATE TEMP TABLE staged (id BIGINT, v vector(384))")
                copy_rows(con, "staged", args.base, adds)
                t0 = time.perf_counter()
                con.execute("INSERT INTO t SELECT * FROM staged")
                run["insert_ms_per_row"] = (time.perf_counter() - t0) * 1000 / args.adds
                con.execute("DROP TABLE staged")
                if ef is not None:
                    every = np.vstack([base, adds])
                    hits = []
                    con.execute("SET hnsw.ef_search = 96")
                    for q in queries:
                        exact = set(np.argpartition(-(every @ q), 10)[:10].tolist())
                        rows = con.execute(
                            "SELECT id FROM t ORDER BY v <#> %s::vector LIMIT 10", [literal(q)]
                        ).fetchall()
                        hits.append(len(exact & {r[0] for r in rows}) / 10)
                    run["recall_at_10"] = float(np.mean(hits))
                run["loadavg_end"] = os.getloadavg()
                out["runs"].append(run)
                print(json.dumps(run), flush=True)
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    out["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
