"""PostgreSQL BM25's best k (``ImpactScores.top``): this code against another checkout's, side
by side on one kept store, query by query (issue 34 item 3).

Usage:
    python scripts/bench_pg_lexical.py --url postgresql://... [--other /work/main]
        [--queries 200] [--k 70] [--out FILE]

For each of ``--queries`` synthetic queries (scripts/bench_store.py's, the ones ``bench_pg.py
scale`` times), the lexical half of a hybrid search alone: ``PgLexicalIndex.scored(q).top(k)``
(k = the search's 70 candidates), once with this checkout's ``impact.py`` and once with
``--other``'s (loaded from its file, the same database and connection pool), the order
alternating per query. Queries whose top k (labels and scores) differ are counted (main's full
scoring once tokenised the joined stems again, which dropped some: "sam seoul" -> "seoul").
Reported:
p50/p95 of each, by the query's postings (its terms' document frequencies summed), and this
code's rounds, postings read and memories looked up. The store is opened read-only.

``--every``: instead, every posting of each query scored, its cost taken apart (pg3): the
postings read alone (``postings.each_term``, nothing done with them), read and scored here
(this code's ``ImpactScores._all().top(k)``) and ``--other``'s full scoring
(``_full_top(k)``: main's hash aggregate on the server); the three in turns whose order
alternates, the two top k checked equal.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_store import pct  # noqa: E402
from bench_store import queries as make_queries  # noqa: E402

from localmem.store.postgres import impact  # noqa: E402
from localmem.store.postgres.db import PgDatabase  # noqa: E402
from localmem.store.postgres.lexical import PgLexicalIndex  # noqa: E402
from localmem.store.postgres.postings import each_term  # noqa: E402

BUCKETS = [(0, 5_000), (5_000, 30_000), (30_000, 100_000), (100_000, 250_000), (250_000, 10**12)]


def other_scores(checkout: Path):
    """The ``ImpactScores`` class of another checkout's ``impact.py``."""
    spec = importlib.util.spec_from_file_location(
        "other_impact", checkout / "localmem" / "store" / "postgres" / "impact.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ImpactScores


def every_posting(db, lex, other, qs: list[str], k: int) -> list[dict]:
    """``--every``: medians by the query's postings of reading every posting, reading and
    scoring them here, and ``other``'s full scoring (the module docstring)."""
    rows = []
    for j, q in enumerate(qs):
        sc = lex.scored(q)
        idf = sc._collection()[0]
        if not idf:
            continue
        tids = sorted(idf, key=sc._position.__getitem__)
        spent: dict[str, float] = {}
        order = ["read", "scored", "other"]
        for name in order if j % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            if name == "read":
                each_term(db, tids, lambda *a: None)
            elif name == "scored":
                mine = lex.scored(q)._all().top(k)
            else:
                theirs = other(db, list(sc.terms))._full_top(k)
            spent[name] = (time.perf_counter() - t0) * 1000
        if not all(np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True)):
            raise SystemExit(f"the full scorings differ on {q!r}")
        rows.append((sc._postings, spent["read"], spent["scored"], spent["other"]))
    a = np.asarray(rows)
    out = []
    for lo, hi in BUCKETS:
        m = (a[:, 0] >= lo) & (a[:, 0] < hi)
        if m.any():
            med = np.median(a[m], axis=0)
            out.append(
                {
                    "postings": [lo, hi],
                    "queries": int(m.sum()),
                    "read_ms": float(med[1]),
                    "read_and_scored_ms": float(med[2]),
                    "other_full_ms": float(med[3]),
                    "read_us_a_posting": float(np.median(a[m, 1] / a[m, 0]) * 1000),
                    "other_us_a_posting": float(np.median(a[m, 3] / a[m, 0]) * 1000),
                }
            )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True)
    p.add_argument("--other", type=Path, default=Path("/work/main"))
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--k", type=int, default=70)
    p.add_argument("--out", type=Path)
    p.add_argument(
        "--rounds-share",
        type=float,
        help="this code's impact.ROUNDS_SHARE (the rounds' share of a query's postings)",
    )
    p.add_argument("--lookups-most", type=int, help="this code's impact.LOOKUPS_MOST")
    p.add_argument("--every", action="store_true", help="every posting scored, taken apart")
    args = p.parse_args()
    if args.rounds_share is not None:
        impact.ROUNDS_SHARE = args.rounds_share
    if args.lookups_most is not None:
        impact.LOOKUPS_MOST = args.lookups_most
    db = PgDatabase(args.url, read_only=True)
    lex = PgLexicalIndex(db)
    other = other_scores(args.other)
    qs = make_queries(args.queries + 1)[1:]
    for q in qs[:20]:  # warm: pages read, connections open
        lex.scored(q).top(args.k)
    if args.every:
        start = os.getloadavg()
        found = {
            "every": every_posting(db, lex, other, qs, args.k),
            "loadavg_start": start,
            "loadavg_end": os.getloadavg(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        print(json.dumps(found, indent=2))
        if args.out:
            args.out.write_text(json.dumps(found, indent=2))
        return
    times: dict[str, list[float]] = {"this": [], "other": []}
    postings, rounds, read, looked = [], [], [], []
    differ: list[str] = []  # queries whose top k scores are not the same
    start = os.getloadavg()
    for i, q in enumerate(qs):
        order = ("this", "other") if i % 2 == 0 else ("other", "this")
        got = {}
        for name in order:
            t0 = time.perf_counter()
            sc = lex.scored(q) if name == "this" else other(db, list(lex.scored(q).terms))
            got[name] = sc.top(args.k)
            times[name].append((time.perf_counter() - t0) * 1000)
            if name == "this":
                postings.append(sc._postings)
                rounds.append(sc.rounds)
                read.append(sc.postings_read)
                looked.append(sc.looked_up)
        if not all(np.array_equal(a, b) for a, b in zip(got["this"], got["other"], strict=True)):
            differ.append(q)
    res: dict = {
        "queries": args.queries,
        "k": args.k,
        "other": str(args.other),
        "loadavg_start": start,
        "loadavg_end": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "full_below": impact.FULL_BELOW,
        "rounds_share": impact.ROUNDS_SHARE,
        "lookups_most": impact.LOOKUPS_MOST,
        "differ": len(differ),
        "differ_examples": differ[:5],
    }
    for name, t in times.items():
        res[f"{name}_p50_ms"], res[f"{name}_p95_ms"] = pct(t, 50), pct(t, 95)
    n = np.asarray(postings)
    res["buckets"] = []
    for lo, hi in BUCKETS:
        m = (n >= lo) & (n < hi)
        if m.any():
            res["buckets"].append(
                {
                    "postings": [lo, hi],
                    "queries": int(m.sum()),
                    **{
                        f"{name}_median_ms": float(np.median(np.asarray(t)[m]))
                        for name, t in times.items()
                    },
                    "this_rounds_median": float(np.median(np.asarray(rounds)[m])),
                    "this_read_median": float(np.median(np.asarray(read)[m])),
                    "this_looked_up_median": float(np.median(np.asarray(looked)[m])),
                }
            )
    print(json.dumps(res, indent=2))
    if args.out:
        args.out.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
