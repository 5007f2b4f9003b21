"""Stored vectors read back from the index file hnswlib saved, instead of from hnswlib itself.

The reranker reads the stored vectors of ~100-160 memories a search (the cosine of candidates
the dense search did not return, and of the neighbours the context feature mixes in).
hnswlib's ``get_items`` costs ~14 us a vector (it copies each into a ``std::vector`` one float
at a time, under two locks): ~2-3 ms a search, the largest single cost of the default pipeline
over plain hybrid (docs/benchmarks.md, "latency-saved-vectors"). The same float32 values are in
the file hnswlib wrote at its last save, at a fixed place per element: the file is mapped
(``mmap``, read-only) and a search's vectors are numpy gathers from it, ~0.1-0.3 us a vector
once its pages are in memory (a ``pread`` a vector cost ~2 us, docs/benchmarks.md, section
``latency6``). It takes no memory of the process's own beyond a label -> element table (16
bytes a memory, and 8 for the same indexed by label, ``latency13``): the pages are the page
cache's, unlike a second copy of every vector (1.5 GB at 1M).

The file read is the one the index was loaded from or saved to, held open and mapped (its
inode: a later save writes another file and replaces the path, never this file, so the map
never shrinks under a read), and checked as it is read (its checksum is the one the
sidecar records, computed in the same pass). A vector is taken from it only while the index
still holds that same vector: :class:`~localmem.store.vectors.VectorIndex` sends every label
added or deleted since that save to hnswlib, as before. So the values are hnswlib's own, bit for
bit, and every score and ranking is unchanged. Each vector is read with the label stored after
it, and used only when that label is the one asked for.

The layout is hnswlib's ``saveIndex`` (0.7-0.8): a 96-byte header (``offsetLevel0_``,
``max_elements_``, ``cur_element_count``, ``size_data_per_element_``, ``label_offset_``,
``offsetData_``, ``maxlevel_``, ``enterpoint_node_``, ``maxM_``, ``maxM0_``, ``M_``, ``mult_``,
``ef_construction_``), then ``cur_element_count`` elements of ``size_data_per_element_`` bytes
(links, the vector at ``offsetData_``, the label at ``label_offset_``), then the upper layers.
A header that does not fit that layout, a label held twice, or a short read leaves the reads
to hnswlib.

Pages mapped ahead (Linux): the first read of each 64 KB of the map is a page fault (the
kernel maps the file's pages around it), ~6-8 us of kernel time; a search reads ~170 vectors
spread over the file, so a fresh process's searches fault ~5 times a search at 100k memories
and ~28 times at 1M (the 1.7 GB file has ~26,000 such blocks), averaged over their first 300
(docs/benchmarks.md, ``latency15``), and wait for the disk where the page cache has let the
file's pages go. After :data:`MAP_AHEAD_AFTER` reads the whole map is faulted in at once
(``madvise(MADV_POPULATE_READ)``, ~5 us a block: ~13 ms at 100k, ~0.2 s at 1M, more where
pages are read from the disk): a process that searches once or twice (``localmem search``)
never pays it, a long-lived one pays it once instead of over its first searches. Not for a
file larger than half the memory available. The pages are the page cache's (the file was
read whole at open, for its checksum): the process's resident size counts them, no memory of
its own is taken beyond their page tables (~2 bytes a KB).
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import struct
import sys
import zlib
from typing import BinaryIO

import numpy as np

from localmem.store.lookup import find_sorted

_HEADER = struct.Struct("<6QiI3QdQ")  # 96 bytes
_CHUNK_ROWS = 1 << 12
#: reads of a file after which its map is faulted in whole (see the module docstring)
MAP_AHEAD_AFTER = 8
#: Linux's MADV_POPULATE_READ (5.14+; older kernels refuse it: the pages then fault one by
#: one, as before); Python's mmap module names it from 3.13 only
_MADV_POPULATE_READ = 22


class SavedVectors:
    """The vectors of one saved index file, by label (see the module docstring)."""

    def __init__(self, fh: BinaryIO, dim: int, labels: np.ndarray, data_at: int, row_size: int):
        self._fh = fh
        self._fd = fh.fileno()
        self.dim = dim
        self._bytes = dim * 4
        self._data_at = data_at  # file offset of element 0's vector
        self._row_size = row_size
        order = np.argsort(labels, kind="stable")
        ordered = labels[order]
        twice = np.flatnonzero(ordered[1:] == ordered[:-1])
        keep = np.ones(len(ordered), dtype=bool)
        keep[twice] = keep[twice + 1] = False  # never guess which of two copies is current
        self._labels = ordered[keep]
        self._rows = order[keep]
        self._element = _by_label(self._labels, self._rows)
        # the file mapped, each element's vector and label a strided view of it: a read is two
        # numpy gathers straight into float32 and int64 rows, no system call a vector and no
        # copy of the bytes in between (a save replaces the path, never writes this file)
        self._map: mmap.mmap | None = None
        self._reads = 0  # see map_ahead()
        self._vectors, self._stored_labels = _no_elements(dim)
        count = len(labels)
        if count:
            try:
                self._map = mmap.mmap(self._fd, 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # a file system that cannot map: hnswlib reads them
                return
            if data_at + (count - 1) * row_size + self._bytes + 8 <= len(self._map):
                self._vectors = np.ndarray(
                    (count, dim),
                    dtype="<f4",
                    buffer=self._map,
                    offset=data_at,
                    strides=(row_size, 4),
                )
                # labels above int64's range never get here (scan), so int64 reads them exactly
                self._stored_labels = np.ndarray(
                    (count,),
                    dtype="<i8",
                    buffer=self._map,
                    offset=data_at + self._bytes,
                    strides=(row_size,),
                )

    def __len__(self) -> int:
        return len(self._labels)

    def sample(self, n: int) -> np.ndarray:
        """Up to ``n`` of its labels, spread over the file."""
        if not len(self._labels):
            return self._labels
        return np.unique(self._labels[np.linspace(0, len(self._labels) - 1, n).astype(np.int64)])

    def rows(self, labels: np.ndarray) -> np.ndarray:
        """The element of each label in the file (-1: not in it)."""
        by_label = self._element
        if by_label is not None and len(labels):
            inside = (labels >= 0) & (labels < len(by_label))
            return np.where(inside, by_label[np.where(inside, labels, 0)], -1)
        if not len(self._labels):
            return np.full(len(labels), -1, dtype=np.int64)
        at, found = find_sorted(self._labels, labels)
        return np.where(found, self._rows[at], -1)

    def read(self, labels: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
        """The vectors of these labels at these elements (float32, one row each); None when an
        element lies past the file's end or does not carry its label (the file is not the one
        scanned: each vector is read with the label stored right after it, and checked)."""
        if len(rows):
            last = int(rows.max())
            if int(rows.min()) < 0 or last >= len(self._vectors) or not self._whole(last):
                return None
        # gathers: copies, nothing kept of the map
        if not np.array_equal(self._stored_labels[rows], labels):
            return None
        vectors: np.ndarray = self._vectors[rows]
        self._reads += 1
        if self._reads == MAP_AHEAD_AFTER:
            self.map_ahead()
        return vectors

    def map_ahead(self) -> bool:
        """Fault the whole map in at once (Linux): its later reads take no page fault. Whether
        the kernel did (False: not Linux, nothing mapped, a kernel before 5.14, or a file
        larger than half the memory available, which reading whole would push out of the
        page cache what it reads)."""
        if self._map is None or not sys.platform.startswith("linux"):
            return False
        try:
            if len(self._map) > _memory_available() // 2:  # it would push out what it reads
                return False
            _populate(self._map)
        except (OSError, ValueError, AttributeError):
            return False
        return True

    def _whole(self, row: int) -> bool:
        """Whether the file still reaches past element ``row`` (one ``fstat``): nothing in
        localmem writes a saved file in place, but a page of a map cut short by another program
        would end the process (SIGBUS) where a short ``pread`` only returned less."""
        try:
            end = self._data_at + row * self._row_size + self._bytes + 8
            return os.fstat(self._fd).st_size >= end
        except OSError:
            return False

    def close(self) -> None:
        """Let the file go (never raises: a store closing must go on to close DuckDB)."""
        self._vectors, self._stored_labels = _no_elements(self.dim)  # the map's only views
        with contextlib.suppress(OSError, BufferError):
            if self._map is not None:
                self._map.close()
        with contextlib.suppress(OSError):
            self._fh.close()


def _populate(mapped: mmap.mmap) -> None:
    """``madvise(MADV_POPULATE_READ)`` over the whole map by libc through ctypes, which lets
    the GIL go for the call: Python's ``mmap.madvise`` holds it, so the other threads of the
    process (``localmem serve``'s requests) stopped for the whole fault-in (~0.2 s at 1M).

    Raises:
        OSError: the kernel refused (before 5.14, or the file was cut short under the map).
    """
    view = np.frombuffer(mapped, dtype=np.uint8)  # the map's address (held while called)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        libc.madvise.restype = ctypes.c_int
        if libc.madvise(view.ctypes.data, view.size, _MADV_POPULATE_READ) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, os.strerror(errno))
    finally:
        del view  # the map can close again


def _memory_available() -> int:
    """Bytes the kernel could give without swapping (``MemAvailable``: free memory and the page
    cache it may reclaim); 0 where it does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _no_elements(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The views of a reader with nothing mapped: every read finds no element."""
    return np.zeros((0, dim), dtype="<f4"), np.zeros(0, dtype="<i8")


def scan(fh: BinaryIO, dim: int) -> tuple[int, SavedVectors | None]:
    """Read a saved index file once: its CRC-32 (as :func:`~localmem.store.vectors.
    file_checksum`) and, when its header has hnswlib's layout for ``dim``, the reader of its
    vectors (which then owns ``fh``; else None, and ``fh`` is closed)."""
    fh.seek(0)
    head = fh.read(_HEADER.size)
    crc = zlib.crc32(head)
    layout = _layout(head, dim)
    labels: list[np.ndarray] = []
    if layout is not None:
        count, row_size, label_at, _ = layout
        done = 0
        while done < count:
            n = min(_CHUNK_ROWS, count - done)
            block = fh.read(n * row_size)
            crc = zlib.crc32(block, crc)
            if len(block) != n * row_size:  # shorter than its header says
                layout = None
                break
            rows = np.frombuffer(block, dtype=np.uint8).reshape(n, row_size)
            labels.append(rows[:, label_at : label_at + 8].copy().view("<u8").ravel())
            done += n
    while chunk := fh.read(1 << 20):
        crc = zlib.crc32(chunk, crc)
    # Windows cannot replace a mapped file (a save must), so hnswlib reads them there
    if layout is None or os.name == "nt":
        fh.close()
        return crc, None
    count, row_size, _, data_at = layout
    found = np.concatenate(labels) if labels else np.zeros(0, dtype="<u8")
    if found.size and int(found.max()) > np.iinfo(np.int64).max:
        fh.close()
        return crc, None
    reader = SavedVectors(fh, dim, found.astype(np.int64), _HEADER.size + data_at, row_size)
    return crc, reader


def _layout(head: bytes, dim: int) -> tuple[int, int, int, int] | None:
    """(elements, bytes per element, label offset, vector offset) when the header has
    hnswlib's layout for vectors of ``dim`` floats; None otherwise."""
    if len(head) != _HEADER.size:
        return None
    level0, _, count, row_size, label_at, data_at, *_ = _HEADER.unpack(head)
    fits = (
        level0 == 0
        and 0 < row_size < (1 << 24)
        and data_at >= 0
        and data_at + dim * 4 == label_at  # the vector, then the label
        and label_at + 8 <= row_size
        and count < (1 << 40)
    )
    return (int(count), int(row_size), int(label_at), int(data_at)) if fits else None


def _by_label(labels: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """Each label's element as a table indexed by label (-1: none), where the labels are
    dense enough for one (a store's count up from 0; 8 bytes a label up to the largest): a
    search's ~170 lookups are then one gather, not a binary search each over every label
    (~0.1 ms a search at 100k memories, its reads out of cache). None for sparse labels."""
    if not len(labels) or labels[0] < 0 or labels[-1] >= 2 * len(labels) + 4096:
        return None
    out = np.full(int(labels[-1]) + 1, -1, dtype=np.int64)
    out[labels] = rows
    return out
