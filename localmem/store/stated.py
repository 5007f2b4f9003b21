"""The dates each memory states, kept with the rows as derived data (table ``memory_dates``).

A search that names a time weighs ~150 memories by the dates their texts state
(:func:`localmem.dates.find_spans`, resolved against each memory's own event day); parsing the
texts it has not seen before was ~1.9 ms of such a search at 100k memories (docs/benchmarks.md,
"the stated dates kept with the rows"). The unit of writing parses a memory's text once, when
it writes the memory (:meth:`localmem.store.unit.Write.insert`, and
:meth:`~localmem.store.unit.Write.update_fields` when the content or the event time changes), in
the same transaction: a crash leaves both or neither. The row mirror
(:mod:`localmem.store.mirror`) holds them with the rows and a search reads them there.

A row counts only while it matches its memory: the parser's version
(:data:`localmem.dates.stored.DATES_VERSION`), the memory's ``content_hash`` and its event day,
checked by the read itself (:data:`CURRENT`). A memory written by code that keeps no dates (an
older version), changed by a path that does not restate them, or stated by another parser
version has no current row and is parsed at search time, as before; ``localmem doctor --repair``
states them again (:func:`restate`). Rows are only appended (a changed memory gets a new one; the
old one no longer matches), so there is no key to keep unique under racing writers.

Written only where this process is the one writer (DuckDB): that is where the mirror is used.
A PostgreSQL store keeps the table empty and parses, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pyarrow as pa

from localmem.dates import find_spans
from localmem.dates.stored import DATES_VERSION, encode_spans
from localmem.store.backend import StoreDatabase
from localmem.store.records import to_db_time

#: a kept row ``d`` that matches its memory ``m`` (the parser's version, the memory's hash and
#: day; never a purged memory's, whose row code that keeps none may have left)
MATCHES = (
    f"d.label = m.label AND d.version = {DATES_VERSION} AND m.content <> '' "
    "AND d.content_hash = m.content_hash "
    "AND d.event_day IS NOT DISTINCT FROM CAST(m.event_time AS DATE)"
)
#: the labels whose kept dates are current, and the dates
CURRENT = f"SELECT m.label, d.spans FROM memories m JOIN memory_dates d ON {MATCHES}"


def state(
    db: StoreDatabase,
    labels: Sequence[int],
    contents: Sequence[str],
    hashes: Sequence[str],
    event_times: Sequence[datetime | None],
) -> None:
    """Parse these memories' texts and keep their dates (in the caller's transaction; nothing
    where another process may write)."""
    if not db.one_writer or not labels:
        return
    # the day the reader anchors on: the event time as kept (naive UTC), as a date
    days = [
        None if t is None else (t if t.tzinfo is None else to_db_time(t)).date()
        for t in event_times
    ]
    spans = [encode_spans(find_spans(c, d)) for c, d in zip(contents, days, strict=True)]
    data = pa.table(
        {
            "label": pa.array([int(x) for x in labels], pa.int64()),
            "version": pa.array([DATES_VERSION] * len(labels), pa.int32()),
            "content_hash": pa.array(list(hashes), pa.string()),
            "event_day": pa.array(days, pa.date32()),
            "spans": pa.array(spans, pa.string()),
        }
    )
    db.insert_arrow("memory_dates", data, "label, version, content_hash, event_day, spans")


def current(db: StoreDatabase, labels: Sequence[int] | None = None) -> list[tuple[int, str]]:
    """``(label, encoded spans)`` of the memories whose kept dates are current (of ``labels``,
    or of every memory)."""
    if labels is None:
        return [(int(a), b) for a, b in db.fetchall(CURRENT)]
    rows = db.fetchall(f"{CURRENT} WHERE m.label IN (SELECT unnest(?::BIGINT[]))", [list(labels)])
    return [(int(a), b) for a, b in rows]


def counts(db: StoreDatabase) -> tuple[int, int]:
    """``(memories not purged, of which with current dates)``: for ``doctor``."""
    total = int(db.scalar("SELECT count(*) FROM memories WHERE content <> ''"))
    held = int(db.scalar(f"SELECT count(DISTINCT label) FROM ({CURRENT}) c"))
    return total, held


def restate(db: StoreDatabase) -> int:
    """Drop the kept dates that no longer match their memory (or whose memory was purged by
    code that keeps none: they hold words of the erased text) and keep those of every memory
    without current ones (one transaction; DuckDB only); returns how many memories were
    parsed."""
    with db.transaction():
        db.execute(
            "DELETE FROM memory_dates d WHERE NOT EXISTS "
            f"(SELECT 1 FROM memories m WHERE {MATCHES})"
        )
        rows = db.fetchall(
            "SELECT label, content, content_hash, event_time FROM memories "
            "WHERE content <> '' AND label NOT IN (SELECT label FROM memory_dates) ORDER BY label"
        )
        state(
            db,
            [r[0] for r in rows],
            [r[1] for r in rows],
            [r[2] for r in rows],
            [r[3] for r in rows],
        )
    return len(rows)


def forget(db: StoreDatabase, labels: Sequence[int]) -> None:
    """Drop the kept dates of purged memories: a span holds the words it was read from, and a
    purge erases the text (any backend: a copy may have brought rows to PostgreSQL)."""
    if labels:
        db.execute(
            "DELETE FROM memory_dates WHERE label IN (SELECT unnest(?::BIGINT[]))",
            [[int(x) for x in labels]],
        )
