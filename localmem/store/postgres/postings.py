"""Every posting of some terms read from PostgreSQL as numpy arrays, one statement, term by term.

BM25 over a common word's postings at a million memories: scored by the server's executor (a
hash aggregate over an index-only scan, then the memories at the k-th score looked up) each
posting cost 0.7-1.0 us. Here each term's postings come back as three arrays (labels, tf,
document length: ``array_agg`` over an index-only scan of the covering index), in
PostgreSQL's binary format, read by numpy without a Python object per posting (~0.36 us a
posting, most of it the server's scan and building the arrays); the client scores them
(``impact.py``, 0.5-5 ms at 1M). Measured in docs/benchmarks.md ("pg3").

Where a term has a pack (``packed.py``: common terms, made by ``packing.py``), the same
statement reads its pack, the labels deleted from it since and its postings written since
instead of every row (~10x less a posting; docs/benchmarks.md "pg4").

One statement, so one snapshot: another process's add is either wholly in or wholly out. The
rows are read one at a time (psycopg's ``stream``, libpq's single-row mode), so a query's
postings are never all held at once as wire data: one term's arrays, then the next.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from localmem.errors import StoreError
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.packed import unpack

#: one row per term, in the order given (a nested loop over ``unnest``'s rows keeps it)
_TERM_ARRAYS = """
SELECT q.i, p.labels, p.tfs, p.dls
FROM unnest(%s::INTEGER[]) WITH ORDINALITY AS q(tid, i) CROSS JOIN LATERAL (
    SELECT array_agg(label) AS labels, array_agg(tf) AS tfs, array_agg(coalesce(dl, 0)) AS dls
    FROM lex_postings WHERE term_id = q.tid) p
"""
#: the same, where packs exist (``packed.py``): a packed term's pack and the labels deleted
#: from it since, and its postings written since (every posting, for a term without a pack)
_TERM_PACKS = """
SELECT q.i, p.labels, p.tfs, p.dls, k.postings, g.labels
FROM unnest(%s::INTEGER[]) WITH ORDINALITY AS q(tid, i)
LEFT JOIN lex_packed k ON k.term_id = q.tid
CROSS JOIN LATERAL (
    SELECT array_agg(label) AS labels FROM lex_packed_gone WHERE term_id = k.term_id) g
CROSS JOIN LATERAL (
    SELECT array_agg(label) AS labels, array_agg(tf) AS tfs, array_agg(coalesce(dl, 0)) AS dls
    FROM (SELECT label, tf, dl FROM lex_postings WHERE k.upto IS NULL AND term_id = q.tid
          UNION ALL
          SELECT label, tf, dl FROM lex_postings
          WHERE term_id = q.tid AND posting_seq > k.upto) x) p
"""
#: PostgreSQL's type oids of ``INTEGER[]`` and ``BIGINT[]``, and their elements' numpy types
_ARRAY_TYPES = {1007: ">i4", 1016: ">i8"}

#: called with (the term's place in the order given, labels, tf, document lengths), once or
#: more a term (a pack, then the postings written since: no label twice for one term)
OnTerm = Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]


def _array(data: Any, element: str) -> np.ndarray:
    """A one-dimensional integer array without NULLs, from PostgreSQL's binary format: a
    header (dimensions, a has-NULLs flag, the element type, each dimension's size and lower
    bound), then each element as its byte length and its big-endian value."""
    dims, has_nulls = struct.unpack_from(">ii", data, 0)
    if dims == 0:
        return np.empty(0, dtype=element[1:])
    if dims != 1 or has_nulls:
        raise StoreError("a postings array came back with NULLs or more than one dimension")
    (size,) = struct.unpack_from(">i", data, 12)
    cells = np.frombuffer(
        data, dtype=[("length", ">i4"), ("value", element)], count=size, offset=20
    )
    return cells["value"].astype(element[1:])  # a copy: ``data`` is the driver's buffer


def _loader(element: str) -> type:
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    class ArrayLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> np.ndarray:
            return _array(data, element)

    return ArrayLoader


def each_term(
    db: PgDatabase, term_ids: Sequence[int], on_term: OnTerm, *, packed: bool = False
) -> None:
    """Read every posting of ``term_ids`` (one statement) and hand each term's to
    ``on_term``, in the order of ``term_ids`` (a term without postings is skipped);
    ``packed``: the store has packs (:func:`~localmem.store.postgres.packing.has_packs`), read
    where a term has one."""
    if not term_ids:
        return
    with db.guarded() as con:
        cur = con.cursor(binary=True)
        for oid, element in _ARRAY_TYPES.items():
            cur.adapters.register_loader(oid, _loader(element))
        # every term has its row (an aggregate over no postings gives NULLs); rows come in
        # the order asked, and were they not, a later one would wait for its turn here
        waiting: dict[int, tuple[Any, ...]] = {}
        turn = 1
        sql = _TERM_PACKS if packed else _TERM_ARRAYS
        for i, *row in cur.stream(sql, [list(term_ids)]):
            waiting[int(i)] = tuple(row)
            while turn in waiting:
                labels, tfs, dls, *pack = waiting.pop(turn)
                if pack and pack[0] is not None:
                    _from_pack(turn - 1, pack[0], pack[1], on_term)
                if labels is not None:
                    on_term(turn - 1, labels, tfs, dls)
                turn += 1


def _from_pack(place: int, data: bytes, gone: np.ndarray | None, on_term: OnTerm) -> None:
    """Hand on a term's pack, less the labels deleted since it was made."""
    labels, tf, dl = unpack(data)
    if gone is not None and len(gone):
        keep = ~np.isin(labels, gone)
        labels, tf, dl = labels[keep], tf[keep], dl[keep]
    if len(labels):
        on_term(place, labels.astype(np.int64, copy=False), tf, dl)
