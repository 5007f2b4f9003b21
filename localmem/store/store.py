"""A store: one folder holding DuckDB (the truth), the hnswlib index and the BM25 postings."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from localmem.config import StoreConfig
from localmem.errors import StoreError
from localmem.store.db import DB_FILE, Database
from localmem.store.jobs import JobQueue
from localmem.store.lexical import LexicalIndex
from localmem.store.lock import LOCK_FILE, StoreLock
from localmem.store.vectors import INDEX_FILE, SIDECAR_FILE, VectorIndex

log = logging.getLogger("localmem.store")

FORMAT_VERSION = "1"
_STORE_FILES = {DB_FILE, DB_FILE + ".wal", INDEX_FILE, SIDECAR_FILE, LOCK_FILE, "config.json"}


def peek_count(folder: str | Path) -> int | None:
    """How many memories a store folder holds, read without opening the store (no lock taken,
    DuckDB read-only): 0 for a folder without a store, None when the file cannot be read now
    (another process has it open for writing, or it is not a store)."""
    import duckdb

    path = Path(folder).expanduser() / DB_FILE
    if not path.exists():
        return 0
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return None
    try:
        return int(con.execute("SELECT count(*) FROM memories").fetchone()[0])
    except duckdb.Error:
        return None
    finally:
        con.close()


class Store:
    """Owns the files of one store folder; every write goes through the lock it holds.

    Use :meth:`open`. ``notices`` lists what opening had to repair (a person should see it).
    """

    def __init__(self, folder: Path, db: Database, lock: StoreLock, config: StoreConfig) -> None:
        self.folder = folder
        self.db = db
        self._lock = lock
        self.config = config
        self.jobs = JobQueue(db)
        self.lexical = LexicalIndex(db)
        self.vectors: VectorIndex | None = None
        self.model: str | None = None
        self.dim: int | None = None
        self.notices: list[str] = []
        self._changes_since_save = 0
        self.write_lock = threading.RLock()  # held by every write (units, index saves)
        self._closed = False

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        folder: str | Path,
        *,
        config: StoreConfig | None = None,
        model: str | None,
        dim: int | None,
        create: bool = True,
        check_model: bool = True,
        migrations: Sequence[str] = (),
    ) -> Store:
        """Open (or create) the store in ``folder`` for an embedding model of ``dim`` dimensions.

        ``model=None`` accepts whatever model the store records (maintenance: reembed, doctor).
        ``migrations`` names the migration packages of the mechanisms in use (their tables).

        Raises:
            StoreError: the folder is not a store, or was built with another embedding model.
            StoreLockedError: another process has it open.
        """
        folder = Path(folder).expanduser()
        config = config or StoreConfig()
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"{folder} is a file, not a store folder")
        is_store = (folder / DB_FILE).exists()
        if not is_store:
            if not create:
                raise StoreError(
                    f"no store at {folder} (create one with `localmem add` or Memory.open)"
                )
            stray = [p.name for p in folder.iterdir()] if folder.exists() else []
            if [name for name in stray if name not in _STORE_FILES]:
                raise StoreError(
                    f"{folder} is not a localmem store (it holds other files: "
                    f"{', '.join(sorted(stray)[:3])})"
                )
            folder.mkdir(parents=True, exist_ok=True)
        lock = StoreLock(folder, timeout_s=config.lock_timeout_s)
        lock.acquire()
        try:
            db = Database(folder / DB_FILE)
        except BaseException:
            lock.release()
            raise
        self = cls(folder, db, lock, config)
        try:
            self._prepare(
                model, dim, new=not is_store, check_model=check_model, migrations=migrations
            )
        except BaseException:
            self.close(save=False)
            raise
        return self

    def _prepare(
        self,
        model: str | None,
        dim: int | None,
        *,
        new: bool,
        check_model: bool = True,
        migrations: Sequence[str] = (),
    ) -> None:
        if not new and not self.db.applied_migrations():
            raise StoreError(f"{self.folder} holds a DuckDB file that is not a localmem store")
        self.db.migrate(migrations)
        recorded_model = self.db.get_meta("embed_model")
        recorded_dim = self.db.get_meta("embed_dim")
        if recorded_model is None:
            if model is None or dim is None:
                raise StoreError(f"{self.folder} records no embedding model; open it with one")
            with self.db.transaction():
                self.db.set_meta("format", FORMAT_VERSION)
                self.db.set_meta("embed_model", model)
                self.db.set_meta("embed_dim", str(dim))
            recorded_model, recorded_dim = model, str(dim)
        self.model, self.dim = recorded_model, int(recorded_dim)
        if model is not None and check_model:
            self.check_model(model, dim)
        self._open_index()
        recovered = self.jobs.recover()
        if recovered:
            self.notice(f"{recovered} background job(s) interrupted by a crash will run again")

    def check_model(self, model: str, dim: int | None) -> None:
        """Raise unless this store was built with embedding model ``model`` of ``dim`` dims.

        Raises:
            StoreError: the store records another model or dimension.
        """
        if (self.model, self.dim) != (model, dim):
            raise StoreError(
                f"store {self.folder} was built with embedding model {self.model} "
                f"({self.dim}-d), not {model} ({dim}-d); open it with its model or run "
                "`localmem reembed` to migrate it"
            )

    def notice(self, message: str) -> None:
        """Record (and log) something a person should know about this store."""
        self.notices.append(message)
        log.warning("%s", message)

    # -- the vector index ---------------------------------------------------------------------
    def _new_index(self) -> VectorIndex:
        c = self.config
        return VectorIndex(
            self.dim, m=c.hnsw_m, ef_construction=c.hnsw_ef_construction, ef_search=c.hnsw_ef_search
        )

    def _open_index(self) -> None:
        path = self.folder / INDEX_FILE
        c = self.config
        live = self.live_count()
        if not path.exists():
            if live:
                self.notice(f"vector index missing; rebuilding it from {live} embeddings in DuckDB")
            self.vectors = self._rebuild_index()
            return
        try:
            self.vectors, sidecar = VectorIndex.load(
                path,
                self.dim,
                m=c.hnsw_m,
                ef_construction=c.hnsw_ef_construction,
                ef_search=c.hnsw_ef_search,
            )
        except ValueError as exc:
            self.notice(f"vector index unusable ({exc}); rebuilding it from {live} embeddings")
            self.vectors = self._rebuild_index()
            return
        caught_up = self._catch_up(int(sidecar.get("vec_seq", 0)))
        if self.vectors.live_count != live:
            fixed = self._reconcile()
            self.notice(f"vector index was out of step with DuckDB; repaired {fixed} entries")
        elif caught_up:
            self.notice(
                f"vector index caught up with {caught_up} change(s) made after its last save"
            )

    def _rebuild_index(self) -> VectorIndex:
        index = self._new_index()
        self._add_embeddings(index, "NOT deleted AND embedding IS NOT NULL")
        self.vectors = index
        self.save_index()
        return index

    def _add_embeddings(self, index: VectorIndex, where: str, params: list | None = None) -> int:
        added = 0
        for batch in self.db.arrow_batches(
            f"SELECT label, embedding FROM memories WHERE {where} ORDER BY label", params or None
        ):
            if batch.num_rows == 0:
                continue
            labels = batch.column(0).to_numpy()
            flat = batch.column(1).flatten().to_numpy(zero_copy_only=False)
            index.add(labels, flat.reshape(len(labels), self.dim))
            added += len(labels)
        return added

    def _catch_up(self, saved_seq: int) -> int:
        """Apply vector changes committed after the index was last saved."""
        rows = self.db.fetchall(
            "SELECT label, deleted OR embedding IS NULL FROM memories WHERE vec_seq > ?",
            [saved_seq],
        )
        if not rows:
            return 0
        gone = [int(label) for label, dead in rows if dead]
        self.vectors.mark_deleted(gone)
        self._add_embeddings(
            self.vectors, "vec_seq > ? AND NOT deleted AND embedding IS NOT NULL", [saved_seq]
        )
        self._changes_since_save += len(rows)
        return len(rows)

    def _reconcile(self) -> int:
        """Make the index hold exactly the live labels of DuckDB."""
        live = self.live_labels()
        in_index = self.vectors.labels()
        deleted = np.fromiter(self.vectors.deleted_labels, np.int64)
        present = np.setdiff1d(in_index, deleted)
        missing = np.setdiff1d(live, present)
        extra = np.setdiff1d(present, live)
        self.vectors.mark_deleted(extra.tolist())
        if len(missing):
            self._add_embeddings(
                self.vectors,
                "label IN (SELECT unnest(?::BIGINT[])) AND embedding IS NOT NULL",
                [missing.tolist()],
            )
        self._changes_since_save += len(missing) + len(extra)
        return int(len(missing) + len(extra))

    def save_index(self) -> None:
        """Write the vector index to disk (atomically) with the change sequence it has seen."""
        if self.vectors is None:
            return
        with self.write_lock:
            seq = self.db.scalar("SELECT coalesce(max(vec_seq), 0) FROM memories")
            self.vectors.save(self.folder / INDEX_FILE, {"vec_seq": int(seq), "model": self.model})
            self._changes_since_save = 0

    def index_changed(self, n: int) -> None:
        """Count vector changes; save the index every ``save_every`` of them, or every
        ``save_every_fraction`` of the index when that is more (a save writes the whole file:
        at a fixed interval, growing a store to 1M memories would rewrite 1.7 GB 200 times)."""
        self._changes_since_save += n
        size = self.vectors.live_count if self.vectors is not None else 0
        every = max(self.config.save_every, int(size * self.config.save_every_fraction))
        if self._changes_since_save >= every:
            self.save_index()

    # -- facts about the store ------------------------------------------------------------------
    def live_count(self) -> int:
        """Memories that are not deleted and have a vector."""
        return int(
            self.db.scalar(
                "SELECT count(*) FROM memories WHERE NOT deleted AND embedding IS NOT NULL"
            )
        )

    def live_labels(self) -> np.ndarray:
        """Labels of the live memories, sorted."""
        tbl = self.db.arrow(
            "SELECT label FROM memories WHERE NOT deleted AND embedding IS NOT NULL ORDER BY label"
        )
        return tbl.column(0).to_numpy().astype(np.int64)

    def check(self) -> dict:
        """Integrity facts for `localmem doctor`: counts and whether the indexes agree."""
        live = self.live_count()
        lex_docs = int(self.db.scalar("SELECT count(*) FROM lex_docs"))
        return {
            "memories": int(self.db.scalar("SELECT count(*) FROM memories")),
            "live": live,
            "vectors_live": self.vectors.live_count if self.vectors else 0,
            "lexical_docs": lex_docs,
            "vectors_in_step": bool(self.vectors and self.vectors.live_count == live),
            "lexical_in_step": lex_docs == live,
            "jobs": self.jobs.counts(),
            "embed_model": self.model,
            "embed_dim": self.dim,
            "migrations": self.db.applied_migrations(),
        }

    def stats(self) -> dict:
        """Counts and sizes: memories (live, deleted, by kind), links, waiting jobs, bytes."""
        db = self.db
        by_kind = dict(
            db.fetchall(
                "SELECT kind, count(*) FROM memories WHERE NOT deleted GROUP BY 1 ORDER BY 1"
            )
        )
        return {
            "memories": sum(by_kind.values()),
            "deleted": int(db.scalar("SELECT count(*) FROM memories WHERE deleted")),
            "by_kind": by_kind,
            "links": int(db.scalar("SELECT count(*) FROM links")),
            "jobs_pending": self.jobs.pending(),
            "bytes_on_disk": sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file()),
        }

    # -- closing -------------------------------------------------------------------------------
    def close(self, *, save: bool = True) -> None:
        """Save the index, close DuckDB, release the lock. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            if save and self.vectors is not None and self._changes_since_save:
                self.save_index()
        finally:
            try:
                self.db.close()
            finally:
                self._lock.release()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed
