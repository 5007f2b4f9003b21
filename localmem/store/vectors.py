"""The vector index: hnswlib over normalised vectors (inner product), integer labels only.

The index is derived data. DuckDB holds every embedding; this file can always be rebuilt from it,
and a sidecar JSON records how far the index had caught up when it was saved.
"""

from __future__ import annotations

import json
import os
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np

from localmem.atomic import write_private
from localmem.store.savedvectors import SavedVectors, scan

INDEX_FILE = "vectors.hnsw"
SIDECAR_FILE = "vectors.json"
_MIN_CAPACITY = 1024
_CHUNK = 1 << 20


class VectorIndex:
    """hnswlib index that grows without a rebuild and deletes with ``mark_deleted``."""

    def __init__(
        self, dim: int, *, m: int = 16, ef_construction: int = 100, ef_search: int = 96
    ) -> None:
        self.dim = dim
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self._index = hnswlib.Index(space="ip", dim=dim)
        self._index.init_index(
            max_elements=_MIN_CAPACITY,
            ef_construction=ef_construction,
            M=m,
            allow_replace_deleted=False,
        )
        self._index.set_ef(ef_search)
        self._deleted: set[int] = set()
        # hnswlib is not safe when a resize races a query (TUI workers, job threads)
        self._lock = threading.Lock()
        self._saved: SavedVectors | None = None  # see get()
        self._changed: set[int] = set()  # labels added or deleted since that file was saved

    # -- persistence -------------------------------------------------------------------------
    @classmethod
    def load(
        cls, path: Path, dim: int, *, m: int = 16, ef_construction: int = 100, ef_search: int = 96
    ) -> tuple[VectorIndex, dict[str, Any]]:
        """Load an index and its sidecar; raises ``ValueError`` when either is unusable.

        The file's checksum is compared with the one its sidecar recorded at save *before*
        hnswlib reads it: hnswlib trusts the offsets inside the file, so a damaged one of the
        right size could crash the process instead of raising.
        """
        sidecar = read_sidecar(path.parent / SIDECAR_FILE)
        if sidecar["dim"] != dim:
            raise ValueError(f"index has dimension {sidecar['dim']}, store has {dim}")
        if sidecar["bytes"] != _size(path):
            raise ValueError("index file size differs from the one recorded at save (truncated?)")
        try:
            crc, saved = scan(open(path, "rb"), dim)  # noqa: SIM115 (the reader keeps it open)
        except OSError as exc:
            raise ValueError(f"index file unreadable: {exc}") from None
        if crc != sidecar["crc32"]:
            if saved is not None:
                saved.close()
            raise ValueError("index file checksum differs from the one recorded at save (damaged)")
        self = cls.__new__(cls)
        self.dim, self.m, self.ef_construction, self.ef_search = dim, m, ef_construction, ef_search
        self._index = hnswlib.Index(space="ip", dim=dim)
        try:
            self._index.load_index(str(path), max_elements=0)
        except (RuntimeError, MemoryError, ValueError) as exc:
            if saved is not None:
                saved.close()
            raise ValueError(f"index file unreadable: {exc}") from None
        self._index.set_ef(ef_search)
        self._deleted = set(sidecar["deleted"])
        self._lock = threading.Lock()
        self._changed = set()
        self._saved = self._checked(saved)
        return self, sidecar

    def save(self, path: Path, sidecar: dict[str, Any]) -> None:
        """Write the index then its sidecar (with the index's checksum), each through a private
        temporary file and a rename."""
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)  # never write through a link someone left in its place
        with self._lock:
            self._index.save_index(str(tmp))
            deleted = sorted(self._deleted)
            # this file holds every vector as of now: changes from here on are read from hnswlib
            fh = open(tmp, "rb")  # noqa: SIM115 (the reader keeps it open)
            self._changed = set()
            self._drop_saved()
        os.chmod(tmp, 0o600)
        os.fsync(fh.fileno())
        crc, saved = scan(fh, self.dim)
        with self._lock:
            self._saved = self._checked(saved)
        meta = dict(sidecar, dim=self.dim, deleted=deleted, bytes=_size(tmp), crc32=crc)
        meta["check"] = _sidecar_check(meta)
        os.replace(tmp, path)
        write_private(path.parent / SIDECAR_FILE, json.dumps(meta), fsync=True)

    # -- writes ------------------------------------------------------------------------------
    def add(self, labels: Sequence[int] | np.ndarray, vectors: np.ndarray) -> None:
        """Add (or replace) vectors under their labels, growing the index as needed."""
        labels = np.asarray(labels, dtype=np.int64)
        if len(labels) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(labels), self.dim)
        with self._lock:
            self._changed.update(labels.tolist())
            # hnswlib un-marks a deleted label when its vector is added again
            if self._deleted:
                self._deleted.difference_update(int(x) for x in labels)
            needed = self._index.element_count + len(labels)
            if needed > self._index.max_elements:
                self._index.resize_index(max(needed, int(self._index.max_elements * 1.5)))
            self._index.add_items(vectors, labels)

    def mark_deleted(self, labels: Sequence[int]) -> int:
        """Hide labels from search; returns how many were live. Unknown labels are ignored."""
        hidden = 0
        with self._lock:
            for label in labels:
                try:
                    self._index.mark_deleted(int(label))
                except RuntimeError:  # not in the index, or already deleted
                    continue
                self._deleted.add(int(label))
                self._changed.add(int(label))
                hidden += 1
        return hidden

    # -- reads -------------------------------------------------------------------------------
    @property
    def live_count(self) -> int:
        """Vectors a search can return."""
        return int(self._index.element_count) - len(self._deleted)

    @property
    def deleted_labels(self) -> set[int]:
        """Labels marked deleted."""
        return set(self._deleted)

    def labels(self) -> np.ndarray:
        """Every label in the index, deleted ones included."""
        return np.asarray(self._index.get_ids_list(), dtype=np.int64)

    def get(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored vectors of live labels (raises ``KeyError`` for a missing one).

        Read from the file of the last save or load (:mod:`localmem.store.savedvectors`: the
        same values, several times cheaper than hnswlib's ``get_items``) for every label
        unchanged since; from hnswlib for the others."""
        wanted = np.asarray(labels, dtype=np.int64).reshape(-1)
        with self._lock:  # held while reading: a save closes the file it replaces
            if self._saved is None or not len(wanted):
                return self._from_index(wanted)
            rows = self._saved.rows(wanted)
            changed, deleted = self._changed, self._deleted
            if changed or deleted:  # hnswlib has their vector (or raises for a deleted one)
                stale = (x in changed or x in deleted for x in wanted.tolist())
                rows[np.fromiter(stale, bool, len(wanted))] = -1
            here = np.flatnonzero(rows >= 0)
            found = self._saved.read(wanted[here], rows[here]) if len(here) else None
            if found is None:
                return self._from_index(wanted)
            if len(here) == len(wanted):
                return found
            out = np.empty((len(wanted), self.dim), dtype=np.float32)
            out[here] = found
            rest = np.flatnonzero(rows < 0)
            out[rest] = self._from_index(wanted[rest])
            return out

    def _from_index(self, labels: np.ndarray) -> np.ndarray:
        """From hnswlib (the caller holds the lock)."""
        try:
            # numpy straight from hnswlib: the default list of lists costs ~2x more
            items = self._index.get_items(labels.tolist(), return_type="numpy")
        except RuntimeError as exc:
            raise KeyError(str(exc)) from None
        return np.asarray(items, dtype=np.float32).reshape(-1, self.dim)

    def _checked(self, saved: SavedVectors | None) -> SavedVectors | None:
        """``saved`` when it holds what hnswlib holds (as many elements, and a few vectors read
        both ways equal), else None: a file replaced between its read and hnswlib's, or a
        layout this hnswlib writes differently. The caller holds the lock, or is ``load``."""
        if saved is None:
            return None
        if len(saved) == int(self._index.element_count):
            probe = [x for x in saved.sample(5).tolist() if x not in self._deleted]
            at = np.asarray(probe, dtype=np.int64)
            mine = saved.read(at, saved.rows(at))
            try:
                theirs = self._index.get_items(probe, return_type="numpy") if probe else None
            except RuntimeError:  # a label hnswlib does not hold
                theirs = None
            if not probe or (
                mine is not None
                and theirs is not None
                and np.array_equal(mine, np.asarray(theirs, dtype=np.float32))
            ):
                return saved
        saved.close()
        return None

    def release(self) -> None:
        """Let the saved file go (when the store closes); reads go to hnswlib from here on."""
        with self._lock:
            self._drop_saved()

    def _drop_saved(self) -> None:
        if self._saved is not None:
            self._saved.close()
            self._saved = None

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k labels by inner product, best first, with their similarity."""
        n = min(k, self.live_count)
        if n <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        with self._lock:
            self._index.set_ef(max(self.ef_search, 2 * n))
            try:
                labels, dist = self._index.knn_query(query.reshape(1, -1), k=n)
            except RuntimeError:  # fewer reachable live items than n (many deletions)
                labels, dist = self._index.knn_query(query.reshape(1, -1), k=max(1, n // 2))
        return labels[0].astype(np.int64), (1.0 - dist[0]).astype(np.float32)


def exact_search(
    query: np.ndarray, vectors: np.ndarray, labels: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force top-k over a small set (used when filters leave few memories)."""
    if len(labels) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    sims = vectors @ query.astype(np.float32)
    n = min(k, len(labels))
    top = np.argpartition(-sims, n - 1)[:n]
    top = top[np.argsort(-sims[top], kind="stable")]
    return labels[top].astype(np.int64), sims[top].astype(np.float32)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def file_checksum(path: Path) -> int:
    """CRC-32 of a file, read in chunks. CRC-32 rather than a cryptographic hash: it is there to
    catch damage (bit rot, a torn write), not an attacker who can rewrite the sidecar too, and
    zlib computes it several times faster than blake2b (docs/benchmarks.md `index checksum`)."""
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def read_sidecar(path: Path) -> dict[str, Any]:
    """The sidecar of a saved index, checked field by field; ``ValueError`` when it is missing,
    not a JSON object, holds a field of the wrong type, or fails its own checksum."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON or UTF-8
        raise ValueError(f"index sidecar unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"index sidecar damaged (a JSON {type(data).__name__}, not an object)")
    if "crc32" not in data:
        raise ValueError("index sidecar has no checksum (saved by an older localmem)")
    if data.get("check") != _sidecar_check(data):
        raise ValueError("index sidecar damaged (its own checksum differs)")
    data.setdefault("vec_seq", 0)  # the store's field; an index saved on its own has none
    for name in ("dim", "bytes", "crc32", "vec_seq"):
        if not _is_int(data.get(name)) or data[name] < 0:
            raise ValueError(f"index sidecar damaged ({name} is not a count)")
    deleted = data.get("deleted")
    if not isinstance(deleted, list) or not all(_is_int(x) for x in deleted):
        raise ValueError("index sidecar damaged (deleted is not a list of labels)")
    return data


def _sidecar_check(meta: dict[str, Any]) -> int:
    """A checksum of the sidecar's other fields, so a damaged number inside it is seen too."""
    body = {k: v for k, v in meta.items() if k != "check"}
    return zlib.crc32(json.dumps(body, sort_keys=True).encode("utf-8"))


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
