"""What rewriting the row costs (issue 30 item 3): a metadata-only update and a supersession set
``embedding = embedding`` (``records.REWRITE_ROW``) so that DuckDB rewrites the row instead of
updating a text column in place, which its WAL replay can lose. Measured side by side in one
store: the same updates with the rewrite and without it (a no-op in its place), alternating in
blocks so that a change of load hits both.

    python scripts/bench_rewrite_row.py --updates 400 --report docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--updates", type=int, default=400, help="updates of each kind (default 400)")
    p.add_argument("--memories", type=int, default=2000, help="memories in the store")
    p.add_argument("--report", type=Path, help="append the result to this markdown file")
    args = p.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from lab.stats import percentile

    from localmem import Memory
    from localmem.store import records

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    rewrite = records.REWRITE_ROW
    timings: dict[str, list[float]] = {"rewrite": [], "in place": []}
    with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "store") as mem:
        items = mem.add_many([f"note {i} about area {i % 97}" for i in range(args.memories)])
        block = 20
        for start in range(0, args.updates, block):
            for name, sql in (("rewrite", rewrite), ("in place", "vec_seq = vec_seq")):
                records.REWRITE_ROW = sql
                for i in range(start, min(start + block, args.updates)):
                    target = items[(i * 7919 + len(timings[name])) % len(items)].id
                    began = time.perf_counter()
                    mem.update(target, metadata={"n": i, "kind": name})
                    timings[name].append(time.perf_counter() - began)
        records.REWRITE_ROW = rewrite
    med = {k: statistics.median(v) * 1000 for k, v in timings.items()}
    p90 = {k: percentile(v, 90) * 1000 for k, v in timings.items()}
    text = (
        "\n### What rewriting the row costs (issue 30 item 3)\n\n"
        f"`python scripts/bench_rewrite_row.py --updates {args.updates} --memories "
        f"{args.memories}` on {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, "
        f"{os.cpu_count()} cores, load average at the start {load}. A metadata-only "
        "`Memory.update` (the whole call: lookup, unit, history row, commit) with the row "
        "rewritten and with the column updated in place, alternating in blocks of 20:\n\n"
        "| update | n | median ms | p90 ms |\n|---|---|---|---|\n"
        + "".join(f"| {k} | {len(timings[k])} | {med[k]:.2f} | {p90[k]:.2f} |\n" for k in timings)
        + f"\nratio of medians (rewrite / in place): {med['rewrite'] / med['in place']:.2f}\n"
    )
    print(text)
    if args.report:
        with open(args.report, "a", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
