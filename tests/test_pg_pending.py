"""Pending vectors on PostgreSQL (localmem/store/postgres/vectors.py, issue 34): a new row's
vector waits outside the HNSW index until a drain puts it there, and is searched exactly
meanwhile. Against a real server: pending rows are found, a drain changes no result, the bound
holds, a close, a job worker and a writer past the bound drain, a server killed mid-drain loses
nothing, two drainers (and writers racing them) never index a row twice, and a store made
before pending vectors has its index rebuilt once."""

from __future__ import annotations

import threading
import time

import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import run

from localmem import Memory
from localmem.config import Config
from localmem.embed import Embedder
from localmem.store.postgres.vectors import index_name
from localmem.worker import JobWorker

pytestmark = pytest.mark.postgres

DIM = 384


class Given(Embedder):
    """An embedder that hands out given vectors (random unit vectors: a search's truth is then
    plain numpy), with the real model's name so the store takes them."""

    def __init__(self, name: str, vectors: dict[str, np.ndarray]) -> None:
        super().__init__(query_cache_size=0)
        self.name = name
        self.vectors = vectors

    @property
    def dim(self) -> int:
        return DIM

    def embed_batch(self, texts):
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)


def unit_vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def texts_and_vectors(n: int, seed: int = 3) -> tuple[list[str], np.ndarray]:
    return [f"memory number {i} of seed {seed}" for i in range(n)], unit_vectors(n, seed)


def open_mem(url: str, embedder, texts, vectors, **store) -> Memory:
    given = Given(embedder.name, dict(zip(texts, vectors, strict=True)))
    config = Config().model_copy(update={"store": Config().store.model_copy(update=store)})
    return Memory.open(url, embedder=given, config=config, engine=False)


def label_of(mem: Memory) -> dict[str, int]:
    return {c: int(lbl) for lbl, c in mem.store.db.fetchall("SELECT label, content FROM memories")}


def exact_top(vectors: np.ndarray, labels: list[int], query: np.ndarray, k: int) -> list[int]:
    order = np.argsort(-(vectors @ query), kind="stable")[:k]
    return [labels[i] for i in order]


def indexed_by_hnsw(mem: Memory) -> int:
    return int(mem.store.db.scalar("SELECT count(*) FROM memories WHERE NOT vector_pending"))


@pytest.fixture
def many(embedder):
    return texts_and_vectors(300)


def test_pending_rows_are_found_and_a_drain_changes_no_result(pg_url, embedder, many):
    texts, vectors = many
    with open_mem(pg_url, embedder, texts, vectors, pg_pending_max=10_000) as mem:
        mem.add_many(texts[:150])  # the first half drained into the index, the rest pending
        assert mem.store.drain_vectors() == 150
        mem.add_many(texts[150:])
        assert mem.store.pending_vectors == 150 and indexed_by_hnsw(mem) == 150
        labels = [label_of(mem)[t] for t in texts]
        queries = unit_vectors(20, 99)
        before = [mem.store.vectors.search(q, 10)[0].tolist() for q in queries]
        for i in (0, 149, 150, 299):  # a row's own vector finds it, pending or indexed
            assert mem.store.vectors.search(vectors[i], 1)[0].tolist() == [labels[i]]
        hit = mem.search(texts[200], k=1, mode="dense", temporal=False, rerank="off")
        assert hit[0].memory.content == texts[200]
        assert mem.store.drain_vectors() == 150 and mem.store.pending_vectors == 0
        after = [mem.store.vectors.search(q, 10)[0].tolist() for q in queries]
    truth = [exact_top(vectors, labels, q, 10) for q in queries]
    # 300 vectors: HNSW at ef_search 96 is exact here, so all three agree
    assert before == truth and after == truth


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(split=st.lists(st.booleans(), min_size=60, max_size=60), seed=st.integers(0, 2**16))
def test_any_split_of_pending_and_indexed_rows_searches_as_exact(pg_server, embedder, split, seed):
    """Whatever rows are drained and whatever wait (and some deleted), a search returns the
    exact top k of the live rows (up to HNSW's approximation, none at this size)."""
    url = pg_server.new_database()
    texts, vectors = texts_and_vectors(60, seed)
    with open_mem(url, embedder, texts, vectors, pg_pending_max=10_000) as mem:
        ids = [it.id for it in mem.add_many(texts)]
        by_label = label_of(mem)
        drained = [by_label[t] for t, d in zip(texts, split, strict=True) if d]
        mem.store.db.execute(
            "UPDATE memories SET vector_pending = false WHERE label = ANY(?::BIGINT[])", [drained]
        )
        gone = {3, 30}
        for i in gone:
            mem.delete(ids[i])
        live = [i for i in range(60) if i not in gone]
        labels = [by_label[texts[i]] for i in live]
        for q in unit_vectors(5, seed + 1):
            got = mem.store.vectors.search(q, 8)[0].tolist()
            assert got == exact_top(vectors[live], labels, q, 8)


def test_the_bound_makes_the_writer_drain_the_excess(pg_server, embedder, many):
    texts, vectors = many
    with open_mem(pg_server.new_database(), embedder, texts, vectors, pg_pending_max=40) as mem:
        for start in range(0, 300, 50):
            mem.add_many(texts[start : start + 50])
            assert mem.store.pending_vectors == 40
        assert indexed_by_hnsw(mem) == 260
    with open_mem(pg_server.new_database(), embedder, texts, vectors, pg_pending_max=0) as mem:
        mem.add_many(texts[:30])  # no bound: every add indexed before it returns
        assert mem.store.pending_vectors == 0 and indexed_by_hnsw(mem) == 30


def test_a_writers_close_drains_and_a_readers_does_not(pg_url, embedder, many, capsys):
    texts, vectors = many
    with open_mem(pg_url, embedder, texts, vectors) as writer:
        writer.add_many(texts[:100])
        assert writer.store.pending_vectors == 100
        with open_mem(pg_url, embedder, texts, vectors) as reader:
            assert reader.search(texts[5], k=1, mode="dense")[0].memory.content == texts[5]
        assert writer.store.pending_vectors == 100  # the reader left them
    with open_mem(pg_url, embedder, texts, vectors) as mem:
        assert mem.store.pending_vectors == 0
        mem.add_many(texts[100:130])
        # doctor (another process's open, a reader) shows them and leaves them pending
        _, out, _ = run(capsys, "doctor", "--store", pg_url)
        line = next(x for x in out.splitlines() if "pg pending vectors" in x)
        assert line.split("pg pending vectors")[1].split()[0] == "30", line
        assert mem.store.check()["pending_vectors"] == 30


def test_a_close_after_deletions_drains_none_of_another_writers_rows(pg_url, embedder, many):
    """A deletion leaves no vector pending, so a process that only deleted owes no drain: its
    close must not put another writer's pending rows into the index."""
    texts, vectors = many
    with open_mem(pg_url, embedder, texts, vectors) as mem:
        ids = [item.id for item in mem.add_many(texts[:60])]
    with open_mem(pg_url, embedder, texts, vectors) as other:
        other.add_many(texts[100:180])
        assert other.store.pending_vectors == 80
        with open_mem(pg_url, embedder, texts, vectors) as deleter:
            for memory_id in ids[:40]:
                deleter.delete(memory_id)
        assert other.store.pending_vectors == 80  # left for their writer
    with open_mem(pg_url, embedder, texts, vectors) as mem:
        assert mem.store.pending_vectors == 0 and mem.store.live_count() == 100


def test_a_job_worker_drains_in_the_background(pg_url, embedder, many):
    texts, vectors = many
    with open_mem(pg_url, embedder, texts, vectors) as mem:
        mem.add_many(texts[:200])
        assert mem.store.pending_vectors == 200
        with JobWorker(mem, idle_s=0.05) as worker:
            deadline = time.monotonic() + 120
            while mem.store.pending_vectors and time.monotonic() < deadline:
                time.sleep(0.1)
        assert mem.store.pending_vectors == 0 and worker.indexed == 200


def test_a_server_killed_mid_drain_loses_no_row(pg_server, embedder):
    url = pg_server.new_database()
    texts, vectors = texts_and_vectors(1500, 5)
    # one batch of every row: the drain is a long transaction, killed in its middle
    mem = open_mem(url, embedder, texts, vectors, pg_pending_max=10_000, pg_drain_batch=1500)
    mem.add_many(texts, batch_size=500)
    failed: list[BaseException] = []

    def drain() -> None:
        try:
            mem.store.drain_vectors()
        except BaseException as exc:  # the server went away under it
            failed.append(exc)

    thread = threading.Thread(target=drain)
    thread.start()
    with psycopg.connect(url, autocommit=True) as con:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            running = con.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'WITH batch AS%' "
                "AND state = 'active'"
            ).fetchone()[0]
            if running:
                break
            time.sleep(0.01)
        assert running, "the drain never started"
    time.sleep(0.3)
    pg_server.restart()
    thread.join(120)
    assert failed, "the drain finished before the kill: make it longer"
    mem.store.close(save=False)  # as the killed process would: no drain on the way out
    mem.close()
    with open_mem(url, embedder, texts, vectors) as mem:
        assert mem.store.live_count() == 1500
        assert mem.store.pending_vectors == 1500  # rolled back whole: still pending, still found
        labels = label_of(mem)
        for i in range(0, 1500, 97):
            assert mem.store.vectors.search(vectors[i], 1)[0].tolist() == [labels[texts[i]]]
        assert mem.store.drain_vectors() == 1500
        for i in range(0, 1500, 97):
            assert mem.store.vectors.search(vectors[i], 1)[0].tolist() == [labels[texts[i]]]


def test_two_drainers_and_a_writer_racing_them_index_each_row_once(pg_url, embedder):
    texts, vectors = texts_and_vectors(600, 7)
    first = open_mem(pg_url, embedder, texts, vectors, pg_pending_max=10_000, pg_drain_batch=20)
    second = open_mem(pg_url, embedder, texts, vectors, pg_pending_max=10_000, pg_drain_batch=20)
    first.add_many(texts[:300])
    counts = {"first": 0, "second": 0}
    writing = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for start in range(300, 600, 30):
                first.add_many(texts[start : start + 30])
        except BaseException as exc:
            errors.append(exc)
        finally:
            writing.set()

    def drainer(name: str, mem: Memory) -> None:
        try:
            while True:
                done_writing = writing.is_set()
                n = mem.store.drain_vectors(40)
                counts[name] += n
                if n == 0 and done_writing:
                    return
        except BaseException as exc:
            errors.append(exc)

    threads = [
        threading.Thread(target=write),
        threading.Thread(target=drainer, args=("first", first)),
        threading.Thread(target=drainer, args=("second", second)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors
    assert counts["first"] + counts["second"] == 600  # no row drained twice, none missed
    assert first.store.pending_vectors == 0 and indexed_by_hnsw(first) == 600
    labels = label_of(first)
    for i in range(0, 600, 37):
        assert second.store.vectors.search(vectors[i], 1)[0].tolist() == [labels[texts[i]]]
    first.close()
    second.close()


def test_a_store_from_before_pending_vectors_keeps_its_index_and_adds_inline(
    pg_url, embedder, many
):
    texts, vectors = many
    with open_mem(pg_url, embedder, texts, vectors) as mem:
        mem.add_many(texts[:50])
        db = mem.store.db
        # the schema of before: no column, the HNSW index over every live row
        db.execute(f"DROP INDEX {index_name(DIM)}")
        db.execute("ALTER TABLE memories DROP COLUMN vector_pending")
        db.execute(
            "CREATE INDEX memories_embedding_hnsw_384 ON memories USING hnsw "
            "((embedding::vector(384)) vector_ip_ops) WHERE NOT deleted AND embedding IS NOT NULL"
        )
    given = Given(embedder.name, dict(zip(texts, vectors, strict=True)))
    with Memory.open(pg_url, embedder=given, engine=False, read_only=True) as reader:
        # a reader changes nothing and searches the old index as before
        assert not reader.store.vectors.deferred
        labels = label_of(reader)
        assert reader.store.vectors.search(vectors[3], 1)[0].tolist() == [labels[texts[3]]]
    with open_mem(pg_url, embedder, texts, vectors, pg_pending_max=10_000) as mem:
        db = mem.store.db
        # no rebuild at open (43 minutes at 1M): the old index stays, no second one is made
        assert db.scalar("SELECT to_regclass('memories_embedding_hnsw_384') IS NOT NULL")
        assert db.scalar("SELECT to_regclass(?) IS NULL", [index_name(DIM)])
        assert mem.store.pending_vectors == 0  # the old rows were indexed: they stay so
        mem.add_many(texts[50:60])
        assert mem.store.pending_vectors == 0  # and new ones are indexed inline, as before
        labels = label_of(mem)
        for i in (0, 49, 55):
            assert mem.store.vectors.search(vectors[i], 1)[0].tolist() == [labels[texts[i]]]


@settings(max_examples=30, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=8),
        min_size=1,
        max_size=5,
    )
)
def test_float32_vectors_cross_copy_bit_for_bit(pg_server, rows):
    """The staged COPY writes float32 lists with nine significant digits (arrow.py): every
    float32 comes back exactly, subnormals and signed zeros included."""
    import pyarrow as pa

    from localmem.store.postgres.db import PgDatabase

    db = PgDatabase(pg_server.url(), pool_size=1)
    try:
        data = pa.table({"i": list(range(len(rows))), "v": pa.array(rows, pa.list_(pa.float32()))})
        back = db.with_arrow(data, "SELECT i, v FROM _arg ORDER BY i")
    finally:
        db.close()
    for (_, got), want in zip(back, rows, strict=True):
        assert np.array_equal(
            np.asarray(got, dtype=np.float32).view(np.uint32),
            np.asarray(want, dtype=np.float32).view(np.uint32),
        )


def test_an_export_or_a_copy_carries_no_pending_flag(pg_server, embedder):
    """Whether a row is in one database's HNSW index is that database's business: a copy or
    an import into PostgreSQL is indexed whole. (An export of a PostgreSQL store does not
    import into a folder store: its postings carry dl and impact, which DuckDB's lack.)"""
    from localmem.store.copy import copy_store
    from localmem.store.dump import dump, load

    texts, vectors = texts_and_vectors(40, 9)
    with open_mem(pg_server.new_database(), embedder, texts, vectors) as mem:
        mem.add_many(texts)
        assert mem.store.pending_vectors == 40
        lines = dump(mem.store)
        rows = [x["row"] for x in lines[1:] if x["table"] == "memories"]
        assert len(rows) == 40 and not any("vector_pending" in r for r in rows)
        with open_mem(pg_server.new_database(), embedder, texts, vectors) as imported:
            load(imported.store, lines)
            assert imported.store.pending_vectors == 0 and indexed_by_hnsw(imported) == 40
        with open_mem(pg_server.new_database(), embedder, texts, vectors) as copied:
            copy_store(mem.store, copied.store)
            assert copied.store.pending_vectors == 0 and indexed_by_hnsw(copied) == 40
            labels = label_of(copied)
            assert copied.store.vectors.search(vectors[7], 1)[0].tolist() == [labels[texts[7]]]


def test_a_close_drains_as_many_as_its_process_wrote(pg_url, embedder, many):
    """A one-shot writer pays for its own rows, not for the backlog of a process that died
    with rows pending (they stay found, for the next drainer)."""
    texts, vectors = many
    dead = open_mem(pg_url, embedder, texts, vectors)
    dead.add_many(texts[:100])
    dead.store.close(save=False)  # killed: no drain on the way out
    dead.close()
    with open_mem(pg_url, embedder, texts, vectors) as one_shot:
        one_shot.add_many(texts[100:105])
        assert one_shot.store.pending_vectors == 105
    with open_mem(pg_url, embedder, texts, vectors) as mem:
        assert mem.store.pending_vectors == 100
        labels = label_of(mem)
        assert mem.store.vectors.search(vectors[50], 1)[0].tolist() == [labels[texts[50]]]
