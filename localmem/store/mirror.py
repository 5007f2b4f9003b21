"""The memory rows held in memory, for the searches of a store only this process writes.

A default search reads about a hundred memory rows for its reranker (the pool, the memories
stored around it, the times of a question's window) and the best ``k`` for its answer. Asked of
DuckDB, each read is a query that scans the label column: 3-9 ms at 100k memories, more at 1M,
most of what the default pipeline costs over plain hybrid search (docs/benchmarks.md, issue
34). :class:`RowMirror` keeps the same rows as Arrow columns indexed by label and answers those
reads from memory (the reranker's pool as columns, :meth:`RowMirror.columns`, without making
its ~110 items: :mod:`localmem.store.columns`); it is derived data, never written to, and
follows the table:

- it is read whole once (``SELECT`` of every row: ~0.15 s and ~25 MB at 100k memories);
- after a unit of writing commits (the kernel's ``generation`` moved on), the rows changed
  since are read again: every statement that changes a memory row sets its ``updated_at``
  (inserts, updates, deletes, restores, purges, supersessions) and a new memory takes a label
  above every label before it, so ``label > last label OR updated_at >= last change`` finds
  them (one scan of two columns). Changed rows wait in an overlay until there are enough of
  them to read the table whole again;
- it is used only where this process is the only writer (``db.one_writer``: DuckDB) and never
  inside the calling thread's own unit of writing (it would see rows that may roll back). On
  PostgreSQL another process's commit carries no order this process could follow, so searches
  there ask the database, as before.

The answers are those of the queries in :mod:`localmem.store.records` and
:mod:`localmem.store.timeline` (tests/test_mirror.py holds them side by side under random
writes).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pyarrow as pa

from localmem.dates import Span
from localmem.dates.stored import decode_spans
from localmem.store import stated as stated_rows
from localmem.store import timeline as timeline_rows
from localmem.store.backend import StoreDatabase
from localmem.store.columns import (
    WRITTEN_ASCII_RE2,
    WRITTEN_LOOSE_RE2,
    MemoryColumns,
    Placements,
    RowTexts,
    in_order,
    speaker_of_json,
    written_speaker,
)
from localmem.store.lookup import members
from localmem.store.records import MEMORY_COLUMNS, Placement, aware, placement_of, row_to_item
from localmem.store.timeline import Window
from localmem.types import MemoryItem

_COLUMNS = MEMORY_COLUMNS.split(", ")
_SELECT = f"SELECT {MEMORY_COLUMNS}, embedding IS NOT NULL AS embedded FROM memories"
#: changed rows kept aside before the table is read whole again (and at least this many)
OVERLAY_SHARE = 0.05
OVERLAY_MIN = 5_000
#: items kept made (about 1 KB each) before they are made anew
BUILT_MAX = 50_000
#: searches a process runs reading DuckDB before the table is read whole (a one-off search
#: would pay a read of every row, 1-2 s at 100k memories, for one pool)
WARM_AFTER = 2


class RowMirror:
    """The rows of ``memories`` as of the last :meth:`follow` (see the module docstring)."""

    def __init__(self, db: StoreDatabase) -> None:
        self._db = db
        self._lock = threading.RLock()
        self.generation: int | None = None  # the kernel generation last followed
        self._base: pa.Table | None = None
        self._pos = np.zeros(0, dtype=np.int64)  # label -> row of the base (-1: none)
        self._live = np.zeros(0, dtype=bool)  # by base row: not deleted, embedded
        self._when = np.zeros(0, dtype=np.int64)  # by base row: its time (naive UTC us)
        self._over: dict[int, tuple[MemoryItem, bool]] = {}  # label -> (item, embedded)
        self._last_label = -1
        self._last_change: datetime | None = None
        self._sessions: dict[str, np.ndarray] | None = None  # base labels by session, in order
        self._timeline: tuple[np.ndarray, np.ndarray] | None = None  # of the base
        self._deleted = np.zeros(0, dtype=bool)  # by base row
        #: session, user and agent of the base rows as (codes by row, values by code)
        self._places: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._text_columns: tuple[_Texts, _Texts, _Texts] | None = None  # see _texts()
        self._written: tuple[np.ndarray, np.ndarray] | None = None  # see _written_speakers()
        self._built: dict[int, MemoryItem] = {}  # items made from base rows (see items())
        #: by label: the dates its text states, encoded, where kept and current (else None)
        self._stated = np.full(0, None, dtype=object)
        self.reads = 0  # whole reads of the table (tests and benchmarks look)

    # -- following the table --------------------------------------------------------------
    def follow(self, generation: int) -> RowMirror:
        """Bring the mirror up to the table as committed at ``generation`` (or later)."""
        with self._lock:
            # the rows and their kept dates read under one hold of the connection: no unit of
            # writing commits between the two reads
            with self._connection():
                if self._base is None:
                    self._read_whole()
                elif generation != self.generation:
                    self._catch_up()
            self.generation = generation
            return self

    def _connection(self) -> AbstractContextManager[object]:
        lock = getattr(self._db, "lock", None)  # DuckDB's connection lock (reentrant)
        return lock if lock is not None else nullcontext()

    def _read_whole(self) -> None:
        tbl = self._db.arrow(f"{_SELECT} ORDER BY label").combine_chunks()
        labels = tbl.column("label").to_numpy().astype(np.int64)
        self._pos = np.full(int(labels.max()) + 1 if len(labels) else 0, -1, dtype=np.int64)
        self._pos[labels] = np.arange(len(labels))
        deleted = tbl.column("deleted").to_numpy(zero_copy_only=False).astype(bool)
        embedded = tbl.column("embedded").to_numpy(zero_copy_only=False).astype(bool)
        self._live = ~deleted & embedded
        self._deleted = deleted
        self._when = _times(tbl)
        self._base = tbl
        self._over = {}
        self._built = {}
        self._sessions = self._timeline = None
        self._places = None
        self._text_columns = None
        self._written = None
        self._last_label = int(labels.max()) if len(labels) else -1
        changed = tbl.column("updated_at")
        self._last_change = _compute().max(changed).as_py() if len(labels) else None
        self._stated = np.full(len(self._pos), None, dtype=object)
        self._hold_stated(stated_rows.current(self._db))
        self.reads += 1

    def _catch_up(self) -> None:
        where = "label > ?" if self._last_change is None else "label > ? OR updated_at >= ?"
        params: list[Any] = [self._last_label]
        if self._last_change is not None:
            params.append(self._last_change)
        rows = self._db.fetchall(f"{_SELECT} WHERE {where}", params)
        if rows:  # a changed row's dates are read again with it (they may no longer match)
            changed = [int(row[_COLUMNS.index("label")]) for row in rows]
            top = max(changed) + 1
            if top > len(self._stated):
                self._stated = np.concatenate(
                    [self._stated, np.full(top - len(self._stated), None, dtype=object)]
                )
            self._stated[changed] = None
            self._hold_stated(stated_rows.current(self._db, changed))
        for row in rows:
            item = row_to_item(row[:-1])
            self._over[item.label] = (item, bool(row[-1]))
            self._built.pop(item.label, None)
            self._last_label = max(self._last_label, item.label)
            changed = row[_COLUMNS.index("updated_at")]
            if changed is not None and (self._last_change is None or changed > self._last_change):
                self._last_change = changed
        size = len(self._base) if self._base is not None else 0
        if len(self._over) > max(OVERLAY_MIN, OVERLAY_SHARE * size):
            self._read_whole()

    def _hold_stated(self, rows: list[tuple[int, str]]) -> None:
        for label, spans in rows:
            if label < len(self._stated):
                self._stated[label] = spans

    @property
    def nbytes(self) -> int:
        """What the columns read whole take in memory (the overlay and made items aside)."""
        return self._base.nbytes if self._base is not None else 0

    def forget_items(self) -> None:
        """Drop the items made from rows so far (they are made again when read)."""
        with self._lock:
            self._built = {}

    # -- reads ----------------------------------------------------------------------------
    def items(self, labels: Iterable[int]) -> dict[int, MemoryItem]:
        """Memories by label, live or deleted (unknown labels left out): as
        :func:`localmem.store.records.fetch_by_labels`. An item made from a row is kept until
        the row changes (a memory is read again by every search whose pool it enters); items
        are frozen, and their metadata is the caller's to read, not to change."""
        with self._lock:
            out: dict[int, MemoryItem] = {}
            missing = []
            for label in labels:
                label = int(label)
                held = self._over.get(label)
                if held is not None:
                    out[label] = held[0]
                elif label in self._built:
                    out[label] = self._built[label]
                elif 0 <= label < len(self._pos) and self._pos[label] >= 0:
                    missing.append(label)
            if missing:
                assert self._base is not None
                if len(self._built) > BUILT_MAX:
                    self._built.clear()
                rows = self._base.take(pa.array(self._pos[missing]))
                values = [_values(rows.column(c)) for c in _COLUMNS]
                for row in zip(*values, strict=True):
                    item = row_to_item(row, times_aware=True)
                    out[item.label] = self._built[item.label] = item
            return out

    def columns(self, labels: Iterable[int]) -> MemoryColumns:
        """What the reranker reads of these memories (live or deleted; unknown labels left
        out), in their order, without making their items: as
        ``MemoryColumns.of_items(items(labels).values())``, from the columns (a changed row
        from its item in the overlay)."""
        with self._lock:
            wanted = [int(x) for x in labels]
            changed, at, rows = self._located(wanted)
            found = self._base_columns(at.tolist(), rows)
            if not changed:
                return found
            return in_order(wanted, [found, MemoryColumns.of_items(list(changed.values()))])

    def _base_columns(self, labels: list[int], rows: np.ndarray) -> MemoryColumns:
        """:meth:`columns` of base rows (``rows``: their places in the base)."""
        codes, values = self._placing()[0]  # the session's
        content, context, metadata = self._texts()
        codes_written, written = self._written_speakers()
        return MemoryColumns(
            labels,
            values[codes[rows]].tolist(),
            RowTexts(content, rows),  # decoded where read (most never are)
            context.filled(rows).tolist(),
            [speaker_of_json(x) for x in metadata.at(rows)]
            if metadata.held(rows)
            else [None] * len(rows),  # no metadata in these rows (a store without any: most)
            written[codes_written[rows]].tolist(),
        )

    def read(
        self, labels: Sequence[int], placed: Sequence[int], *, dated: bool
    ) -> tuple[dict[int, MemoryItem], dict[int, Placement], dict[int, tuple[Span, ...]]]:
        """:meth:`items` of ``labels``, :meth:`placement` of ``placed`` and, when ``dated``,
        :meth:`stated` of ``labels``, as of one state of the mirror (under one hold of its
        lock: an item and its dates are of the same row)."""
        with self._lock:
            dates = self.stated(labels) if dated else {}
            return self.items(labels), self.placement(placed), dates

    def dated(
        self, labels: Sequence[int]
    ) -> tuple[dict[int, datetime], dict[int, tuple[Span, ...]]]:
        """:meth:`moments` and :meth:`stated` of ``labels`` as of one state of the mirror
        (what the temporal stage weighs a memory by, without making its item)."""
        with self._lock:
            return self.moments(labels), self.stated(labels)

    def stated(self, labels: Iterable[int]) -> dict[int, tuple[Span, ...]]:
        """The dates the texts of these memories state, where the store keeps current ones
        (:mod:`localmem.store.stated`; labels without are left out: their texts are parsed)."""
        with self._lock:
            out: dict[int, tuple[Span, ...]] = {}
            size = len(self._stated)
            for label in labels:
                label = int(label)
                line = self._stated[label] if 0 <= label < size else None
                if line is not None:
                    out[label] = decode_spans(line)
            return out

    def placement(self, labels: Iterable[int]) -> dict[int, Placement]:
        """Where memories sit, as :func:`localmem.store.records.placement_by_labels`: the
        :meth:`placements` of these labels, a tuple each."""
        wanted = np.array([int(x) for x in labels], dtype=np.int64)
        if not len(wanted):  # read() asks for none with every batch of items
            return {}
        found = self.placements(wanted)
        at = np.flatnonzero(found.found)
        places = zip(
            found.session_id[at].tolist(),
            found.user_id[at].tolist(),
            found.agent_id[at].tolist(),
            _moments(found.when[at].tolist()),
            found.deleted[at].tolist(),
            strict=True,
        )
        return dict(zip(wanted[at].tolist(), places, strict=True))

    def placements(self, labels: np.ndarray) -> Placements:
        """Where these memories sit (live or deleted), a column each in the order asked, from
        the columns it needs without making whole items (a changed row from its item in the
        overlay: an item made from a base row holds the base row's values)."""
        with self._lock:
            labels = np.asarray(labels, dtype=np.int64)
            if not len(self._when):  # nothing read whole
                out = Placements.unknown(len(labels))
            else:
                inside = (labels >= 0) & (labels < len(self._pos))
                rows = self._pos[np.where(inside, labels, 0)]
                found = inside & (rows >= 0)
                rows = np.where(found, rows, 0)  # any row: not found, read nowhere
                session, user, agent = (values[codes[rows]] for codes, values in self._placing())
                out = Placements(found, session, user, agent, self._when[rows], self._deleted[rows])
            if self._over:
                for i, label in enumerate(labels.tolist()):
                    held = self._over.get(label)
                    if held is not None:
                        out.put(i, placement_of(held[0]))
            return out

    def moments(self, labels: Iterable[int]) -> dict[int, datetime]:
        """When memories happened: the ``when`` of their :meth:`placement`, without the rest."""
        with self._lock:
            changed, at, rows = self._located(labels)
            out = {label: item.when for label, item in changed.items()}
            if len(rows):
                out.update(zip(at.tolist(), _moments(self._when[rows].tolist()), strict=True))
            return out

    def _located(
        self, labels: Iterable[int]
    ) -> tuple[dict[int, MemoryItem], np.ndarray, np.ndarray]:
        """Of these labels: the items of those the overlay holds, then the others' labels and
        rows in the base (labels it does not hold left out)."""
        over = self._over
        changed: dict[int, MemoryItem] = {}
        if not over:
            base = labels if isinstance(labels, list | np.ndarray) else list(labels)
        else:
            base = []
            for label in labels:
                label = int(label)
                held = over.get(label)
                if held is not None:
                    changed[label] = held[0]
                else:
                    base.append(label)
        at = np.asarray(base, dtype=np.int64)
        at = at[(at >= 0) & (at < len(self._pos))]
        rows = self._pos[at]
        return changed, at[rows >= 0], rows[rows >= 0]

    def session_order(self, sessions: Sequence[str]) -> list[tuple[int, str]]:
        """(label, session) of the live memories of these sessions in each session's order, as
        :func:`localmem.store.records.session_order`."""
        with self._lock:
            index = self._session_index()
            out: list[tuple[int, str]] = []
            for session in sorted(set(sessions)):
                labels = index.get(session, _NONE)
                if self._over:
                    labels = self._with_overlay(labels, session)
                out += [(label, session) for label in labels.tolist()]
            return out

    def near_time(self, window: Window, limit: int, allowed: np.ndarray | None = None) -> list[int]:
        """As :func:`localmem.store.timeline.labels_near_time` (``allowed``: sorted labels)."""
        with self._lock:
            times, labels = self._base_timeline()
            if not self._over:
                return timeline_rows.nearest(times, labels, window, limit, allowed)
            # the base's answer without the changed rows, then the changed rows that qualify
            changed = np.sort(np.fromiter(self._over, dtype=np.int64, count=len(self._over)))
            found = timeline_rows.nearest(times, labels, window, limit, allowed, changed)
            mid = timeline_rows.micros(window.centre())
            start, end = timeline_rows.micros(window.start), timeline_rows.micros(window.end)
            distance = {x: abs(int(self._when[self._pos[x]]) - mid) for x in found}
            for label, (item, embedded) in self._over.items():
                at = timeline_rows.micros(item.when)
                if embedded and not item.deleted and start <= at <= end:
                    distance[label] = abs(at - mid)
            chosen = np.array(sorted(distance), dtype=np.int64)
            if allowed is not None:
                chosen = chosen[members(allowed, chosen)]
            return sorted(chosen.tolist(), key=lambda x: (distance[x], x))[:limit]

    # -- derived indexes of the base (made on first use) ---------------------------------
    def _session_index(self) -> dict[str, np.ndarray]:
        """The live base labels of each session, in the session's order (event time, then
        label)."""
        if self._sessions is None:
            assert self._base is not None
            sessions = self._base.column("session_id").to_numpy(zero_copy_only=False)
            has = np.flatnonzero(self._live & (sessions != None))  # noqa: E711 (elementwise)
            labels = self._base.column("label").to_numpy()[has].astype(np.int64)
            names = sessions[has].astype(str)
            order = np.lexsort((labels, self._when[has], names))
            names, labels = names[order], labels[order]
            cuts = np.flatnonzero(names[1:] != names[:-1]) + 1
            self._sessions = {
                str(part[0]): lab
                for part, lab in zip(np.split(names, cuts), np.split(labels, cuts), strict=True)
                if len(lab)
            }
        return self._sessions

    def _placing(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Session, user and agent of every base row as codes into their distinct values
        (:meth:`placement` reads ~200 rows a search: numpy indexing instead of an Arrow take;
        4 bytes a row and column, the values held once each)."""
        if self._places is None:
            assert self._base is not None
            self._places = []
            for name in ("session_id", "user_id", "agent_id"):
                coded = self._base.column(name).combine_chunks().dictionary_encode()
                values = np.array([*coded.dictionary.to_pylist(), None], dtype=object)
                codes = _compute().fill_null(coded.indices, len(values) - 1)
                self._places.append((codes.to_numpy().astype(np.int32), values))
        return self._places

    def _texts(self) -> tuple[_Texts, _Texts, _Texts]:
        """The base's content, context and metadata, read by row (see :class:`_Texts`)."""
        if self._text_columns is None:
            assert self._base is not None
            content, context, metadata = (
                _Texts(self._base.column(name)) for name in ("content", "context", "metadata")
            )
            self._text_columns = (content, context, metadata)
        return self._text_columns

    def _written_speakers(self) -> tuple[np.ndarray, np.ndarray]:
        """The "Name: " each base row's content begins with, as codes into its distinct
        values (see :func:`written_speakers`)."""
        if self._written is None:
            assert self._base is not None
            self._written = written_speakers(self._base.column("content"))
        return self._written

    def _base_timeline(self) -> tuple[np.ndarray, np.ndarray]:
        if self._timeline is None:
            assert self._base is not None
            live = np.flatnonzero(self._live)
            labels = self._base.column("label").to_numpy()[live].astype(np.int64)
            times = _times(self._base)[live]
            order = np.lexsort((labels, times))
            self._timeline = (times[order], labels[order])
        return self._timeline

    def _with_overlay(self, labels: np.ndarray, session: str) -> np.ndarray:
        """A session's base labels with the changed rows taken out and the changed live rows
        of the session put in their place, in the session's order."""
        over = self._over
        kept = [x for x in labels.tolist() if x not in over]
        when = {x: int(self._when[self._pos[x]]) for x in kept}
        for label, (item, embedded) in over.items():
            if embedded and not item.deleted and item.session_id == session:
                kept.append(label)
                when[label] = timeline_rows.micros(item.when)
        return np.array(sorted(kept, key=lambda x: (when[x], x)), dtype=np.int64)


_NONE = np.zeros(0, dtype=np.int64)


def written_speakers(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """The "Name: " each text of ``column`` begins with (:func:`columns.written_speaker`,
    None where null or none) as ``(codes by row, values by code)``.

    The reranker asks it of its ~130 rows a search: decoding their texts to read it cost ~0.1
    ms a search (``latency12``); here it is read for the whole column at once by RE2 (~25 ms
    at 100k memories, once per whole read of the table): :data:`columns.WRITTEN_ASCII_RE2`
    gives the name where what the rule reads is ASCII, and only the texts
    :data:`columns.WRITTEN_LOOSE_RE2` matches but it does not (a name or a space beyond
    ASCII) are decoded and read by the rule itself."""
    pc = _compute()
    whole = column.combine_chunks()
    if not (pa.types.is_string(whole.type) or pa.types.is_large_string(whole.type)):
        whole = whole.cast(pa.large_string())  # RE2's kernels read these two (as _Texts does)
    names = pc.struct_field(pc.extract_regex(whole, WRITTEN_ASCII_RE2), [0])
    maybe = pc.and_(
        pc.fill_null(pc.match_substring_regex(whole, WRITTEN_LOOSE_RE2), False), names.is_null()
    )
    coded = names.dictionary_encode()
    values: list[str | None] = [*coded.dictionary.to_pylist(), None]
    codes = pc.fill_null(coded.indices, len(values) - 1).to_numpy().astype(np.int32)
    code = {value: i for i, value in enumerate(values)}
    for row in np.flatnonzero(maybe.to_numpy(zero_copy_only=False)).tolist():
        name = written_speaker(whole[row].as_py())
        if name not in code:
            code[name] = len(values)
            values.append(name)
        codes[row] = code[name]
    return codes, np.array(values, dtype=object)


class _Texts:
    """A text column of the base, read by row from its Arrow buffers: an Arrow ``take`` and
    ``to_pylist`` cost ~0.3 ms a call for three columns of a reranker's ~100 rows, mostly
    fixed costs; slicing the column's bytes costs ~0.3 us a row. No copy of the column (its
    buffers are read where they are; one byte a row says which rows hold a value)."""

    def __init__(self, column: pa.ChunkedArray) -> None:
        # the base's columns are one chunk each: read in place (combining copies even one)
        whole = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
        if pa.types.is_string(whole.type):
            width: type[np.signedinteger[Any]] = np.int32
        else:
            if not pa.types.is_large_string(whole.type):  # another layout: copied to one
                whole = whole.cast(pa.large_string())
            width = np.int64
        self._array = whole  # holds the buffers below
        _, offsets, data = whole.buffers()
        self._offsets = (
            np.frombuffer(offsets, dtype=width)[whole.offset : whole.offset + len(whole) + 1]
            if offsets is not None
            else np.zeros(len(whole) + 1, dtype=width)
        )
        self._data = memoryview(data) if data is not None else memoryview(b"")
        self._valid = whole.is_valid().to_numpy(zero_copy_only=False).astype(bool)

    def at(self, rows: np.ndarray) -> list[str | None]:
        """The values of these rows (None where null), in their order."""
        data = self._data
        starts, ends = self._offsets[rows].tolist(), self._offsets[rows + 1].tolist()
        return [
            str(data[a:b], "utf-8") if valid else None
            for a, b, valid in zip(starts, ends, self._valid[rows].tolist(), strict=True)
        ]

    def held(self, rows: np.ndarray) -> bool:
        """Whether any of these rows holds a value (not null)."""
        return bool(self._valid[rows].any())

    def filled(self, rows: np.ndarray) -> np.ndarray:
        """Whether these rows hold a value that is not empty (``bool`` of each value)."""
        filled: np.ndarray = self._valid[rows] & (self._offsets[rows + 1] > self._offsets[rows])
        return filled


def _compute() -> Any:
    """``pyarrow.compute``, imported when the rows are first held: importing it builds its
    functions' wrappers (~50 ms), which a one-shot search, reading DuckDB, never needs."""
    import pyarrow.compute as pc

    return pc


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


#: aware datetimes by their microseconds: the rows of one ``add_many`` share their times (stored,
#: updated, valid from), so most of a pool's times were made before (datetimes are immutable)
_MOMENTS: dict[int, datetime] = {}
MOMENTS_MAX = 200_000


def _moments(micros: list[int | None]) -> list[Any]:
    """Aware UTC datetimes of naive UTC microseconds (None stays None)."""
    if len(_MOMENTS) > MOMENTS_MAX:
        _MOMENTS.clear()
    out: list[Any] = []
    for x in micros:
        if x is None:
            out.append(None)
            continue
        moment = _MOMENTS.get(x)
        if moment is None:
            moment = _MOMENTS[x] = _EPOCH + timedelta(microseconds=x)
        out.append(moment)
    return out


def _values(column: pa.ChunkedArray) -> list[Any]:
    """A column's values as Python objects; times as aware UTC datetimes, made from their
    microseconds (pyarrow makes naive ones at twice the cost, then each is made aware: the
    memories of a reranker's pool are ~100 items a search)."""
    kind = column.type
    if not pa.types.is_timestamp(kind):
        values: list[Any] = column.to_pylist()
        return values
    if kind.unit != "us" or kind.tz is not None:  # not DuckDB's TIMESTAMP: the slow way
        return [aware(x) for x in column.to_pylist()]
    micros = column.cast(pa.int64()).to_pylist()
    return _moments(micros)


def _times(tbl: pa.Table) -> np.ndarray:
    """``coalesce(event_time, created_at)`` of every row, as naive UTC microseconds."""
    event = tbl.column("event_time").cast(pa.timestamp("us"))
    created = tbl.column("created_at").cast(pa.timestamp("us"))
    times: np.ndarray = (
        _compute().coalesce(event, created).to_numpy().astype("datetime64[us]").astype(np.int64)
    )
    return times
