"""A term's postings packed in one value (``lex_packed``): its layout. The tables are made,
and packs made and refreshed, by :mod:`~localmem.store.postgres.packing`; packs are read by
:mod:`~localmem.store.postgres.postings`.

Reading every posting of a common word row by row cost ~0.36 us a posting at a million
memories, the executor's work per posting (docs/benchmarks.md, "pg3"); a term's postings in one
``bytea`` are read and parsed by numpy with no work per posting. Packs are derived data: the
truth stays in ``lex_postings``, a search reads each packed term's pack, minus the labels
deleted since (``lex_packed_gone``, written by a trigger in the deleting transaction), plus
its postings written since (``posting_seq > upto``), in one statement.

The layout (little-endian): a header (magic ``LMP1``, the byte width of the labels, of tf and of
the lengths, one unused byte, the number of postings as 8 bytes), then the labels in
ascending order, then the lengths, then the tf, each column at its width (labels 4 or 8 bytes:
past 32 bits they take 8; tf and lengths 1, 2 or 4).
"""

from __future__ import annotations

import struct

import numpy as np

from localmem.errors import StoreError

_MAGIC = b"LMP1"
_HEADER = struct.Struct("<4sBBBBQ")
_WIDTHS = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<i8"}


def _width(values: np.ndarray, smallest: int) -> int:
    """The fewest bytes (from ``smallest``) that hold every value of ``values``."""
    top = int(values.max()) if len(values) else 0
    if int(values.min() if len(values) else 0) < 0:
        raise StoreError("a posting with a negative label, tf or length cannot be packed")
    for width in (1, 2, 4):
        if width >= smallest and top < 2 ** (8 * width):
            return width
    return 8


def pack(labels: np.ndarray, tf: np.ndarray, dl: np.ndarray) -> bytes:
    """One term's postings as one value (sorted by label; labels must be distinct)."""
    labels = np.asarray(labels, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    labels = labels[order]
    tf, dl = np.asarray(tf, dtype=np.int64)[order], np.asarray(dl, dtype=np.int64)[order]
    if len(labels) > 1 and not (np.diff(labels) > 0).all():
        raise StoreError("a term's postings name one memory twice: not packed")
    _width(labels, 4)  # no negative label
    lw = 4 if not len(labels) or int(labels.max()) < 2**31 else 8
    tw, dw = _width(tf, 1), _width(dl, 1)
    if tw == 8 or dw == 8:
        raise StoreError("a posting's tf or length does not fit in 32 bits: not packed")
    head = _HEADER.pack(_MAGIC, lw, tw, dw, 0, len(labels))
    label_type = "<i4" if lw == 4 else "<i8"
    return b"".join(
        (
            head,
            labels.astype(label_type).tobytes(),
            dl.astype(_WIDTHS[dw]).tobytes(),
            tf.astype(_WIDTHS[tw]).tobytes(),
        )
    )


def unpack(data: bytes | memoryview) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels as int64, tf, lengths) of a packed value, without copying the columns (views
    of ``data``: numpy's ``frombuffer``)."""
    if len(data) < _HEADER.size:
        raise StoreError("a packed postings value is cut short")
    magic, lw, tw, dw, _, n = _HEADER.unpack_from(data, 0)
    if magic != _MAGIC or lw not in (4, 8) or tw not in (1, 2, 4) or dw not in (1, 2, 4):
        raise StoreError("a packed postings value has an unknown layout")
    if len(data) != _HEADER.size + n * (lw + tw + dw):
        raise StoreError("a packed postings value is not as long as its header says")
    at = _HEADER.size
    labels = np.frombuffer(data, dtype="<i4" if lw == 4 else "<i8", count=n, offset=at)
    at += n * lw
    dl = np.frombuffer(data, dtype=_WIDTHS[dw], count=n, offset=at)
    at += n * dw
    tf = np.frombuffer(data, dtype=_WIDTHS[tw], count=n, offset=at)
    return labels, tf, dl
