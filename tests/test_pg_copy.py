"""Binary ``COPY`` on a real PostgreSQL: vectors packed as ``real[]`` and BM25 postings packed
by numpy arrive exactly as the values handed in (localmem/store/postgres/arrow.py, binary.py)."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem import Memory
from localmem.store.postgres.db import PgDatabase

pytestmark = pytest.mark.postgres

_floats = st.floats(width=32, allow_nan=False)
_vectors = st.lists(
    st.one_of(st.none(), st.lists(_floats, min_size=0, max_size=6)), min_size=1, max_size=8
)


@pytest.fixture
def db(pg_url):
    db = PgDatabase(pg_url)
    db.execute("CREATE TABLE t (k BIGINT, s VARCHAR, at TIMESTAMP, v REAL[])")
    yield db
    db.close()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(vectors=_vectors)
def test_vectors_of_any_length_and_nulls_round_trip_exactly(db, vectors):
    n = len(vectors)
    data = pa.table(
        {
            "k": pa.array(range(n), pa.int64()),
            "s": pa.array([None if i % 3 == 0 else f"é{i}" for i in range(n)], pa.string()),
            "at": pa.array(
                [datetime(2026, 11, 26, 20, 0, i) for i in range(n)], pa.timestamp("us")
            ),
            "v": pa.array(vectors, pa.list_(pa.float32())),
        }
    )
    db.execute("DELETE FROM t")
    db.insert_arrow("t", data)
    rows = db.fetchall("SELECT k, s, at, v FROM t ORDER BY k")
    assert [r[0] for r in rows] == list(range(n))
    assert [r[1] for r in rows] == data.column("s").to_pylist()
    assert [r[2] for r in rows] == data.column("at").to_pylist()
    for (_, _, _, got), want in zip(rows, vectors, strict=True):
        if want is None:
            assert got is None
        else:
            assert np.array_equal(np.float32(got), np.float32(want))


def test_a_fixed_size_float32_column_is_copied_exactly(db):
    v = np.random.default_rng(3).standard_normal((50, 384)).astype(np.float32)
    data = pa.table(
        {
            "k": pa.array(range(50), pa.int64()),
            "v": pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), 384),
        }
    )
    db.insert_arrow("t (k, v)", data, "k, v")
    got = np.asarray([r[0] for r in db.fetchall("SELECT v FROM t ORDER BY k")], np.float32)
    assert np.array_equal(got, v)


def test_postings_and_collection_counts_agree_after_adds_and_removes(pg_url, embedder):
    texts = [f"the quick fox number {i} jumps over lazy dog {i % 7}" for i in range(300)]
    with Memory.open(pg_url, embedder=embedder) as mem:
        ids = mem.add_many(texts, batch_size=100)
        mem.add_many(["a fox again", "the dog again"])
        for item in ids[:40]:
            mem.delete(item.id)
        db = mem.store.db
        mismatched = db.fetchall(
            "SELECT t.term, t.df, count(p.label) FROM lex_terms t "
            "LEFT JOIN lex_postings p ON p.term_id = t.id GROUP BY t.term, t.df "
            "HAVING t.df <> count(p.label)"
        )
        assert mismatched == []
        stats = db.fetchone("SELECT docs, total FROM lex_stats")
        docs = db.fetchone("SELECT count(*), sum(length) FROM lex_docs")
        assert tuple(stats) == tuple(docs) and docs[0] == 262
        # each posting's dl is its document's length, its impact computed from tf and dl
        assert (
            db.scalar(
                "SELECT count(*) FROM lex_postings p JOIN lex_docs d ON d.label = p.label "
                "WHERE p.dl <> d.length OR p.impact IS NULL"
            )
            == 0
        )
