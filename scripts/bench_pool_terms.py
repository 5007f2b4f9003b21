"""What the reranker's length and coverage inputs cost read from the BM25 postings against
tokenising the pool's texts, side by side on the same pools, and that both give the same values.

    python scripts/bench_pool_terms.py --store <store> [--queries 300] [--locomo locomo_dev.json]

Runs the default search for each query (``scripts/bench_store.py``'s synthetic queries, and
LoCoMo dev's questions with ``--locomo``) on a store opened read-only; for each reranker pool,
:func:`localmem.retrieval.features.index_terms` is timed (CPU of this thread) both ways in
alternating order: read from the postings (only where the store records this code's tokeniser:
``localmem doctor --repair`` rebuilds an older store's postings and records it) and tokenising,
whose cache by text fills as it does in a process that always tokenises. The counts and the
coverage feature must be the same to the last bit; the script stops on the first difference.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import queries as synthetic_queries
from lab.stats import percentile as pct

from localmem import Memory
from localmem.retrieval import features


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--store", type=Path, required=True)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--locomo", type=Path, help="LoCoMo dev: its questions are asked too")
    args = p.parse_args(argv)
    asked = synthetic_queries(args.queries)
    if args.locomo:
        data = json.loads(args.locomo.read_text(encoding="utf-8"))
        asked += [qa["question"] for conv in data for qa in conv["qa"]][: args.queries]
    original = features.index_terms
    spent: dict[str, list[float]] = {"postings": [], "tokenise": []}
    pools = [0]

    def both(ctx, items):
        results = {}
        order = ("postings", "tokenise") if pools[0] % 2 else ("tokenise", "postings")
        for way in order:
            features._TOKENISE_ALL = way == "tokenise"
            t0 = time.thread_time()
            results[way] = original(ctx, items)
            spent[way].append((time.thread_time() - t0) * 1000)
        features._TOKENISE_ALL = False
        held_a, held_b = results["postings"], results["tokenise"]
        same = held_a.counts.tobytes() == held_b.counts.tobytes() and (
            features.coverage(ctx, held_a).tobytes() == features.coverage(ctx, held_b).tobytes()
        )
        if not same:
            raise SystemExit(f"differ on {ctx.query!r}")
        pools[0] += 1
        return results["postings"]

    with Memory.open(args.store, create=False, read_only=True) as mem:
        current = mem.kernel.store.lexical.terms_current()
        features.index_terms = both
        try:
            for q in asked:
                mem.search(q, k=10)
        finally:
            features.index_terms = original
    print(
        f"{args.store}: postings recorded as this tokeniser's: {current}; {pools[0]} pools, "
        "counts and coverage identical to the last bit"
    )
    for way, ms in spent.items():
        print(
            f"{way:>9}: CPU p50 {pct(ms, 50):.3f} ms, p95 {pct(ms, 95):.3f}, mean "
            f"{sum(ms) / max(len(ms), 1):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
