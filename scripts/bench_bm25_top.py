"""The embedded BM25's best k: every posting scored into one array against MaxScore
(``localmem.store.maxscore``), side by side on kept stores, query by query.

Usage:
    python scripts/bench_bm25_top.py STORE [STORE ...] [--queries 300] [--k 70] [--repeat 5]
        [--docs docs/benchmarks.md --section bm25-maxscore]

For each of ``--queries`` synthetic queries (scripts/bench_store.py's, the ones
``bench_default_latency.py`` times), the lexical half of a hybrid search alone, the best ``k``
(the search's 70 candidates a retriever): scored densely (``best(LexicalIndex.scores(q))``)
and pruned (``PrunedScores.top`` with its size threshold lifted), alternating, ``--repeat``
times each, the median kept. Both answers are compared (they must be the same). Reported by
the query's number of terms: mean ms of each, and how often the pruned one was slower. The
stores are opened read-only.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_store import queries as make_queries  # noqa: E402
from lab.report import write_section  # noqa: E402

from localmem import Memory  # noqa: E402
from localmem.store import maxscore  # noqa: E402
from localmem.store.scores import best  # noqa: E402


def measure(store: Path, queries: list[str], k: int, repeat: int) -> list[str]:
    """Table rows for one store."""
    with Memory.open(store, create=False, read_only=True) as mem:
        lex = mem.kernel.store.lexical
        size = mem.count()
        lex.scores(queries[0])  # loads the postings
        by_terms: dict[int, list[tuple[float, float, int]]] = {}
        for q in queries:
            dense_ms, pruned_ms = [], []
            for _ in range(repeat):
                a = time.perf_counter()
                want = best(lex.scores(q), k)
                b = time.perf_counter()
                scored = lex.scored(q)
                got = scored.top(k)
                c = time.perf_counter()
                dense_ms.append((b - a) * 1000)
                pruned_ms.append((c - b) * 1000)
            if want[0].tolist() != got[0].tolist() or want[1].tobytes() != got[1].tobytes():
                raise SystemExit(f"the pruned top differs from the dense one for {q!r}")
            terms = len(scored.terms)  # type: ignore[attr-defined]
            postings = sum(len(t.labels) for t in scored.terms)  # type: ignore[attr-defined]
            by_terms.setdefault(min(terms, 4), []).append(
                (float(np.median(dense_ms)), float(np.median(pruned_ms)), postings)
            )
    rows = []
    every = [r for rs in by_terms.values() for r in rs]
    for label, rs in [*sorted(by_terms.items()), ("all", every)]:
        a = np.array(rs)
        name = f"{label}+" if label == 4 else str(label)
        rows.append(
            f"| {size:,} | {name} | {len(a)} | {a[:, 2].mean():,.0f} | {a[:, 0].mean():.2f} | "
            f"{a[:, 1].mean():.2f} | {np.percentile(a[:, 0], 95):.2f} | "
            f"{np.percentile(a[:, 1], 95):.2f} | {int((a[:, 1] > a[:, 0]).sum())} |"
        )
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stores", nargs="+", type=Path)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--k", type=int, default=70)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--docs", type=Path)
    p.add_argument("--section", default="bm25-maxscore")
    args = p.parse_args()
    maxscore.PRUNE_FROM = 0  # the pruned path at every size, to see where it pays
    queries = make_queries(args.queries + 1)[1:]
    started = datetime.now(timezone.utc)
    load_before = os.getloadavg()[0]
    rows = []
    for store in args.stores:
        rows += measure(store, queries, args.k, args.repeat)
    head = [
        f"- command: `python scripts/bench_bm25_top.py {' '.join(sys.argv[1:])}`",
        f"- machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        f"- date: {started:%Y-%m-%d %H:%M} UTC; load average (1 min) before / after: "
        f"{load_before:.1f} / {os.getloadavg()[0]:.1f}",
        f"- {len(queries)} queries, best {args.k}, each timed {args.repeat} times both ways "
        "(median); every pruned answer equal to the dense one (labels, order, float32 scores)",
        "",
        "| memories | query terms | queries | postings (mean) | dense mean ms | pruned mean ms "
        "| dense p95 ms | pruned p95 ms | pruned slower |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    text = "\n".join(head + rows)
    print(text)
    if args.docs:
        write_section(args.docs, args.section, text)


if __name__ == "__main__":
    main()
