"""Ways to read the reranker's rows, side by side on one store (issue 34, item 1).

    python scripts/bench_rows.py STORE [STORE ...] [--pools 300] [--docs docs/benchmarks.md]

A default search reads, for its reranker, the rows of ~120 memories (the pool and the memories
that may join it) and where ~160 others sit (the memories stored around chat turns). For each
store (a copy is opened read-only, so a store being built elsewhere is never touched), random
pools of that shape are read, in turn, by:

- ``query``: the shipped one-query read (``records.fetch_with_placement``: ``unnest`` of the
  labels, the rows and the placements in one ``UNION ALL``);
- ``literal IN``: the same rows with the labels written into the SQL (``label IN (1, 2, ...)``);
- ``mirror``: :class:`localmem.store.mirror.RowMirror` (rows held in memory), items and
  placements;
- ``mirror, fresh items``: the same with its cache of made items emptied before each pool
  (the first search that meets a memory).

Also the mirror's whole read (time, Arrow bytes) and a catch-up after 1,000 changed rows
(measured on a scratch copy of the smaller store). p50/p95 in ms; the load with each store.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from lab.stats import percentile as pct  # noqa: E402

from localmem.store import records  # noqa: E402
from localmem.store.db import Database  # noqa: E402
from localmem.store.mirror import RowMirror  # noqa: E402


def pools(n: int, count: int, seed: int = 5) -> list[tuple[list[int], list[int]]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        rows = rng.choice(n, 120, replace=False)
        around = np.unique(np.concatenate([rows - 1, rows + 1]))
        out.append(([int(x) for x in rows], [int(x) for x in around[around >= 0][:160]]))
    return out


def literal(db: Database, labels: list[int], placed: list[int]) -> None:
    db.fetchall(
        f"SELECT {records.MEMORY_COLUMNS} FROM memories "
        f"WHERE label IN ({', '.join(map(str, labels))})"
    )
    db.fetchall(
        "SELECT label, session_id, user_id, agent_id, coalesce(event_time, created_at), "
        f"deleted FROM memories WHERE label IN ({', '.join(map(str, placed))})"
    )


def measure(path: Path, count: int) -> dict:
    db = Database(path / "localmem.duckdb", read_only=True)
    try:
        n = int(db.scalar("SELECT count(*) FROM memories"))
        t0 = time.perf_counter()
        mirror = RowMirror(db).follow(0)
        whole_s = time.perf_counter() - t0
        arrow_mb = mirror.nbytes / 1e6
        ways = {
            "query": lambda p: records.fetch_with_placement(db, p[0], p[1]),
            "literal IN": lambda p: literal(db, *p),
            "mirror": lambda p: (mirror.items(p[0]), mirror.placement(p[1])),
            "mirror, fresh items": lambda p: (
                mirror.forget_items(),
                mirror.items(p[0]),
                mirror.placement(p[1]),
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        for i, pool in enumerate(pools(n, count)):
            names = list(ways) if i % 2 == 0 else list(reversed(ways))
            for name in names:
                a = time.perf_counter()
                ways[name](pool)
                times[name].append((time.perf_counter() - a) * 1000)
        return {
            "n": n,
            "whole_s": whole_s,
            "arrow_mb": arrow_mb,
            "ms": {k: (pct(v, 50), pct(v, 95)) for k, v in times.items()},
            "load": os.getloadavg()[0],
        }
    finally:
        db.close()


def catch_up(path: Path) -> dict:
    """A scratch copy: 1,000 rows changed, the mirror follows (seconds)."""
    from localmem.store.db import utcnow

    tmp = Path(tempfile.mkdtemp(prefix="bench-rows-"))
    try:
        shutil.copy(path / "localmem.duckdb", tmp / "localmem.duckdb")
        db = Database(tmp / "localmem.duckdb")
        mirror = RowMirror(db).follow(0)
        top = int(db.scalar("SELECT max(label) FROM memories"))
        db.execute(
            "UPDATE memories SET updated_at = ?, content = content || ' (changed)' WHERE label > ?",
            [utcnow(), top - 1000],
        )
        t0 = time.perf_counter()
        mirror.follow(1)
        return {"catch_up_s": time.perf_counter() - t0, "reads": mirror.reads}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("stores", type=Path, nargs="+")
    p.add_argument("--pools", type=int, default=300)
    p.add_argument("--docs", type=Path)
    args = p.parse_args()
    lines = [
        "| memories | load | query p50 / p95 | literal IN | mirror | mirror, fresh items "
        "| mirror's whole read | its Arrow columns |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for store in args.stores:
        r = measure(store, args.pools)
        ms = r["ms"]
        cells = " | ".join(f"{ms[k][0]:.2f} / {ms[k][1]:.2f}" for k in ms)
        lines.append(
            f"| {r['n']:,} | {r['load']:.1f} | {cells} | {r['whole_s']:.2f} s "
            f"| {r['arrow_mb']:.0f} MB |"
        )
    c = catch_up(min(args.stores, key=lambda s: (s / "localmem.duckdb").stat().st_size))
    text = "\n".join(lines) + (
        f"\n\nCatch-up after 1,000 changed rows (a scratch copy of the smaller store): "
        f"{c['catch_up_s'] * 1000:.0f} ms, no whole read ({c['reads']} in all)."
    )
    if args.docs:
        from lab.report import provenance, write_section

        command = "python scripts/bench_rows.py " + " ".join(sys.argv[1:])
        write_section(args.docs, "rows-in-memory", provenance(command) + "\n\n" + text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
