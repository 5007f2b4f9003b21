"""Whether two versions of localmem give the same hits, bit for bit (a speed change's check).

    PYTHONHASHSEED=0 PYTHONPATH=<other checkout> python scripts/compare_hits.py dump before.json \
        --store <store> [--store ...] [--locomo locomo_dev.json] [--queries 150]
    PYTHONHASHSEED=0 python scripts/compare_hits.py dump after.json --store <store> ...
    python scripts/compare_hits.py compare before.json after.json

``dump`` runs the default search (k=10) for LoCoMo dev's first 300 questions and for
``--queries`` of the synthetic queries of ``scripts/bench_store.py`` on every store, and writes
each hit's label, score, relevance and evidence. ``compare`` counts the queries whose hits are
identical in every field. Set ``PYTHONHASHSEED`` the same in both runs: a few features sum over
sets of words, whose order (and so the last bit of a float) moves with the hash seed. Searching
does not change a store's memories, but run it on copies of stores others use, or pass
``--read-only`` (a store that still needs a migration must be opened writable once first).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import queries as synthetic_queries


def dump(out: Path, stores: list[str], locomo: Path | None, n: int, read_only: bool = False) -> int:
    from localmem import Memory

    asked = synthetic_queries(n)
    if locomo is not None:
        data = json.loads(locomo.read_text(encoding="utf-8"))
        asked = [qa["question"] for conv in data for qa in conv["qa"]][:300] + asked
    hits = {}
    for store in stores:
        with Memory.open(store, create=False, read_only=read_only) as mem:
            for q in asked:
                found = mem.search(q, k=10).hits
                hits[f"{store}|{q}"] = [
                    (h.memory.label, h.score, h.relevance, sorted(h.evidence.items()))
                    for h in found
                ]
    out.write_text(json.dumps(hits), encoding="utf-8")
    print(f"{len(hits)} searches written to {out}")
    return 0


def compare(a: Path, b: Path) -> int:
    before = json.loads(a.read_text(encoding="utf-8"))
    after = json.loads(b.read_text(encoding="utf-8"))
    shared = sorted(set(before) & set(after))
    same = sum(before[k] == after[k] for k in shared)
    ranked = sum([h[0] for h in before[k]] == [h[0] for h in after[k]] for k in shared)
    print(f"{len(shared)} searches: {same} identical in every field, {ranked} in their ranking")
    return 0 if same == len(shared) else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--store", action="append", required=True)
    d.add_argument("--locomo", type=Path)
    d.add_argument("--queries", type=int, default=150)
    d.add_argument("--read-only", action="store_true", help="open the stores without writing")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args(argv)
    if args.what == "dump":
        return dump(args.out, args.store, args.locomo, args.queries, args.read_only)
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
