"""Stored vectors read from the saved index file (store/savedvectors.py): always hnswlib's own
values, for every label changed since the save too, and never from a file that is not the one
scanned."""

from __future__ import annotations

import os
import re
import sys
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localmem import Memory
from localmem.store import savedvectors
from localmem.store.savedvectors import MAP_AHEAD_AFTER, scan
from localmem.store.vectors import VectorIndex, file_checksum

DIM = 8


def _unit(n, dim=DIM, seed=0):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _hnswlib(index: VectorIndex, labels) -> np.ndarray:
    """What hnswlib itself holds (the reference)."""
    with index._lock:
        return index._from_index(np.asarray(labels, dtype=np.int64))


def _scan(path, dim=DIM):
    return scan(open(path, "rb"), dim)


def _saved_index(tmp_path, n=300, gaps=(7, 8, 150)):
    labels = np.array([x for x in range(n + len(gaps)) if x not in gaps])
    index = VectorIndex(DIM)
    index.add(labels, _unit(len(labels)))
    path = tmp_path / "v.hnsw"
    index.save(path, {})
    return index, path, labels


def test_a_loaded_index_reads_its_file_and_gives_hnswlibs_values(tmp_path):
    _, path, labels = _saved_index(tmp_path)
    loaded, _ = VectorIndex.load(path, DIM)
    assert loaded._saved is not None and len(loaded._saved) == len(labels)
    wanted = labels[::-1][:120]  # any order, labels with gaps below them
    assert np.array_equal(loaded.get(wanted), _hnswlib(loaded, wanted))
    with pytest.raises(KeyError):
        loaded.get([7])  # never in the index: an error, as before


def test_scan_gives_the_files_checksum_and_leaves_a_foreign_layout_alone(tmp_path):
    _, path, _ = _saved_index(tmp_path)
    crc, saved = _scan(path)
    assert crc == file_checksum(path) and saved is not None
    saved.close()
    crc, saved = _scan(path, DIM * 2)  # not this layout: checksum only
    assert crc == file_checksum(path) and saved is None
    other = tmp_path / "other"
    other.write_bytes(b"\x01" * 500)
    crc, saved = _scan(other)
    assert crc == file_checksum(other) and saved is None


def test_labels_changed_after_the_save_are_read_from_hnswlib(tmp_path):
    index, path, _ = _saved_index(tmp_path)
    fresh = _unit(3, seed=9)
    index.add([10, 11], fresh[:2])  # replaced in place: the file holds the old vectors
    index.add([5000], fresh[2:])  # new
    index.mark_deleted([12])
    got = index.get([9, 10, 11, 5000, 13])
    assert np.array_equal(got[1:4], fresh)
    assert np.array_equal(got, _hnswlib(index, [9, 10, 11, 5000, 13]))
    with pytest.raises(KeyError):
        index.get([12, 9])  # deleted since: an error, though its old vector is in the file
    index.save(path, {})  # the new file holds them: read from it, deleted ones still refused
    assert not index._changed and index._saved is not None
    assert np.array_equal(index.get([10, 11, 5000]), fresh)
    with pytest.raises(KeyError):
        index.get([12])


def test_a_file_removed_or_rewritten_under_the_reader_is_never_read_as_its_own(tmp_path):
    _, path, labels = _saved_index(tmp_path)
    loaded, _ = VectorIndex.load(path, DIM)
    other = tmp_path / "o.hnsw"
    path.rename(other)  # the reader holds the file it scanned, not the path
    assert np.array_equal(loaded.get(labels[:50]), _hnswlib(loaded, labels[:50]))
    # the same file rewritten in place with another index (its elements carry other labels):
    # each vector is read with the label beside it, so hnswlib answers instead
    foreign = VectorIndex(DIM)
    foreign.add(labels[::-1].copy(), _unit(len(labels), seed=4))
    foreign.save(tmp_path / "f.hnsw", {})
    with open(other, "r+b") as fh:
        fh.write((tmp_path / "f.hnsw").read_bytes())
    rows = loaded._saved.rows(labels[:50])
    assert loaded._saved.read(labels[:50], rows) is None
    assert np.array_equal(loaded.get(labels[:50]), _hnswlib(loaded, labels[:50]))
    with open(other, "r+b") as fh:
        fh.truncate(200)  # cut short: a short read, hnswlib answers
    assert np.array_equal(loaded.get(labels[:50]), _hnswlib(loaded, labels[:50]))


def test_a_reader_that_disagrees_with_hnswlib_is_not_used(tmp_path):
    index, _, labels = _saved_index(tmp_path)
    other = VectorIndex(DIM)
    other.add(labels, _unit(len(labels), seed=5))  # same labels, other vectors
    other_path = tmp_path / "o.hnsw"
    other.save(other_path, {})
    _, foreign = _scan(other_path)
    assert index._checked(foreign) is None


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "delete", "save", "reload"]),
            st.lists(st.integers(0, 60), min_size=1, max_size=8),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_any_sequence_of_writes_saves_and_loads_reads_what_hnswlib_holds(tmp_path, ops):
    path = tmp_path / "p.hnsw"
    path.unlink(missing_ok=True)
    index = VectorIndex(DIM)
    truth: dict[int, np.ndarray] = {}
    seed = 0
    for op, labels in ops:
        labels = sorted(set(labels))
        if op == "add":
            seed += 1
            vecs = _unit(len(labels), seed=seed)
            index.add(labels, vecs)
            truth.update(zip(labels, vecs, strict=True))
        elif op == "delete":
            index.mark_deleted(labels)
            for x in labels:
                truth.pop(x, None)
        elif op == "save":
            index.save(path, {})
        elif path.exists():
            index, _ = VectorIndex.load(path, DIM)
            # what a store does on open: the changes made since that save applied again
            index.add(list(truth), np.array(list(truth.values())).reshape(-1, DIM))
            known = set(index.labels().tolist()) - index.deleted_labels
            index.mark_deleted(sorted(known - set(truth)))
        for x in range(61):
            if x in truth:
                assert np.array_equal(index.get([x])[0], truth[x])
            else:
                with pytest.raises(KeyError):
                    index.get([x])
        live = sorted(truth)
        if live:
            assert np.array_equal(index.get(live), np.array([truth[x] for x in live]))


def test_memories_a_concurrent_writer_adds_are_searched_with_their_own_vectors(tmp_path):
    store = tmp_path / "s"
    with Memory.open(store) as mem:
        mem.add_many([f"note {i} about the harbour and its boats" for i in range(40)])
    with Memory.open(store) as mem:
        index = mem.store.vectors
        mem.search("harbour boats", k=5)
        assert index._saved is not None  # the file the store loaded serves the reads

        def writer():
            for i in range(20):
                mem.add(f"a lighthouse keeper counted {i} gulls at dawn")

        thread = threading.Thread(target=writer)
        thread.start()
        while thread.is_alive():  # searches racing the writes
            mem.search("lighthouse keeper gulls harbour", k=5)
        thread.join()
        hits = mem.search("lighthouse keeper counted 19 gulls", k=3).hits
        assert hits and hits[0].memory.content == "a lighthouse keeper counted 19 gulls at dawn"
        rows = mem.store.db.fetchall(
            "SELECT label, embedding FROM memories WHERE NOT deleted ORDER BY label"
        )
        labels = [label for label, _ in rows]
        stored = np.array([e for _, e in rows], dtype=np.float32)
        assert np.array_equal(index.get(labels), stored)
    assert index._saved is None  # the store let the file go when it closed


def test_a_file_that_cannot_be_mapped_leaves_the_reads_to_hnswlib(tmp_path, monkeypatch):
    import mmap

    _, path, labels = _saved_index(tmp_path)

    def refuse(*args, **kwargs):
        raise OSError("no mmap here")

    monkeypatch.setattr(mmap, "mmap", refuse)
    loaded, _ = VectorIndex.load(path, DIM)
    assert loaded._saved is None  # the reader was checked against hnswlib and let go
    assert np.array_equal(loaded.get(labels[:50]), _hnswlib(loaded, labels[:50]))


@settings(max_examples=300, deadline=None)
@given(
    stored=st.lists(st.integers(0, 3000), max_size=60),
    asked=st.lists(st.integers(-5, 6200), max_size=40),
)
def test_the_element_of_a_label_by_table_is_the_binary_searchs(stored, asked):
    """Labels dense enough for a table by label (and sparse ones, which keep the binary search),
    labels held twice (no element), asked labels outside the table or negative: the element
    found is the one a binary search over the sorted labels finds."""
    from localmem.store.savedvectors import SavedVectors, _by_label

    labels = np.array(stored, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    keep = np.ones(len(ordered), dtype=bool)
    twice = np.flatnonzero(ordered[1:] == ordered[:-1])
    keep[twice] = keep[twice + 1] = False
    reader = object.__new__(SavedVectors)
    reader._labels, reader._rows = ordered[keep], order[keep]
    reader._element = None
    wanted = np.array(asked, dtype=np.int64)
    expected = reader.rows(wanted)
    reader._element = _by_label(reader._labels, reader._rows)
    assert reader.rows(wanted).tolist() == expected.tolist()
    for label, row in zip(labels.tolist(), range(len(labels)), strict=True):
        if stored.count(label) == 1:
            assert reader.rows(np.array([label]))[0] == row


def test_the_map_is_faulted_in_whole_once_after_a_few_reads_and_reads_the_same(
    tmp_path, monkeypatch
):
    """The pages mapped ahead once, on the MAP_AHEAD_AFTER-th read (whether a page then
    faults depends on the kernel's page cache, which maps the pages of a file just written
    in large blocks: bench_default_latency's stores show the faults it saves,
    docs/benchmarks.md ``latency15``)."""
    _, path, labels = _saved_index(tmp_path, n=3_000, gaps=(3,))
    loaded, _ = VectorIndex.load(path, DIM)
    saved = loaded._saved
    assert saved is not None
    calls = []
    real = saved.map_ahead
    monkeypatch.setattr(saved, "map_ahead", lambda: calls.append(saved._reads) or real())
    wanted = labels[::97]
    for _ in range(2 * MAP_AHEAD_AFTER):  # the load's own check read the file once already
        assert np.array_equal(loaded.get(wanted), _hnswlib(loaded, wanted))
    assert calls == [MAP_AHEAD_AFTER]
    assert np.array_equal(loaded.get(labels), _hnswlib(loaded, labels))
    release = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
    if sys.platform.startswith("linux") and release >= (5, 14):
        assert real()  # the kernel takes MADV_POPULATE_READ
    monkeypatch.setattr(savedvectors, "_memory_available", lambda: 2 * len(saved._map) - 2)
    assert not saved.map_ahead()  # more than half the memory available: left to fault
    saved.close()
    assert not saved.map_ahead()  # nothing mapped: nothing to do, no error


def test_the_whole_map_is_faulted_in_without_stopping_the_processs_other_threads(tmp_path):
    """``map_ahead`` runs in a search of a long-lived process (``localmem serve``: other
    requests' threads): the kernel's work (~0.2 s at 1M memories, more from the disk) must not
    hold the GIL. A ticker thread keeps ticking while a 1 GB map is faulted in (the call's
    own length is measured, so a fast machine skips rather than passes by luck). The 1 GB file is
    removed after."""
    import time

    release = tuple(int(x) for x in re.findall(r"\d+", os.uname().release)[:2])
    if not sys.platform.startswith("linux") or release < (5, 14):
        pytest.skip("MADV_POPULATE_READ is Linux 5.14+")
    path = tmp_path / "big.bin"
    with open(path, "wb") as fh:
        block = os.urandom(1 << 20)
        for _ in range(1024):
            fh.write(block)
    handle = open(path, "rb")  # noqa: SIM115 (the reader owns it: its close() closes it)
    saved = savedvectors.SavedVectors(handle, DIM, np.array([0]), 0, DIM * 4 + 8)
    gaps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        time.sleep(0.05)
        gaps.clear()
        t0 = time.perf_counter()
        assert saved.map_ahead()
        took = time.perf_counter() - t0
        time.sleep(0.01)
    finally:
        stop.set()
        ticker.join()
        saved.close()
        path.unlink()
    if took < 0.02:
        pytest.skip(f"the map was faulted in in {took * 1e3:.1f} ms: too fast to tell")
    assert max(gaps) < took / 2, (max(gaps), took)
