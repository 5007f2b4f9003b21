"""The LangGraph store's search overhead against Memory.search, side by side (issue 37).

    python scripts/bench_langgraph.py [--size 10000] [--queries 300] [--users 20] \
        [--work .bench/langgraph]

A store of ``--size`` LangGraph items (the synthetic texts of ``bench_data``, each under
``("memories", "userN")``, embedded by the real MiniLM) is built once through
``LocalmemStore.memory_fields`` and ``add_many``. Then every query runs, in rotating order:

- ``memory``: ``Memory.search(query, k=10)``, the whole store;
- ``memory-user``: ``Memory.search(query, k=10, user_id=...)``, the user's memories;
- ``memory-scoped``: ``Memory.search`` with the namespace as a metadata filter (its levels)
  and the user_id: what the store asked for in its first version;
- ``store``: ``LocalmemStore.search(("memories", "userN"), query=query, limit=10)``.

Each query is embedded every time (the embedder's query cache emptied before each call). The
store's overhead is ``store - memory-user`` per query (the search it makes, plus its own work:
checking each hit's namespace, turning hits into SearchItems); ``store - memory`` also counts
what narrowing to one user costs or saves. p50 and p95 in ms, with the load stated.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_data  # noqa: E402
from bench_store import queries as make_queries  # noqa: E402

from localmem import Memory  # noqa: E402
from localmem.integrations.langgraph import MARK, LocalmemStore  # noqa: E402
from localmem.text import content_hash  # noqa: E402


def build(path: Path, n: int, users: int) -> None:
    with Memory.open(path) as memory:
        have = memory.count()
        if have >= n:
            return
        store = LocalmemStore(memory, index={"fields": ["text"]}, user_level=1)
        texts = bench_data.texts(n)
        rows = [
            store.memory_fields(("memories", f"user{i % users}"), str(i), {"text": texts[i]})
            for i in range(have, n)
        ]
        t0 = time.perf_counter()
        memory.add_many(rows, batch_size=512, infer=False, mine="off", evolve=False)
        print(f"built {n} items in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--work", type=Path, default=ROOT / ".bench" / "langgraph")
    args = parser.parse_args()
    path = args.work / f"store-{args.size}"
    build(path, args.size, args.users)
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {
        "memory": [],
        "memory-user": [],
        "memory-scoped": [],
        "store": [],
    }
    inner: list[float] = []  # the time of the Memory.search each store search makes

    class Timed:
        """The memory, its search timed: the store's own work is its call minus this."""

        def __init__(self, memory: Memory) -> None:
            self.memory = memory

        def search(self, *args, **kwargs):
            t0 = time.perf_counter()
            try:
                return self.memory.search(*args, **kwargs)
            finally:
                inner.append((time.perf_counter() - t0) * 1000)

        def __getattr__(self, name):
            return getattr(self.memory, name)

    with Memory.open(path, create=False) as memory:
        store = LocalmemStore(Timed(memory), index={"fields": ["text"]}, user_level=1)
        queries = make_queries(args.queries + 20)
        users = [f"user{i % args.users}" for i in range(len(queries))]

        def run(name: str, q: str, user: str) -> None:
            memory.embedder._query_cache.pop(content_hash(q), None)
            t0 = time.perf_counter()
            if name == "memory":
                memory.search(q, k=10)
            elif name == "memory-user":
                memory.search(q, k=10, user_id=user)
            elif name == "memory-scoped":
                where = {MARK: "langgraph", "lg_ns:0": "memories", "lg_ns:1": user}
                memory.search(q, k=10, metadata=where, user_id=user)
            else:
                before = len(inner)
                store.search(("memories", user), query=q, limit=10)
                own.append((time.perf_counter() - t0) * 1000 - sum(inner[before:]))
                searches.append(len(inner) - before)
            times[name].append((time.perf_counter() - t0) * 1000)

        names = list(times)
        own: list[float] = []  # a store search's time outside the Memory.search it makes
        searches: list[int] = []  # Memory.search calls per store search (2: a fallback)
        for i, (q, user) in enumerate(zip(queries, users, strict=True)):
            order = names[i % len(names) :] + names[: i % len(names)]
            for name in order:
                run(name, q, user)
        for values in (*times.values(), own, searches):
            del values[:20]  # the warm-up queries
    diff = np.array(times["store"]) - np.array(times["memory-user"])
    out = {
        "size": args.size,
        "queries": args.queries,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        **{
            name: {
                "p50": round(float(np.percentile(v, 50)), 2),
                "p95": round(float(np.percentile(v, 95)), 2),
            }
            for name, v in times.items()
        },
        "overhead_vs_user": {
            "p50": round(float(np.percentile(diff, 50)), 2),
            "p95": round(float(np.percentile(diff, 95)), 2),
        },
        "store_own_work": {
            "p50": round(float(np.percentile(own, 50)), 3),
            "p95": round(float(np.percentile(own, 95)), 3),
        },
        "fallbacks": sum(1 for n in searches if n > 1),
        "store_minus_memory_p50": round(
            float(np.percentile(times["store"], 50) - np.percentile(times["memory"], 50)), 2
        ),
        "store_minus_memory_p95": round(
            float(np.percentile(times["store"], 95) - np.percentile(times["memory"], 95)), 2
        ),
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
