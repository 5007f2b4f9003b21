"""PostgreSQL ``add_many``: this code's BM25 postings write against main's, side by side in one run
(issue 34 item 3: >= 1,000 memories/s).

Usage:
    python scripts/bench_pg_add.py [--size 20000] [--adds 2000] [--rounds 3] [--work DIR]

One PostgreSQL store (pgserver, over its socket) is grown to ``--size`` synthetic memories
(scripts/bench_data.py texts, random unit vectors served by a precomputed embedder: every other
step of ``add_many`` is real). Then, ``--rounds`` times, each variant takes ``--adds`` more in
chunks of 1,000, the order of the variants alternating round by round:

- ``main``: main's code before this change, kept here: :func:`main_add`, the postings write
  (five statements a chunk: the terms by ``INSERT ... SELECT unnest``, the postings by an
  ``unnest`` of five arrays joined to ``lex_terms`` on the term's text, ``df`` by an ``UPDATE``
  joined on the text) and :func:`main_copy_into` (the rows of ``memories`` by text ``COPY``,
  each vector printed);
- ``after``: the code as it is now (:meth:`PgLexicalIndex.add`: one upsert of the terms that
  returns their ids, the postings and document lengths by binary ``COPY``; ``arrow.copy_into``:
  the vectors packed as binary ``real[]``).

Both write the same rows to the same store. Pending vectors are drained (untimed) before each
measurement, so every measurement starts from none pending. Reported: items/s of each
``add_many`` and the seconds spent in ``lexical.add``; the median over rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench_data  # noqa: E402
from bench_pg import log, machine, start_postgres  # noqa: E402
from bench_scale import Precomputed  # noqa: E402

from localmem import Memory  # noqa: E402
from localmem.store.postgres import arrow  # noqa: E402
from localmem.store.postgres.impact import impact  # noqa: E402
from localmem.store.postgres.lexical import PgLexicalIndex, postings_of  # noqa: E402


def main_add(self: PgLexicalIndex, labels: Sequence[int], texts: Sequence[str]) -> None:
    """main's ``PgLexicalIndex.add`` (bf7acaa), kept here to be measured beside this code's."""
    if not labels:
        return
    p_term, p_label, p_tf, p_dl, d_len = postings_of(labels, texts)  # main tokenised inline
    df = Counter(p_term)
    with self.db.transaction():
        self.db.execute(
            "UPDATE lex_stats SET docs = docs + ?, total = total + ?",
            [len(d_len), int(sum(d_len))],
        )
        if p_term:
            self.db.execute(
                "INSERT INTO lex_terms SELECT nextval('lex_term_seq'), t "
                "FROM (SELECT DISTINCT unnest(?::VARCHAR[]) AS t) new ORDER BY t "
                "ON CONFLICT (term) DO NOTHING",
                [sorted(set(p_term))],
            )
            self.db.execute(
                "INSERT INTO lex_postings (term_id, label, tf, dl, impact) "
                "SELECT t.id, x.label, x.tf, x.dl, x.impact FROM "
                "unnest(?::VARCHAR[], ?::BIGINT[], ?::INTEGER[], ?::INTEGER[], ?::REAL[]) "
                "AS x(term, label, tf, dl, impact) JOIN lex_terms t ON t.term = x.term",
                [p_term, p_label, p_tf, p_dl, impact(p_tf, p_dl).tolist()],
            )
            terms_in_order = sorted(df)
            self.db.execute(
                "UPDATE lex_terms t SET df = t.df + x.n FROM "
                "unnest(?::VARCHAR[], ?::BIGINT[]) AS x(term, n) WHERE t.term = x.term",
                [terms_in_order, [df[t] for t in terms_in_order]],
            )
        self.db.execute(
            "INSERT INTO lex_docs SELECT * FROM unnest(?::BIGINT[], ?::INTEGER[])",
            [[int(x) for x in labels], d_len],
        )


def main_copy_into(con: Any, name: str, data: pa.Table) -> None:
    """main's ``arrow.copy_into`` (text ``COPY``, vectors printed as ``{...}`` literals)."""
    if data.num_rows == 0:
        return
    columns = [arrow._values(data.column(i)) for i in range(data.num_columns)]
    cols = ", ".join(f'"{n}"' for n in data.column_names)
    with con.cursor() as cur, cur.copy(f"COPY {name} ({cols}) FROM STDIN") as copy:
        for row in zip(*columns, strict=True):
            copy.write_row(row)


#: each variant: the BM25 add and the pyarrow COPY used by the store
VARIANTS = {
    "main": (main_add, main_copy_into),
    "after": (PgLexicalIndex.add, arrow.copy_into),
}


def unit_vectors(start: int, n: int) -> np.ndarray:
    v = np.random.default_rng(start).standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=20_000)
    p.add_argument("--adds", type=int, default=2_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", type=Path, default=None, help="where the PostgreSQL data goes")
    p.add_argument("--out", type=Path, default=ROOT / ".bench" / "pg" / "add.json")
    args = p.parse_args()
    total = args.size + args.adds * args.rounds * len(VARIANTS)
    texts = bench_data.texts(total)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-pg-add-", dir="/tmp"))
    server, url = start_postgres(work / "pgdata")
    emb = Precomputed("bench-random", 384)
    mem = Memory.open(url, embedder=emb)
    store = mem.store
    lexical = store.lexical
    try:
        log(f"growing to {args.size}")
        for at in range(0, args.size, 10_000):
            chunk = texts[at : min(at + 10_000, args.size)]
            emb.serve(chunk, unit_vectors(at, len(chunk)))
            mem.add_many(chunk, batch_size=1000)
        store.drain_vectors()
        have = args.size
        runs: dict[str, list[dict]] = {v: [] for v in VARIANTS}
        for r in range(args.rounds):
            order = list(VARIANTS) if r % 2 == 0 else list(VARIANTS)[::-1]
            for name in order:
                chunk = texts[have : have + args.adds]
                emb.serve(chunk, unit_vectors(have, len(chunk)))
                store.drain_vectors()
                spent = [0.0]
                fn, copy_into = VARIANTS[name]
                arrow.copy_into = copy_into

                def timed(labels, docs, fn=fn, spent=spent):
                    t = time.perf_counter()
                    fn(lexical, labels, docs)
                    spent[0] += time.perf_counter() - t

                lexical.add = timed  # type: ignore[method-assign]
                t0 = time.perf_counter()
                mem.add_many(chunk, batch_size=1000)
                wall = time.perf_counter() - t0
                del lexical.add
                arrow.copy_into = VARIANTS["after"][1]
                have += len(chunk)
                runs[name].append({"items_s": len(chunk) / wall, "lexical_s": spent[0]})
                log(f"round {r} {name}: {len(chunk) / wall:.0f}/s, lexical.add {spent[0]:.2f} s")
        store.drain_vectors()
        result = {
            "machine": machine(),
            "size": args.size,
            "adds": args.adds,
            "runs": runs,
            "median": {
                n: {k: statistics.median(x[k] for x in rs) for k in ("items_s", "lexical_s")}
                for n, rs in runs.items()
            },
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
        print(json.dumps(result["median"], indent=1))
    finally:
        mem.close()
        server.cleanup()


if __name__ == "__main__":
    main()
