"""A store: one folder holding DuckDB (the truth), the hnswlib index and the BM25 postings."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from localmem.config import StoreConfig
from localmem.errors import StoreError, StoreReadOnlyError
from localmem.store import files, repair
from localmem.store.backend import StoreDatabase, StoreVectors
from localmem.store.db import DB_FILE, Database, list_migrations
from localmem.store.jobs import JobQueue
from localmem.store.lexical import LexicalIndex
from localmem.store.lock import StoreLock
from localmem.store.vectors import INDEX_FILE, VectorIndex

log = logging.getLogger("localmem.store")

FORMAT_VERSION = "1"
LIVE = "NOT deleted AND embedding IS NOT NULL"  # the memories a search can return


class Store:
    """Owns the files of one store folder; every write goes through the lock it holds.

    Use :meth:`open`. ``notices`` lists what opening had to repair (a person should see it).
    """

    def __init__(
        self, folder: Path, db: StoreDatabase, lock: StoreLock | None, config: StoreConfig
    ) -> None:
        self.folder = folder
        # where the store lives as a person may see it (a PostgreSQL address: no password)
        self.location = str(folder)
        self.db = db
        self._lock = lock
        self.config = config
        self.jobs = JobQueue(db)
        self.lexical = LexicalIndex(db)
        #: None until the store records its embedding model (:attr:`vector_index` raises then)
        self.vectors: StoreVectors | None = None
        self.model: str | None = None
        self.dim: int | None = None
        self.notices: list[str] = []
        self._changes_since_save = 0
        self.write_lock = threading.RLock()  # held by every write (units, index saves)
        #: labels a search found out of step with the table; the next unit repairs them
        self.suspects: set[int] = set()
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
        read_only: bool | None = None,
    ) -> Store:
        """Open (or create) the store in ``folder`` for an embedding model of ``dim`` dimensions.

        ``model=None`` accepts whatever model the store records (maintenance: reembed, doctor).
        ``migrations`` names the migration packages of the mechanisms in use (their tables).
        ``read_only``: True opens without writing anything (no lock file, DuckDB read-only, a
        damaged index rebuilt in memory only); None (the default) does so when the folder is
        not writable (a read-only mount), so reading an archive just works.

        Raises:
            StoreError: the folder is not a store, is damaged, or was built with another
                embedding model.
            StoreReadOnlyError: a new store was asked for where nothing can be written.
            StoreLockedError: another process has it open.
        """
        folder = Path(folder).expanduser()
        config = config or StoreConfig()
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"{folder} is a file, not a store folder")
        if read_only is None:
            read_only = folder.is_dir() and not files.writable(folder)
        if read_only:
            return cls._open_read_only(folder, config, model, dim, check_model, migrations)
        torn = files.discard_torn_database(folder)
        is_store = (folder / DB_FILE).exists()
        if not is_store:
            if not create:
                raise StoreError(
                    f"no store at {folder} (create one with `localmem add` or Memory.open)"
                )
            files.check_new_folder(folder)
        files.make_folder(folder)
        lock = StoreLock(folder, timeout_s=config.lock_timeout_s)
        lock.acquire()
        try:
            db = Database(folder / DB_FILE)
        except BaseException:
            lock.release()
            raise
        self = cls(folder, db, lock, config)
        if torn:
            self.notice("the store's creation was cut short; it was created again (it was empty)")
        try:
            self._prepare(
                model, dim, new=not is_store, check_model=check_model, migrations=migrations
            )
        except BaseException:
            self.close(save=False)
            raise
        return self

    @classmethod
    def _open_read_only(
        cls,
        folder: Path,
        config: StoreConfig,
        model: str | None,
        dim: int | None,
        check_model: bool,
        migrations: Sequence[str],
    ) -> Store:
        if not (folder / DB_FILE).exists():
            raise StoreReadOnlyError(f"no store at {folder}, and the folder is read-only")
        self = cls(folder, Database(folder / DB_FILE, read_only=True), None, config)
        try:
            self._prepare(model, dim, new=False, check_model=check_model, migrations=migrations)
        except BaseException:
            self.close(save=False)
            raise
        return self

    @property
    def read_only(self) -> bool:
        """Whether this store was opened read-only (nothing is written: no lock, no saves)."""
        return self.db.read_only

    def _prepare(
        self,
        model: str | None,
        dim: int | None,
        *,
        new: bool,
        check_model: bool = True,
        migrations: Sequence[str] = (),
    ) -> None:
        if not new and self.db.is_unfinished():
            if self.read_only:
                raise StoreError(f"{self.folder} holds a store whose creation was cut short")
            # a kill between DuckDB making the file and the first migration's commit: the file
            # holds no row of anyone's, so making the store again loses nothing
            self.notice("the store's creation was cut short; it was created again (it was empty)")
            new = True
        if not new and not self.db.applied_migrations():
            raise StoreError(f"{self.folder} holds a DuckDB file that is not a localmem store")
        if self.read_only:
            self._check_migrated(migrations)
        else:
            self.db.migrate(migrations)
        recorded_model = self.db.get_meta("embed_model")
        recorded_dim = self.db.get_meta("embed_dim")
        if recorded_model is None:
            if model is None or dim is None:
                if self.db.scalar("SELECT count(*) FROM memories"):
                    raise StoreError(f"{self.folder} records no embedding model; open it with one")
                return  # empty: the first open with an embedder records its model
            if self.read_only:
                raise StoreError(f"{self.folder} records no embedding model (and is read-only)")
            with self.db.transaction():
                self.db.set_meta("format", FORMAT_VERSION)
                self.db.set_meta("embed_model", model)
                self.db.set_meta("embed_dim", str(dim))
                if not self.db.scalar("SELECT count(*) FROM lex_docs"):  # a new store
                    self.lexical.record_terms()
            recorded_model, recorded_dim = model, str(dim)
        if recorded_dim is None:
            raise StoreError(f"{self.folder} records an embedding model but no dimension")
        self.model, self.dim = recorded_model, int(recorded_dim)
        if model is not None and check_model:
            self.check_model(model, dim)
        self._open_index()
        if self.read_only:
            return
        repair.mend_on_open(self)
        recovered = self.jobs.recover()
        if recovered:
            self.notice(f"{recovered} background job(s) interrupted by a crash will run again")

    def _check_migrated(self, migrations: Sequence[str]) -> None:
        missing = sorted(
            {name for name, _, _ in list_migrations(migrations, self.db.backend)}
            - set(self.db.applied_migrations())
        )
        if missing:
            raise StoreReadOnlyError(
                f"store {self.folder} is read-only and needs migrations this version adds "
                f"({', '.join(missing[:3])}); open it once where it can be written"
            )

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
    @property
    def vector_index(self) -> StoreVectors:
        """The vector index, which a store has once it records its embedding model.

        Raises:
            StoreError: the store records no embedding model yet (an empty store opened without
                an embedder has no vectors).
        """
        if self.vectors is None:
            raise StoreError(f"store {self.location} records no embedding model yet")
        return self.vectors

    @property
    def vector_dim(self) -> int:
        """The dimension of the store's vectors.

        Raises:
            StoreError: the store records no embedding model yet.
        """
        if self.dim is None:
            raise StoreError(f"store {self.location} records no embedding model yet")
        return self.dim

    def _new_index(self) -> VectorIndex:
        c = self.config
        return VectorIndex(
            self.vector_dim,
            m=c.hnsw_m,
            ef_construction=c.hnsw_ef_construction,
            ef_search=c.hnsw_ef_search,
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
                self.vector_dim,
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
            fixed = self.reconcile_vectors()
            self.notice(f"vector index was out of step with DuckDB; repaired {fixed} entries")
        elif caught_up:
            self.notice(
                f"vector index caught up with {caught_up} change(s) made after its last save"
            )

    def _rebuild_index(self) -> VectorIndex:
        index = self._new_index()
        self._add_embeddings(index, LIVE)
        self.vectors = index
        if self.read_only:
            self.notice("the store is read-only: the rebuilt vector index is kept in memory only")
        self.save_index()
        return index

    def _add_embeddings(
        self, index: StoreVectors, where: str, params: list[Any] | None = None
    ) -> int:
        added = 0
        for batch in self.db.arrow_batches(
            f"SELECT label, embedding FROM memories WHERE {where} ORDER BY label", params or None
        ):
            if batch.num_rows == 0:
                continue
            labels = batch.column(0).to_numpy()
            flat = batch.column(1).flatten().to_numpy(zero_copy_only=False)
            index.add(labels, flat.reshape(len(labels), index.dim))
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
        index = self.vector_index
        index.mark_deleted(gone)
        self._add_embeddings(index, f"vec_seq > ? AND {LIVE}", [saved_seq])
        self._changes_since_save += len(rows)
        return len(rows)

    def reconcile_vectors(self) -> int:
        """Make the index hold exactly the live labels of DuckDB."""
        live = self.live_labels()
        index = self.vector_index
        in_index = index.labels()
        deleted = np.fromiter(index.deleted_labels, np.int64)
        present = np.setdiff1d(in_index, deleted)
        missing = np.setdiff1d(live, present)
        extra = np.setdiff1d(present, live)
        index.mark_deleted(extra.tolist())
        if len(missing):
            self._add_embeddings(
                index,
                "label IN (SELECT unnest(?::BIGINT[])) AND embedding IS NOT NULL",
                [missing.tolist()],
            )
        self._changes_since_save += len(missing) + len(extra)
        return int(len(missing) + len(extra))

    def save_index(self) -> None:
        """Write the vector index to disk (atomically) with the change sequence it has seen.
        A read-only store keeps its index in memory."""
        index = self.vectors
        # only hnswlib's index is a file (a PostgreSQL store overrides this with nothing to do)
        if not isinstance(index, VectorIndex) or self.read_only:
            return
        with self.write_lock:
            seq = self.db.scalar("SELECT coalesce(max(vec_seq), 0) FROM memories")
            index.save(self.folder / INDEX_FILE, {"vec_seq": int(seq), "model": self.model})
            self._changes_since_save = 0

    def bulk_loading(self) -> AbstractContextManager[object]:
        """The transaction ``migrate-store`` loads in (PgStore builds its index once, after)."""
        return self.db.transaction()

    def drain_vectors(self, limit: int | None = None) -> int:
        """Put vectors that wait outside the vector index into it; returns how many. Only a
        PostgreSQL store lets them wait (``PgStore``); hnswlib takes them in the writing unit."""
        return 0

    def pack_postings(self, budget: int | None = None) -> int:
        """Pack common terms' BM25 postings where they changed (about ``budget`` postings, None:
        all); returns how many terms were packed. Only a PostgreSQL store reads its postings
        from the database on each search (``PgStore``); the embedded index holds them packed
        in memory."""
        return 0

    def index_changed(self, n: int, *, added: int = 0) -> None:
        """Count vector changes (``n``, of which ``added`` new or re-embedded); save the index
        every ``save_every`` of them, or every ``save_every_fraction`` of the index when that is
        more (a save writes the whole file: at a fixed interval, growing a store to 1M memories
        would rewrite 1.7 GB 200 times)."""
        self._changes_since_save += n
        size = self.vectors.live_count if self.vectors is not None else 0
        every = max(self.config.save_every, int(size * self.config.save_every_fraction))
        if self._changes_since_save >= every:
            self.save_index()

    # -- facts about the store ------------------------------------------------------------------
    def live_count(self) -> int:
        """Memories that are not deleted and have a vector."""
        return int(self.db.scalar(f"SELECT count(*) FROM memories WHERE {LIVE}"))

    def live_labels(self) -> np.ndarray:
        """Labels of the live memories, sorted."""
        tbl = self.db.arrow(f"SELECT label FROM memories WHERE {LIVE} ORDER BY label")
        labels: np.ndarray = tbl.column(0).to_numpy().astype(np.int64)  # pyarrow is untyped
        return labels

    def check(self, *, deep: bool = False) -> dict[str, Any]:
        """Integrity facts (:func:`localmem.store.repair.facts`; ``deep`` for doctor)."""
        return repair.facts(self, deep=deep)

    def vectors_of(self, labels: Sequence[int] | np.ndarray) -> np.ndarray:
        """Stored vectors of labels for a search, in order; a label the index lacks gets a zero
        vector and joins :attr:`suspects` (the next unit repairs it), never an error."""
        index = self.vector_index
        try:
            return index.get(labels)
        except KeyError:
            out = np.zeros((len(labels), index.dim), dtype=np.float32)
        for i, label in enumerate(int(x) for x in labels):
            try:
                out[i] = index.get([label])[0]
            except KeyError:
                self.suspects.add(label)
        return out

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: memories (live, deleted, by kind), links, waiting jobs, bytes."""
        db = self.db
        sql = "SELECT kind, count(*) FROM memories WHERE NOT deleted GROUP BY 1 ORDER BY 1"
        by_kind: dict[str, int] = {kind: int(n) for kind, n in db.fetchall(sql)}
        return {
            "memories": sum(by_kind.values()),
            "deleted": int(db.scalar("SELECT count(*) FROM memories WHERE deleted")),
            "by_kind": by_kind,
            "links": int(db.scalar("SELECT count(*) FROM links")),
            "jobs_pending": self.jobs.pending(),
            "bytes_on_disk": self.bytes_on_disk(),
        }

    def bytes_on_disk(self) -> int:
        """What the store takes on disk: its folder's files."""
        return sum(p.stat().st_size for p in self.folder.iterdir() if p.is_file())

    def close(self, *, save: bool = True) -> None:
        """Save the index, close DuckDB, release the lock. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            if save and self.vectors is not None and self._changes_since_save:
                self.save_index()
        finally:
            if isinstance(self.vectors, VectorIndex):  # PostgreSQL's holds no file
                self.vectors.release()
            try:
                self.db.close()
            finally:
                if self._lock is not None:
                    self._lock.release()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed
