"""A store on PostgreSQL with pgvector: :class:`PgStore` is a
:class:`~localmem.store.store.Store` whose database is a server, whose vectors are a pgvector
HNSW index over the embedding column, and whose BM25 is scored by the server.

What the embedded store needs a folder for does not apply: no lock file (several processes,
on several machines, share one database; transactions, row locks and ``SKIP LOCKED`` keep them
apart), no index file to save, catch up or rebuild, no file modes. The store still has a local
folder, ``$LOCALMEM_HOME/postgres/<hash of the address>``, for what `localmem serve` writes
beside a store (its discovery and token files).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from localmem.config import StoreConfig, localmem_home
from localmem.errors import StoreError
from localmem.store.address import StoreAddress
from localmem.store.db import utcnow
from localmem.store.jobs import JobQueue
from localmem.store.postgres.db import PgDatabase
from localmem.store.postgres.indexes import ensure_indexes
from localmem.store.postgres.lexical import PgLexicalIndex
from localmem.store.postgres.packing import ensure_packs, pack_terms
from localmem.store.postgres.settings import advise
from localmem.store.postgres.vectors import (
    PgVectorIndex,
    build_memory_mb,
    create_index,
    drop_indexes,
    ensure_index,
)
from localmem.store.store import Store

#: the store's tables (what a bulk load analyzes; never another application's)
_TABLES = (
    "SELECT table_name FROM information_schema.tables "
    "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
)
#: postings packed at most by the upkeep after a drain (the rest by the next drains; at a
#: million memories packing costs ~0.5 us a posting, docs/benchmarks.md "pg4")
PACK_BUDGET = 200_000
#: a job left ``running`` this long is taken to be a dead worker's and queued again on open
#: (others may be running it right now: several processes share the queue)
JOB_LEASE = timedelta(minutes=30)


def local_folder(address: str | StoreAddress) -> Path:
    """The local folder of a PostgreSQL store on this machine (its settings, `localmem serve`'s
    discovery and token files): ``$LOCALMEM_HOME/postgres/<hash of the address without its
    password>`` (an address already redacted gives the same folder)."""
    location = StoreAddress.parse(address).shown
    return localmem_home() / "postgres" / hashlib.sha256(location.encode("utf-8")).hexdigest()[:16]


class PgJobQueue(JobQueue):
    """The job queue shared by every process on the database."""

    ROW_LOCK = " FOR UPDATE SKIP LOCKED"

    def recover(self) -> int:
        """Jobs ``running`` for longer than :data:`JOB_LEASE` go back to ``pending``: a job
        running now may belong to another live process, so a fresh one is left alone."""
        with self.db.transaction():
            rows = self.db.fetchall(
                "UPDATE jobs SET status = 'pending', updated_at = ? "
                "WHERE status = 'running' AND updated_at < ? RETURNING id",
                [utcnow(), utcnow() - JOB_LEASE],
            )
        return len(rows)


class PgStore(Store):
    """The store's contract on a PostgreSQL database (use :meth:`open_address`)."""

    #: always a server's database (:meth:`open_address` gives the store no other)
    db: PgDatabase
    #: vectors this process wrote and has not drained as many of (its close drains them)
    _owed_vectors = 0

    @classmethod
    def open_address(
        cls,
        address: str | StoreAddress,
        *,
        config: StoreConfig | None = None,
        model: str | None,
        dim: int | None,
        create: bool = True,
        check_model: bool = True,
        migrations: Sequence[str] = (),
        read_only: bool | None = None,
    ) -> PgStore:
        """Open (or create) the store in the database at ``address`` (``postgresql://...``).

        Raises:
            StoreConnectionError: the server cannot be reached or refused the login (the
                message never holds the password).
            StoreError: no store there and ``create`` is False, or another embedding model.
        """
        config = config or StoreConfig()
        db = PgDatabase(address, read_only=bool(read_only), pool_size=config.pg_pool_size)
        try:
            self = cls(local_folder(db.location), db, None, config)
        except BaseException:
            db.close()
            raise
        self.location = db.location
        self.jobs = PgJobQueue(db)
        self.lexical = PgLexicalIndex(db)
        try:
            new = not db.applied_migrations()
            if new and not create:
                raise StoreError(f"no store at {db.location} (create one with Memory.open)")
            self._prepare(model, dim, new=new, check_model=check_model, migrations=migrations)
            if not self.read_only:
                self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                made = ensure_indexes(db)
                if ensure_packs(db) and not new:
                    made.append("lex_postings_since (packed postings)")
                if made and not new:
                    self.notice(f"built the indexes {', '.join(made)}")
        except BaseException:
            self.close(save=False)
            raise
        return self

    def _open_index(self) -> None:
        c = self.config
        dim = self.vector_dim
        if not self.read_only and ensure_index(
            self.db, dim, m=c.hnsw_m, ef_construction=c.hnsw_ef_construction
        ):
            live = self.live_count()
            if live:
                self.notice(f"built the HNSW index of {live} vectors")
        self.vectors = PgVectorIndex(self.db, dim, ef_search=c.hnsw_ef_search)

    # -- pending vectors (vectors.py): written unindexed, put in the HNSW index by a drain -----
    @property
    def pending_vectors(self) -> int:
        """Rows whose vector waits for a drain (searched exactly meanwhile)."""
        return self.vectors.pending_count() if isinstance(self.vectors, PgVectorIndex) else 0

    def drain_vectors(self, limit: int | None = None) -> int:
        """Put pending vectors in the HNSW index, :attr:`StoreConfig.pg_drain_batch` per
        transaction, until none is left or ``limit`` are done; returns how many. Safe beside
        other drainers and writers in any process (``SKIP LOCKED``)."""
        index = self.vectors
        if self.read_only or not isinstance(index, PgVectorIndex):
            return 0
        batch = self.config.pg_drain_batch
        done = 0
        while limit is None or done < limit:
            n = index.drain(batch if limit is None else min(batch, limit - done))
            done += n
            if n == 0:
                break
        if done:  # postings were written too: the packs of common terms they touched go stale
            try:
                self.pack_postings(PACK_BUDGET)
            except Exception as exc:  # packs are derived: searches read the rows meanwhile
                self.notice(f"packing common terms' postings left for later: {exc}")
        return done

    def pack_postings(self, budget: int | None = None) -> int:
        """Pack the postings of common terms whose packs are missing or stale
        (:mod:`localmem.store.postgres.packing`), about ``budget`` postings (None: all);
        returns how many terms were packed."""
        if self.read_only:
            return 0
        return pack_terms(self.db, budget=budget).terms

    def index_changed(self, n: int, *, added: int = 0) -> None:
        """After a write unit with vector changes: when more than
        :attr:`StoreConfig.pg_pending_max` vectors wait, the writer drains the excess itself
        (back-pressure: the exact half of a search never grows past the bound). Only the
        ``added`` vectors wait to be drained (a deletion leaves nothing pending), so only they
        are owed by this process's close."""
        self._owed_vectors += added
        bound = self.config.pg_pending_max
        over = self.pending_vectors - bound
        if over > 0:
            self._owed_vectors = max(0, self._owed_vectors - self.drain_vectors(over))

    def close(self, *, save: bool = True) -> None:
        """Drain as many pending vectors as this process wrote and has not drained (oldest
        first: a one-shot `localmem add` leaves the pending set no larger than it found it,
        and pays for its own rows only; a reader pays for none), then close."""
        if save and not self.closed and self._owed_vectors and not self.read_only:
            try:
                self.drain_vectors(self._owed_vectors)
            except Exception as exc:  # the rows stay pending and found: the next drain has them
                self.notice(f"pending vectors left for the next drain: {exc}")
        super().close(save=save)

    @contextmanager
    def bulk_loading(self) -> Iterator[None]:
        """A transaction for loading many rows at once (``migrate-store``): the HNSW index is
        dropped before and built once after, with the memory to hold its graph. At 1M vectors
        pgvector builds it many times faster than it grows it a row at a time.

        Raises:
            StoreError: the index could not be built (nothing of the load is kept).
        """
        import psycopg

        with self.db.transaction():
            drop_indexes(self.db, self.vector_dim)
            # the copied rows go straight into the index built below, not through drains
            self.db.execute("ALTER TABLE memories ALTER COLUMN vector_pending SET DEFAULT false")
            yield
            self.db.execute("ALTER TABLE memories ALTER COLUMN vector_pending SET DEFAULT true")
            try:
                self._build_index_after_load()
            except psycopg.Error as exc:
                raise StoreError(
                    f"the rows were copied but the vector index could not be built in "
                    f"{self.location} ({self.db.address.describe(exc)}); nothing was kept"
                ) from None
            tables = [r[0] for r in self.db.fetchall(_TABLES)]
            self.db.execute("ANALYZE " + ", ".join(f'"{t}"' for t in tables))

    def _build_index_after_load(self) -> None:
        """Build the HNSW index in parallel with the memory its graph needs; where the server
        cannot give that (a parallel build's shared memory is limited in many containers),
        build it again serially with the server's own setting."""
        c = self.config
        dim = self.vector_dim
        mb = build_memory_mb(self.live_count(), dim, c.hnsw_m)
        self.db.execute("SAVEPOINT build_index")
        try:
            self.db.execute(f"SET LOCAL maintenance_work_mem = '{mb}MB'")
            create_index(self.db, dim, m=c.hnsw_m, ef_construction=c.hnsw_ef_construction)
        except StoreError:
            raise
        except Exception:  # psycopg's: out of (shared) memory, and the like
            self.db.execute("ROLLBACK TO SAVEPOINT build_index")
            self.db.execute("SET LOCAL max_parallel_maintenance_workers = 0")
            create_index(self.db, dim, m=c.hnsw_m, ef_construction=c.hnsw_ef_construction)
        self.db.execute("RELEASE SAVEPOINT build_index")

    def check(self, *, deep: bool = False) -> dict[str, Any]:
        """Integrity facts (as the embedded store's), and the server settings the store's
        size asks for (:mod:`localmem.store.postgres.settings`)."""
        facts = super().check(deep=deep)
        facts["server_settings"] = [
            {
                "setting": a.name,
                "ok": a.ok,
                "current_mb": a.current_mb,
                "recommended_mb": a.recommended_mb,
                "detail": a.line(),
            }
            for a in advise(self.db, dim=self.dim, m=self.config.hnsw_m, rows=facts["live"])
        ]
        facts["pending_vectors"] = self.pending_vectors
        return facts

    def save_index(self) -> None:
        """Nothing to save: the server keeps the index."""

    def bytes_on_disk(self) -> int:
        """What the store's tables and indexes take in the database."""
        return int(
            self.db.scalar(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'S')"
            )
        )
