"""Common terms' postings packed in one value on PostgreSQL (localmem/store/postgres/packed.py,
packing.py; issue 34): the layout round-trips; BM25 ranks as the embedded index
before a pack, after it, after adds, removes and updates past it and after a repack; writers
in other processes racing a packer lose nothing; a packer killed mid-pack leaves a usable
store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem.errors import StoreError
from localmem.store.postgres import impact as impact_module
from localmem.store.postgres import packing
from localmem.store.postgres.packed import pack, unpack
from localmem.store.postgres.postings import each_term

WORDS = [f"w{i}" for i in range(10)]
ROOT = Path(__file__).resolve().parent.parent


def _texts(seed: int, n: int) -> list[str]:
    """Texts whose words follow a skewed law: some words in most memories (packed), some in
    few (left as rows)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(WORDS) + 1)
    weights /= weights.sum()
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 12)), p=weights)) for _ in range(n)]


# -- the layout ------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2**62),
            st.integers(0, 2**31 - 1),
            st.integers(0, 2**31 - 1),
        ),
        max_size=60,
        unique_by=lambda r: r[0],
    )
)
def test_a_pack_gives_back_its_postings_sorted_by_label(rows):
    labels = np.array([r[0] for r in rows], dtype=np.int64)
    tf = np.array([r[1] for r in rows], dtype=np.int64)
    dl = np.array([r[2] for r in rows], dtype=np.int64)
    got = unpack(pack(labels, tf, dl))
    order = np.argsort(labels)
    for column, want in zip(got, (labels[order], tf[order], dl[order]), strict=True):
        np.testing.assert_array_equal(column.astype(np.int64), want)


def test_a_pack_is_as_narrow_as_its_values_allow():
    small = pack(np.arange(100), np.ones(100), np.full(100, 7))
    wide = pack(np.arange(100) + 2**40, np.full(100, 70_000), np.full(100, 300))
    assert len(small) == 16 + 100 * (4 + 1 + 1)
    assert len(wide) == 16 + 100 * (8 + 4 + 2)


@pytest.mark.parametrize(
    "bad",
    [
        lambda b: b[:10],  # shorter than its header
        lambda b: b[:-1],  # shorter than its header says
        lambda b: b"XXXX" + b[4:],  # another layout
        lambda b: b[:4] + b"\x03" + b[5:],  # an impossible width
    ],
)
def test_a_damaged_pack_is_refused_with_a_clear_error(bad):
    data = pack(np.arange(5), np.ones(5), np.ones(5))
    with pytest.raises(StoreError, match="packed postings"):
        unpack(bad(data))


def test_postings_that_cannot_be_packed_are_refused():
    with pytest.raises(StoreError, match="twice"):
        pack(np.array([3, 3]), np.ones(2), np.ones(2))
    with pytest.raises(StoreError, match="negative"):
        pack(np.array([-1]), np.ones(1), np.ones(1))
    with pytest.raises(StoreError, match="32 bits"):
        pack(np.array([1]), np.array([2**33]), np.ones(1))


# -- the ranking ------------------------------------------------------------------------------


def _rows(db, packed: bool) -> dict[int, list[tuple[int, int, int]]]:
    """Every term's postings as read by a search (``packed``) or from the rows alone."""
    tids = [int(r[0]) for r in db.fetchall("SELECT id FROM lex_terms ORDER BY id")]
    got: dict[int, list[tuple[int, int, int]]] = {}
    each_term(
        db,
        tids,
        lambda place, labels, tf, dl: got.setdefault(tids[place], []).extend(
            zip(labels.tolist(), tf.tolist(), dl.tolist(), strict=True)
        ),
        packed=packed,
    )
    return {tid: sorted(rows) for tid, rows in got.items()}


def _padded(scores: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``scores`` with zeros up to the length of ``other`` (an array by label grows as labels
    come: its length says nothing)."""
    out = np.zeros(max(len(scores), len(other)), dtype=np.float32)
    out[: len(scores)] = scores
    return out


def _same_everywhere(embedded, postgres, queries) -> None:
    """Every term's postings read through the packs are the rows; every query's scores (all of
    them, and the best k by every path) are the embedded index's, to the last bit."""
    db = postgres.kernel.db
    assert _rows(db, packed=True) == _rows(db, packed=False)
    for query in queries:
        want = embedded.store.lexical.scores(query)
        scored = postgres.store.lexical.scored(query)
        assert scored.packed
        got = scored._all().array
        np.testing.assert_array_equal(_padded(got, want), _padded(want, got))
        for k in (1, 10, 40):
            labels, scores = postgres.store.lexical.scored(query).top(k)
            exp_labels, exp_scores = embedded.store.lexical.top(want, k)
            np.testing.assert_array_equal(scores, exp_scores)
            np.testing.assert_array_equal(labels, exp_labels)


QUERIES = ["w0", "w0 w1", "w3 w0 w9", "w1 w2 w5 w7", "w8 absent"]


@pytest.fixture
def pair(pg_url, embedder, tmp_path, monkeypatch):
    from localmem import Memory

    monkeypatch.setattr(impact_module, "FULL_BELOW", 0)  # the rounds, then every posting
    monkeypatch.setattr(impact_module, "ROUNDS_SHARE", 0.0)  # straight to every posting
    embedded = Memory.open(tmp_path / "embedded", embedder=embedder)
    postgres = Memory.open(pg_url, embedder=embedder)
    yield embedded, postgres
    embedded.close()
    postgres.close()


def test_bm25_ranks_as_the_embedded_index_before_and_after_packs_and_changes_past_them(pair):
    embedded, postgres = pair
    db = postgres.kernel.db
    texts = _texts(1, 400)
    for mem in pair:
        mem.add_many(texts)
    assert not db.scalar("SELECT count(*) FROM lex_packed")  # 400 memories: under the bar
    _same_everywhere(embedded, postgres, QUERIES)

    report = packing.pack_terms(db, min_df=40)
    packed = {int(r[0]) for r in db.fetchall("SELECT term_id FROM lex_packed")}
    assert report.terms == len(packed) >= 4
    _same_everywhere(embedded, postgres, QUERIES)

    # past the packs: adds, deletions and updates (a label's old postings go, new ones come)
    for mem in pair:
        mem.add_many(_texts(2, 60))
    items = list(zip(embedded.list(limit=500), postgres.list(limit=500), strict=True))
    for e, p in items[::7]:
        assert (e.label, e.content) == (p.label, p.content)
        embedded.delete(e.id)
        postgres.delete(p.id)
    for e, p in [pair for i, pair in enumerate(items) if i % 11 == 3 and i % 7]:
        embedded.update(e.id, content=e.content + " w9 w0 w0")
        postgres.update(p.id, content=p.content + " w9 w0 w0")
    assert db.scalar("SELECT count(*) FROM lex_packed_gone")  # marked, not dropped
    assert {int(r[0]) for r in db.fetchall("SELECT term_id FROM lex_packed")} == packed
    _same_everywhere(embedded, postgres, QUERIES)

    report = packing.pack_terms(db, min_df=40, stale=0.0)  # a repack of every changed term
    assert report.terms == len(packed)
    assert not db.scalar("SELECT count(*) FROM lex_packed_gone")
    _same_everywhere(embedded, postgres, QUERIES)
    assert packing.pack_terms(db, min_df=40, stale=0.0).terms == 0  # nothing changed since


def test_a_pack_that_loses_much_at_once_or_has_a_row_changed_is_dropped(pg_url, embedder):
    """One statement deleting over an eighth of a pack drops it (rather than mark so many);
    a packed row changed in place (a copy's lengths filled in) drops its pack: the term is
    read from the rows until it is packed again."""
    from localmem import Memory

    with Memory.open(pg_url, embedder=embedder) as mem:
        db = mem.kernel.db
        mem.add_many(_texts(4, 200))
        packing.pack_terms(db, min_df=20)
        w0 = db.scalar("SELECT id FROM lex_terms WHERE term = 'w0'")
        w1 = db.scalar("SELECT max(term_id) FROM lex_packed")
        assert w1 != w0
        db.execute("UPDATE lex_postings SET tf = tf WHERE term_id = ?", [w1])
        assert not db.scalar("SELECT count(*) FROM lex_packed WHERE term_id = ?", [w1])
        assert db.scalar("SELECT count(*) FROM lex_packed WHERE term_id = ?", [w0])
        held = [int(r[0]) for r in db.fetchall(
            "SELECT label FROM lex_postings WHERE term_id = ? ORDER BY label", [w0])]  # fmt: skip
        mem.store.lexical.remove(held[:2])  # a few: marked
        assert db.scalar("SELECT count(*) FROM lex_packed_gone WHERE term_id = ?", [w0]) == 2
        assert _rows(db, packed=True) == _rows(db, packed=False)
        mem.store.lexical.remove(held[2 : 2 + len(held) // 4])  # a quarter at once: dropped
        assert not db.scalar("SELECT count(*) FROM lex_packed WHERE term_id = ?", [w0])
        assert not db.scalar("SELECT count(*) FROM lex_packed_gone WHERE term_id = ?", [w0])
        assert _rows(db, packed=True) == _rows(db, packed=False)
        assert packing.pack_terms(db, min_df=20).terms >= 2  # the two dropped, again
        assert db.scalar("SELECT count(*) FROM lex_packed WHERE term_id IN (?, ?)", [w0, w1]) == 2
        assert _rows(db, packed=True) == _rows(db, packed=False)


# -- several processes -------------------------------------------------------------------------

_WRITER = """
import json, sys
import numpy as np
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.lexical import PgLexicalIndex
url, first, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
db = PgDatabase(url)
lexical = PgLexicalIndex(db)
rng = np.random.default_rng(seed)
words = [f"w{i}" for i in range(10)]
weights = 1.0 / np.arange(1, 11)
weights /= weights.sum()
live = []
for i in range(n):
    text = " ".join(rng.choice(words, size=int(rng.integers(1, 12)), p=weights))
    lexical.add([first + i], [text])
    live.append(first + i)
    if i % 4 == 3:  # a deletion of one of its own, maybe packed by now
        lexical.remove([live.pop(int(rng.integers(len(live))))])
db.close()
print(json.dumps(live))
"""

_PACKER = """
import sys, time
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres import packing
url, seconds = sys.argv[1], float(sys.argv[2])
db = PgDatabase(url)
made, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    made += packing.pack_terms(db, min_df=20, stale=0.0).terms
db.close()
print(made)
"""

_SLOW_PACKER = """
import sys, time
from pathlib import Path
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres import packing
url, flag = sys.argv[1], Path(sys.argv[2])
real = packing.pack
def slow(*columns):
    data = real(*columns)
    flag.write_text("packing")  # inside the term's transaction: its old pack deleted, locked
    time.sleep(120)
    return data
packing.pack = slow
packing.pack_terms(PgDatabase(url), min_df=20, stale=0.0)
"""


def _run(code: str, *args: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _scores_agree(db, queries) -> None:
    """Every query's scores through the packs are the rows' scores, to the last bit."""
    from localmem.store.postgres.impact import ImpactScores
    from localmem.text import terms

    for query in queries:
        words = list(dict.fromkeys(terms(query)))
        with_packs = ImpactScores(db, words, packed=True)._all().array
        rows_only = ImpactScores(db, words, packed=False)._all().array
        np.testing.assert_array_equal(
            _padded(with_packs, rows_only), _padded(rows_only, with_packs)
        )


def _seeded(pg_url, embedder):
    """A store of 300 memories whose common terms are packed; its database."""
    from localmem import Memory
    from localmem.store.postgres.db import PgDatabase

    with Memory.open(pg_url, embedder=embedder) as mem:
        mem.add_many(_texts(7, 300))
    db = PgDatabase(pg_url)
    assert packing.pack_terms(db, min_df=20).terms >= 4
    return db


def test_two_writers_racing_a_packer_lose_nothing_and_rank_as_a_fresh_pack(pg_url, embedder):
    db = _seeded(pg_url, embedder)
    try:
        before = {int(r[0]) for r in db.fetchall("SELECT label FROM lex_docs")}
        packer = _run(_PACKER, pg_url, 25)
        writers = [
            _run(_WRITER, pg_url, first, 300, seed) for first, seed in ((10_000, 1), (20_000, 2))
        ]
        outs = [w.communicate(timeout=240) for w in writers]
        assert all(w.returncode == 0 for w in writers), [err for _, err in outs]
        made, err = packer.communicate(timeout=240)
        assert packer.returncode == 0, err
        assert int(made) > 0  # it packed while they wrote
        import json

        live = before | {label for out, _ in outs for label in json.loads(out)}
        assert {int(r[0]) for r in db.fetchall("SELECT label FROM lex_docs")} == live
        assert {int(r[0]) for r in db.fetchall("SELECT DISTINCT label FROM lex_postings")} == live
        assert _rows(db, packed=True) == _rows(db, packed=False)
        _scores_agree(db, QUERIES)
        packing.pack_terms(db, min_df=20, stale=0.0)  # a fresh pack ranks the same
        assert _rows(db, packed=True) == _rows(db, packed=False)
        _scores_agree(db, QUERIES)
    finally:
        db.close()


def test_a_packer_killed_mid_pack_leaves_a_usable_store(pg_url, embedder, tmp_path):
    db = _seeded(pg_url, embedder)
    try:
        from localmem.store.postgres.lexical import PgLexicalIndex

        lexical = PgLexicalIndex(db)
        lexical.add(list(range(5000, 5040)), _texts(8, 40))  # packs to remake
        flag = tmp_path / "flag"
        packer = _run(_SLOW_PACKER, pg_url, flag)
        deadline = time.monotonic() + 60
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists(), packer.communicate(timeout=5)
        os.kill(packer.pid, signal.SIGKILL)
        packer.wait(30)
        # the server rolls the dead client's transaction back: its lock goes, its pack stays
        db.execute("SET statement_timeout = '20s'")
        lexical.add([6000], ["w0 w1 w2"])  # a writer is not kept waiting
        assert _rows(db, packed=True) == _rows(db, packed=False)
        _scores_agree(db, QUERIES)
        assert packing.pack_terms(db, min_df=20, stale=0.0).terms > 0
        assert _rows(db, packed=True) == _rows(db, packed=False)
        _scores_agree(db, QUERIES)
    finally:
        db.close()


def test_the_stores_upkeep_and_doctor_fix_pack_common_terms(pg_url, embedder, monkeypatch):
    """A drain of pending vectors packs stale common terms (within a budget); ``doctor --fix``
    (``check_store(repair=True)``) packs every one and says so; a read-only open packs none."""
    from localmem import Memory
    from localmem.store.maintenance import check_store

    monkeypatch.setattr(packing, "PACK_MIN_DF", 20)
    with Memory.open(pg_url, embedder=embedder) as mem:
        mem.add_many(_texts(9, 200))
        mem.store.drain_vectors()  # (the back-pressure of add_many may have drained them)
        db = mem.kernel.db
        assert db.scalar("SELECT count(*) FROM lex_packed") >= 4
        db.execute("DELETE FROM lex_packed")
    with Memory.open(pg_url, embedder=embedder, read_only=True) as mem:
        assert mem.store.pack_postings() == 0
    facts = check_store(pg_url, repair=True)
    assert any("packed the postings of" in line for line in facts["repaired"])
    assert check_store(pg_url, repair=True)["repaired"] == []  # nothing stale left


def test_a_store_without_the_pack_tables_reads_rows_until_a_writable_open_makes_them(
    pg_url, embedder, tmp_path, monkeypatch
):
    """A store made by earlier code (no pack tables) ranks as the embedded index opened
    read-only (rows read, nothing made); its first writable open makes the tables, and its
    packs rank the same."""
    from localmem import Memory

    monkeypatch.setattr(impact_module, "FULL_BELOW", 0)
    monkeypatch.setattr(impact_module, "ROUNDS_SHARE", 0.0)
    texts = _texts(11, 300)
    with (
        Memory.open(pg_url, embedder=embedder) as mem,
        Memory.open(tmp_path / "e", embedder=embedder) as ref,
    ):
        mem.add_many(texts)
        ref.add_many(texts)
        db = mem.kernel.db
        for trigger in ("deleted", "changed", "emptied"):
            db.execute(f"DROP TRIGGER lex_packed_{trigger} ON lex_postings")
            db.execute(f"DROP FUNCTION lex_packed_{trigger}")
        db.execute("DROP TABLE lex_packed_gone, lex_packed")
        db.execute("ALTER TABLE lex_postings DROP COLUMN posting_seq")
        db.execute("DROP SEQUENCE lex_posting_seq")
    with (
        Memory.open(pg_url, embedder=embedder, read_only=True) as mem,
        Memory.open(tmp_path / "e", embedder=embedder, read_only=True) as ref,
    ):
        assert not packing.has_packs(mem.kernel.db)
        assert mem.store.pack_postings() == 0
        for query in QUERIES:
            scored = mem.store.lexical.scored(query)
            assert not scored.packed
            np.testing.assert_array_equal(
                scored.top(20)[0], ref.store.lexical.top(ref.store.lexical.scores(query), 20)[0]
            )
    with (
        Memory.open(pg_url, embedder=embedder) as mem,
        Memory.open(tmp_path / "e", embedder=embedder) as ref,
    ):
        assert any("packed postings" in n for n in mem.store.notices)
        assert packing.pack_terms(mem.kernel.db, min_df=40).terms >= 4
        _same_everywhere(ref, mem, QUERIES)


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(1, 25), st.integers(0, 10_000)),
        st.tuples(st.just("remove"), st.integers(1, 8), st.integers(0, 10_000)),
        st.tuples(st.just("update"), st.integers(1, 4), st.integers(0, 10_000)),
        st.tuples(st.just("pack"), st.sampled_from([1, 3, 10]), st.sampled_from([0.0, 0.1, 0.5])),
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=_OPS)
def test_any_sequence_of_writes_and_packs_reads_the_rows(pg_url, embedder, ops):
    """Adds, removes, updates (a label's postings gone, new ones written) and packs at any
    bar and staleness, in any order: after each step every term's postings read through the
    packs are its rows, and the scores are the rows' scores."""
    from localmem import Memory
    from localmem.store.postgres.db import PgDatabase
    from localmem.store.postgres.lexical import PgLexicalIndex

    Memory.open(pg_url, embedder=embedder).close()  # the store's tables (once per database)
    db = PgDatabase(pg_url)
    try:
        with db.transaction():  # each example from an empty index
            for table in ("lex_packed", "lex_postings", "lex_docs", "lex_terms"):
                db.execute(f"DELETE FROM {table}")
            db.execute("UPDATE lex_stats SET docs = 0, total = 0")
        lexical = PgLexicalIndex(db)
        live: list[int] = []
        top = 0
        for op, n, seed in ops:
            if op == "pack":
                packing.pack_terms(db, min_df=n, stale=seed)  # seed: the staleness here
                assert _rows(db, packed=True) == _rows(db, packed=False)
                continue
            rng = np.random.default_rng(seed)
            if op == "add":
                labels = list(range(top, top + n))
                top += n
                lexical.add(labels, _texts(seed, n))
                live += labels
            elif op in ("remove", "update") and live:
                chosen = sorted({live[int(i)] for i in rng.integers(0, len(live), n)})
                with db.transaction():
                    lexical.remove(chosen)
                    if op == "update":  # the same labels, new texts
                        lexical.add(chosen, _texts(seed + 1, len(chosen)))
                if op == "remove":
                    live = [x for x in live if x not in set(chosen)]
            assert _rows(db, packed=True) == _rows(db, packed=False)
        _scores_agree(db, QUERIES)
    finally:
        db.close()


# -- copies and exports of a packed store ---------------------------------------------------


def test_a_packed_store_with_deletions_since_copies_and_exports_as_its_rows(
    pg_server, pg_url, embedder, tmp_path
):
    """migrate-store and export/import of a store whose common terms are packed, with
    postings deleted from the packs and written past them: the copies hold the rows (not
    the packs, not ``posting_seq``) and score as the source, on DuckDB and on PostgreSQL (whose
    copy is packed again by its own upkeep and still reads its rows)."""
    from localmem import Memory
    from localmem.store.copy import copy_store, table_counts
    from localmem.store.dump import dump, load

    with Memory.open(pg_url, embedder=embedder) as src:
        db = src.kernel.db
        src.add_many(_texts(21, 200))
        assert packing.pack_terms(db, min_df=20).terms >= 4
        held = [int(r[0]) for r in db.fetchall("SELECT DISTINCT label FROM lex_postings")]
        src.store.lexical.remove(held[:3])  # marked in lex_packed_gone
        src.add_many(_texts(22, 30))  # past the packs' upto
        assert db.scalar("SELECT count(*) FROM lex_packed_gone")
        want = {q: src.store.lexical.scores(q) for q in QUERIES}
        counts = table_counts(src.store)
        lines = dump(src.store)
        assert not any(line.get("table", "").startswith("lex_packed") for line in lines)
        assert not any("posting_seq" in line.get("row", {}) for line in lines)
        other = pg_server.new_database()
        try:
            targets = [
                ("folder copy", tmp_path / "copied", "copy"),
                ("pg copy", other, "copy"),
                ("folder import", tmp_path / "imported", "load"),
            ]
            for what, where, how in targets:
                with Memory.open(where, embedder=embedder) as dst:
                    if how == "copy":
                        copy_store(src.store, dst.store)
                    else:
                        load(dst.store, lines)
                    got_counts = table_counts(dst.store)
                    for table in ("memories", "lex_postings", "lex_docs", "lex_terms"):
                        assert got_counts[table] == counts[table], (what, table)
                    if dst.kernel.db.backend == "postgres":
                        ddb = dst.kernel.db
                        assert packing.pack_terms(ddb, min_df=20).terms >= 4
                        assert _rows(ddb, packed=True) == _rows(ddb, packed=False)
                    for query, scores in want.items():
                        got = dst.store.lexical.scores(query)
                        np.testing.assert_array_equal(
                            _padded(got, scores), _padded(scores, got), err_msg=f"{what} {query}"
                        )
        finally:
            pg_server.drop_database(other)


def _export_by_earlier_code(store, monkeypatch) -> list[dict]:
    """An export of ``store`` as the code before packs made it of a packed database: it knew
    neither ``lex_packed*`` (exported them as tables) nor ``posting_seq`` (exported it as a
    column of the postings). Checked against that code (b475b12) run on a packed store."""
    from localmem.store import dump as dump_module

    with monkeypatch.context() as m:
        m.setattr(dump_module, "SKIPPED", {"schema_migrations", "lex_stats"})
        m.setattr(dump_module, "DERIVED_COLUMNS", frozenset({"vector_pending"}))
        return dump_module.dump(store)


def _packed_source(mem) -> None:
    mem.add_many(_texts(31, 200))
    assert packing.pack_terms(mem.kernel.db, min_df=20).terms >= 4
    mem.add_many(_texts(32, 20))  # postings past the packs


def test_an_export_of_a_packed_store_by_earlier_code_imports_into_a_folder_store(
    pg_url, embedder, tmp_path, monkeypatch
):
    """The packs are derived: an export that carries them (and ``posting_seq``) imports as its
    rows, the packs and the sequence's numbers left out."""
    from localmem import Memory
    from localmem.store.dump import load

    with Memory.open(pg_url, embedder=embedder) as src:
        _packed_source(src)
        lines = _export_by_earlier_code(src.store, monkeypatch)
        assert {"lex_packed", "lex_packed_gone"} <= set(lines[0]["tables"])
        want = {q: src.store.lexical.scores(q) for q in QUERIES}
        with Memory.open(tmp_path / "imported", embedder=embedder) as dst:
            load(dst.store, lines)
            for query, scores in want.items():
                got = dst.store.lexical.scores(query)
                np.testing.assert_array_equal(_padded(got, scores), _padded(scores, got))


def test_an_export_of_a_packed_store_by_earlier_code_imports_into_postgres_and_packs_right(
    pg_server, pg_url, embedder, monkeypatch
):
    """Imported into PostgreSQL, the postings draw ``posting_seq`` from the new store's
    sequence (the export's numbers are another database's): a posting written after a pack
    of the imported store is read by a search."""
    from localmem import Memory
    from localmem.store.dump import load

    other = pg_server.new_database()
    try:
        with Memory.open(pg_url, embedder=embedder) as src:
            _packed_source(src)
            lines = _export_by_earlier_code(src.store, monkeypatch)
        with Memory.open(other, embedder=embedder) as dst:
            load(dst.store, lines)
            db = dst.kernel.db
            assert packing.pack_terms(db, min_df=20).terms >= 4
            dst.add_many(["w0 w1 w2 written after the pack"])
            assert _rows(db, packed=True) == _rows(db, packed=False)
    finally:
        pg_server.drop_database(other)
