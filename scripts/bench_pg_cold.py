"""PostgreSQL ``add_many`` right after a server start against the same adds once warm (issue 34
item 3: >= 1,000 memories/s, a rate that should not depend on what the caches hold).

Usage:
    python scripts/bench_pg_cold.py --work DIR [--adds 1000] [--rounds 3] [--variants plain warm]
        [--out FILE]

``--work`` is a pgserver data folder holding a store in the database ``scale`` (as
``bench_pg.py scale`` leaves it). Each round, for each variant (their order alternating round by
round): the server is stopped and started (its shared buffers empty; the operating system's
cache keeps what it keeps), the store opened, ``--adds`` new memories added in chunks of 1,000
(``cold``), then ``--adds`` more (``warm``), and the pending vectors drained (untimed). The
variants:

- ``plain``: the store as it is;
- ``warm``: :func:`read_in_writes` first (timed apart): the b-trees an add writes at random
  read whole in key order, by index-only scans (pgserver's build has no ``pg_prewarm``). Tried
  as a step of the store and not kept (docs/benchmarks.md, "pg2").

Reported per add: items/s and the seconds in each statement family (INSERT into memories, the
``lex_terms`` upsert, the ``embed_hash`` lookup, the rest).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_data  # noqa: E402
from bench_pg import log, machine  # noqa: E402
from bench_pg import vectors_of as random_vectors  # noqa: E402
from bench_scale import Precomputed  # noqa: E402

from localmem import Memory  # noqa: E402
from localmem.embed import make_embedder  # noqa: E402
from localmem.store.postgres import db as pgdb  # noqa: E402

FAMILIES = {
    "insert memories": "INSERT INTO memories",
    "lex_terms upsert": "INSERT INTO lex_terms",
    "embed_hash lookup": "SELECT label FROM memories WHERE embed_hash",
}


class StatementTimes:
    """Seconds spent in :class:`PgDatabase` statements, by family, while installed."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._orig = pgdb.PgDatabase.execute

    def __enter__(self) -> StatementTimes:
        orig, seconds = self._orig, self.seconds

        def timed(db, sql, params=None):
            t0 = time.perf_counter()
            try:
                return orig(db, sql, params)
            finally:
                family = next((f for f, p in FAMILIES.items() if sql.startswith(p)), "other")
                seconds[family] += time.perf_counter() - t0

        pgdb.PgDatabase.execute = timed
        return self

    def __exit__(self, *exc) -> None:
        pgdb.PgDatabase.execute = self._orig


#: the b-trees an add looks up and writes at random keys (a memory's id, its text's hash, its
#: terms), and ``lex_terms``' rows (a scan keeps a table under a quarter of the buffers in them)
WRITTEN_AT_RANDOM = {
    "memories_pkey": "SELECT count(id) FROM memories WHERE id > ''",
    "memories_embed_hash": "SELECT count(embed_hash) FROM memories WHERE embed_hash > ''",
    "lex_terms_term": "SELECT count(term) FROM lex_terms WHERE term > ''",
    "lex_terms": "SELECT sum(df) FROM lex_terms",
}


def read_in_writes(db: pgdb.PgDatabase) -> dict[str, float]:
    """Read :data:`WRITTEN_AT_RANDOM` into the server's buffers; the seconds each took."""
    took: dict[str, float] = {}
    with db.transaction():
        db.execute("SET LOCAL enable_seqscan = off")
        db.execute("SET LOCAL enable_bitmapscan = off")
        for name, sql in WRITTEN_AT_RANDOM.items():
            if name == "lex_terms":
                db.execute("SET LOCAL enable_seqscan = on")
            t0 = time.perf_counter()
            db.scalar(sql)
            took[name] = time.perf_counter() - t0
    return took


def restart(server) -> None:
    from pgserver import pg_ctl

    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)
    server.ensure_postgres_running()


def main() -> None:
    import pgserver

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, required=True, help="a pgserver data folder")
    p.add_argument("--adds", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--variants", nargs="+", choices=("plain", "warm"), default=["plain", "warm"])
    p.add_argument("--name", default="cold", help="the texts' prefix (a new one per run)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    server = pgserver.get_server(args.work, cleanup_mode="stop")
    url = server.get_uri("scale")
    emb = Precomputed(make_embedder().name, 384)
    out: dict = {"machine": machine(), "adds": args.adds, "runs": []}
    base = bench_data.texts(2 * args.adds)
    try:
        for r in range(args.rounds):
            order = args.variants if r % 2 == 0 else args.variants[::-1]
            for variant in order:
                restart(server)
                run: dict = {"round": r, "variant": variant, "loadavg_start": os.getloadavg()}
                with Memory.open(url, embedder=emb, engine=False) as mem:
                    if variant == "warm":
                        t0 = time.perf_counter()
                        run["read_in"] = read_in_writes(mem.store.db)
                        run["read_in_s"] = time.perf_counter() - t0
                    for phase, part in (("cold", base[: args.adds]), ("warm", base[args.adds :])):
                        texts = [
                            f"{args.name} {r} {variant} {phase} {i}: {t}"
                            for i, t in enumerate(part)
                        ]
                        emb.serve(texts, random_vectors("random", len(texts)))
                        with StatementTimes() as st:
                            t0 = time.perf_counter()
                            mem.add_many(texts, batch_size=1000)
                            took = time.perf_counter() - t0
                        run[f"{phase}_items_per_s"] = len(texts) / took
                        run[f"{phase}_s"] = {k: round(v, 3) for k, v in st.seconds.items()}
                        run[f"{phase}_s"]["total"] = round(took, 3)
                    mem.store.drain_vectors()
                run["loadavg_end"] = os.getloadavg()
                out["runs"].append(run)
                log(json.dumps(run))
                args.out.write_text(json.dumps(out, indent=2))
    finally:
        server.cleanup()
    out["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.out.write_text(json.dumps(out, indent=2))
    for variant in args.variants:
        runs = [x for x in out["runs"] if x["variant"] == variant]
        cold = [round(x["cold_items_per_s"]) for x in runs]
        warm = [round(x["warm_items_per_s"]) for x in runs]
        print(f"{variant}: cold {cold} warm {warm} median cold {np.median(cold):.0f}")


if __name__ == "__main__":
    main()
