"""Finding and mending what is out of step with the table: the BM25 postings and vectors of
memories that are not live (or missing for ones that are), supersessions that lost their
successor and metadata that lost its last update.

Two ways a store can get here, both seen:

- **Index drift.** Writers that decided from a read made before their unit put a deleted
  memory's postings and vector back; the units now decide from the row they read inside
  (:meth:`localmem.store.unit.Write.current`), but a store written before keeps the leftovers.
  Opening the store compares counts (cheap) and rebuilds what disagrees; ``localmem doctor``
  compares the label sets and ``doctor --repair`` mends them; a search that meets a label the
  vector index lacks skips it (a zero vector) and notes it, and the next unit of writing
  repairs that label (:meth:`localmem.store.unit.Write.mend`).
- **A successor lost in DuckDB's WAL replay.** DuckDB 2.0.1 drops an UPDATE that sets a
  VARCHAR from NULL to a value, in a row group a checkpoint wrote, when an earlier transaction
  of the same WAL rewrote a row (a list column or an indexed column) of that table and the
  table has an index: after a crash, ``valid_to`` (a TIMESTAMP) came back but
  ``superseded_by`` was NULL (``scripts/duckdb_wal_update.py`` reproduces it without localmem).
  The same went for a metadata-only update (``metadata`` is JSON text). The unit of writing
  now rewrites the row instead (``records.REWRITE_ROW``); the history rows of the same unit
  name the successor and the new metadata, so a store damaged before is mended from them: a
  lost successor on open and by ``doctor``, lost metadata by ``doctor --repair``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from localmem.errors import StoreError
from localmem.store import stated
from localmem.store.records import REWRITE_ROW
from localmem.text import TERMS_VERSION
from localmem.types import embedding_text

if TYPE_CHECKING:
    from localmem.store.backend import StoreDatabase, StoreVectors
    from localmem.store.jobs import JobQueue
    from localmem.store.lexical import LexicalIndex


class StoreParts(Protocol):
    """What the repairs use of a :class:`localmem.store.store.Store` (a protocol, so that the
    store can use this module without an import cycle)."""

    db: StoreDatabase
    lexical: LexicalIndex
    vectors: StoreVectors | None
    jobs: JobQueue
    write_lock: threading.RLock
    model: str | None
    dim: int | None

    @property
    def read_only(self) -> bool: ...
    def live_count(self) -> int: ...
    def live_labels(self) -> np.ndarray: ...
    def notice(self, message: str) -> None: ...
    def reconcile_vectors(self) -> int: ...
    def pack_postings(self, budget: int | None = None) -> int: ...


#: superseded memories whose successor link is gone
_LOST = "SELECT id FROM memories WHERE valid_to IS NOT NULL AND superseded_by IS NULL"


@dataclass(frozen=True)
class Drift:
    """Index entries that disagree with the table (labels)."""

    lexical_stale: int = 0  # documents or postings of memories that are not live
    lexical_missing: int = 0  # live memories without a document
    vectors_stale: int = 0  # vectors of memories that are not live
    vectors_missing: int = 0  # live memories without a vector

    @property
    def lexical(self) -> int:
        """Lexical entries out of step."""
        return self.lexical_stale + self.lexical_missing

    @property
    def vectors(self) -> int:
        """Vector entries out of step."""
        return self.vectors_stale + self.vectors_missing

    def as_dict(self) -> dict[str, int]:
        """The counts by name."""
        return asdict(self)


def _lexical_labels(db: StoreDatabase) -> tuple[set[int], set[int]]:
    """Labels with a BM25 document, and labels with a document or a posting."""
    docs = {int(r[0]) for r in db.fetchall("SELECT label FROM lex_docs")}
    posted = {int(r[0]) for r in db.fetchall("SELECT DISTINCT label FROM lex_postings")}
    return docs, docs | posted


def vector_labels(store: StoreParts) -> set[int]:
    """Labels the vector index can return."""
    vectors = store.vectors
    if vectors is None:
        return set()
    labels: set[int] = set(vectors.labels().tolist())
    deleted: set[int] = vectors.deleted_labels
    return labels - deleted


def drift(store: StoreParts) -> Drift:
    """Compare the label sets of both indexes with the live memories (reads every posting's
    label: a check for ``doctor``, not for every open)."""
    live = set(store.live_labels().tolist())
    docs, indexed = _lexical_labels(store.db)
    in_index = vector_labels(store)
    return Drift(len(indexed - live), len(live - docs), len(in_index - live), len(live - in_index))


def texts(db: StoreDatabase, labels: list[int]) -> list[tuple[int, str]]:
    """``(label, text to index)`` of these memories, by label."""
    rows = db.fetchall(
        "SELECT label, content, context FROM memories WHERE label IN (SELECT unnest(?::BIGINT[])) "
        "ORDER BY label",
        [labels],
    )
    return [(int(label), embedding_text(content, context)) for label, content, context in rows]


def repair_lexical(store: StoreParts) -> int:
    """Make the BM25 tables hold exactly the live memories (one transaction); returns how many
    labels changed. For a store just opened: a failure leaves its in-memory postings unloaded."""
    with store.write_lock, store.db.transaction():
        live = set(store.live_labels().tolist())
        docs, indexed = _lexical_labels(store.db)
        stale, missing = sorted(indexed - live), sorted(live - docs)
        # a live label without a document may still have postings: they go before it is indexed
        store.lexical.remove(stale + missing)
        found = texts(store.db, missing)
        store.lexical.add([label for label, _ in found], [text for _, text in found])
        store.lexical.refresh_stats()  # the collection's counts, from the tables as they are
    return len(stale) + len(missing)


def rebuild_lexical(store: StoreParts) -> int:
    """Make the BM25 postings again from every live memory with this code's tokeniser and
    record its version (one transaction), so that the reranker reads a memory's terms from
    them; returns how many memories were indexed. On DuckDB only: a PostgreSQL store
    records no version (:meth:`localmem.store.postgres.lexical.PgLexicalIndex.record_terms`)."""
    if not store.db.one_writer:
        raise StoreError("the postings of a PostgreSQL store are not rebuilt (none is needed)")
    with store.write_lock, store.db.transaction():
        found = texts(store.db, sorted(store.live_labels().tolist()))
        store.lexical.rebuild([label for label, _ in found], [text for _, text in found])
    return len(found)


def lost_successors(db: StoreDatabase) -> int:
    """Superseded memories whose ``superseded_by`` is missing."""
    return int(db.scalar(f"SELECT count(*) FROM ({_LOST}) lost"))


def repair_successors(db: StoreDatabase) -> tuple[int, int]:
    """Give each superseded memory that lost its successor link the successor its own
    INVALIDATE history row names (the newest one, when the successor exists);
    returns ``(mended, left)``: left have no such row (nothing to mend them from)."""
    mended = 0
    with db.transaction():
        lost = [r[0] for r in db.fetchall(_LOST)]
        for memory_id in lost:
            row = db.fetchone(
                "SELECT info FROM history WHERE memory_id = ? AND event = 'INVALIDATE' "
                "AND info IS NOT NULL ORDER BY id DESC LIMIT 1",
                [memory_id],
            )
            successor = json.loads(row[0]).get("superseded_by") if row else None
            if not successor or not db.scalar(
                "SELECT count(*) FROM memories WHERE id = ?", [successor]
            ):
                continue
            db.execute(
                f"UPDATE memories SET superseded_by = ?, {REWRITE_ROW} WHERE id = ?",
                [successor, memory_id],
            )
            mended += 1
    return mended, len(lost) - mended


#: each memory's metadata as the newest UPDATE of it in the history left it
_METADATA = (
    "SELECT m.id, m.metadata, h.v FROM memories m JOIN (SELECT memory_id, "
    "arg_max(new_value, id) AS v FROM history WHERE field = 'metadata' GROUP BY memory_id) h "
    "ON h.memory_id = m.id WHERE h.v IS NOT NULL"
)


def metadata_lost(db: StoreDatabase) -> list[tuple[str, str]]:
    """Memories whose metadata differs from what their newest metadata UPDATE in the history
    set (the same DuckDB defect: a metadata-only update went from NULL to a value in place):
    ``(id, the metadata the history gives)``. Reads the history: for doctor, not every open."""
    rows = db.fetchall(_METADATA)
    return [(i, want) for i, have, want in rows if _json(have) != _json(want)]


def _json(text: str | None) -> object:
    return json.loads(text) if text else None


def repair_metadata(db: StoreDatabase) -> int:
    """Put back the metadata the history gives (:func:`metadata_lost`); how many."""
    with db.transaction():
        lost = metadata_lost(db)
        for memory_id, wanted in lost:
            db.execute(
                f"UPDATE memories SET metadata = ?::JSON, {REWRITE_ROW} WHERE id = ?",
                [wanted, memory_id],
            )
    return len(lost)


def facts(store: StoreParts, *, deep: bool = False) -> dict[str, Any]:
    """Integrity facts: counts, whether each index holds the live memories, supersessions
    without their successor. ``deep`` (`localmem doctor`) also compares the label sets of the
    indexes (every posting's label) and each memory's metadata with its history; without it
    (the TUI's status) the indexes are compared by count and ``drift`` is None."""
    live = store.live_count()
    lex_docs = int(store.db.scalar("SELECT count(*) FROM lex_docs"))
    vectors_live = store.vectors.live_count if store.vectors else 0  # a query on PostgreSQL
    found, lost, metadata, dates = Drift(), 0, None, None
    try:
        lost = lost_successors(store.db)
        if deep:
            found, metadata = drift(store), len(metadata_lost(store.db))
            if store.db.one_writer:  # (memories with current kept dates, memories): every row
                dates = stated.counts(store.db)[::-1]
    except StoreError:  # a damaged block: doctor's read of every table says which
        pass
    return {
        "memories": int(store.db.scalar("SELECT count(*) FROM memories")),
        "live": live,
        "vectors_live": vectors_live,
        "lexical_docs": lex_docs,
        "vectors_in_step": vectors_live == live and not found.vectors,
        "lexical_in_step": lex_docs == live and not found.lexical,
        # the tokeniser version that made the postings (None: not recorded or mixed);
        # "current": the reranker reads terms from them (DuckDB only)
        "lexical_terms": store.lexical.recorded_terms(),
        "lexical_terms_current": store.db.one_writer and store.lexical.terms_current(),
        "lexical_terms_wanted": str(TERMS_VERSION) if store.db.one_writer else None,
        "stated_dates": dates,
        "drift": found.as_dict() if deep else None,
        "successors_lost": lost,
        "metadata_lost": metadata,
        "jobs": store.jobs.counts(),
        "embed_model": store.model,
        "embed_dim": store.dim,
        "migrations": store.db.applied_migrations(),
    }


def mend_on_open(store: StoreParts) -> None:
    """What opening a writable store repairs besides the vector index, by cheap checks: a BM25
    document count other than the live memories', a supersession without its successor.
    Only where this process is the one writer: on PostgreSQL others may be writing now, so
    there ``localmem doctor --repair`` does it."""
    if not store.db.one_writer:
        return
    try:
        _mend(store)
    except StoreError as exc:  # a damaged block: what reads it says so, and doctor
        store.notice(f"could not check the indexes against the table: {exc}")


def _mend(store: StoreParts) -> None:
    docs = int(store.db.scalar("SELECT count(*) FROM lex_docs"))
    live = store.live_count()
    if docs != live:
        fixed = repair_lexical(store)
        store.notice(
            f"lexical index was out of step with DuckDB ({docs} documents for {live} "
            f"memories); repaired {fixed} entries"
        )
    if lost_successors(store.db):
        mended, left = repair_successors(store.db)
        store.notice(
            f"{mended} superseded memories had lost the link to their successor (a crash); "
            "put back from their history"
            + (f"; {left} have no history row to mend them from" if left else "")
        )


def repair(store: StoreParts) -> list[str]:
    """Everything ``doctor --repair`` mends: both indexes to the live memories' label sets, lost
    successors; what it did, for a person."""
    done = []
    if store.vectors is not None and not store.read_only:
        found = drift(store)
        if found.vectors:
            done.append(f"vector index: repaired {store.reconcile_vectors()} entries")
        if store.db.one_writer and not store.lexical.terms_current():
            recorded = store.lexical.recorded_terms() or "not recorded"
            done.append(
                f"lexical index: rebuilt from {rebuild_lexical(store)} memories with the "
                f"tokeniser of version {TERMS_VERSION} (was {recorded})"
            )
        elif found.lexical:
            done.append(f"lexical index: repaired {repair_lexical(store)} entries")
    if store.db.one_writer and not store.read_only:
        total, held = stated.counts(store.db)
        if held < total:
            done.append(f"stated dates: kept for {stated.restate(store.db)} more memories")
    if not store.read_only and (packed := store.pack_postings()):
        done.append(f"lexical index: packed the postings of {packed} common terms")
    if lost_successors(store.db):
        mended, left = repair_successors(store.db)
        done.append(
            f"successors: {mended} put back from the history" + (f", {left} left" if left else "")
        )
    if metadata_lost(store.db):
        done.append(f"metadata: {repair_metadata(store.db)} put back from the history")
    return done
