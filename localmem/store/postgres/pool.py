"""The connections of a PostgreSQL store in one process: a psycopg pool, and which connection
each thread holds.

A statement outside a transaction borrows a connection for its own length, so the threads of
one process (a server's requests, the TUI's workers) read at once. A transaction, or the
migrations' advisory lock, pins its connection to the calling thread until it ends, and every
statement that thread runs meanwhile goes on it (the kernel's nested write units rely on that).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypedDict

from localmem.errors import StoreConnectionError
from localmem.store.address import StoreAddress

if TYPE_CHECKING:  # psycopg is imported when a PostgreSQL store is opened, not before
    from psycopg import Connection

#: seconds to wait for the server to accept a connection, or for a pooled one to come free
CONNECT_TIMEOUT_S = 10


class _Keepalive(TypedDict):
    """libpq's keepalive settings (names as libpq spells them)."""

    keepalives: int
    keepalives_idle: int
    keepalives_interval: int
    keepalives_count: int
    tcp_user_timeout: int


#: libpq settings of every connection: a connection the network silently dropped (a NAT or a
#: firewall forgetting it, the server's host losing power) fails within about a minute instead
#: of blocking for the kernel's retransmission limit (ignored over a Unix socket)
KEEPALIVE: _Keepalive = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}
# the pool logs a warning for each failed reconnect; localmem says what went wrong in its own
# errors, so without a logging set-up of the application's these stay off stderr (and the TUI)
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
_names = itertools.count()


class Connections:
    """A psycopg pool of ``size`` connections to ``address`` and the connection each thread
    holds."""

    def __init__(self, address: str | StoreAddress, *, read_only: bool, size: int) -> None:
        from psycopg_pool import ConnectionPool

        self.address = StoreAddress.parse(address)
        self.location = self.address.shown
        self.read_only = read_only
        self._local = threading.local()  # the connection this thread holds, its transaction depth
        # one connection made now, so a wrong address or password is one clear error here
        # rather than a pool retrying in the background
        self.connect().close()
        self.pool = ConnectionPool(
            self.address.conninfo,
            min_size=1,
            max_size=max(1, int(size)),
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S, **KEEPALIVE},
            configure=self._configure,
            check=ConnectionPool.check_connection,  # a connection lost while idle is replaced
            timeout=CONNECT_TIMEOUT_S,
            # the pool backs off between reconnects (1 s, doubling) for this long, then stops
            # until a statement asks again: with psycopg's 5 minutes, a store whose server was
            # away for a minute stayed slow for minutes after it came back
            reconnect_timeout=CONNECT_TIMEOUT_S,
            name=f"localmem {self.location}",
            open=True,
        )

    def connect(self) -> Connection[Any]:
        """A connection made directly (not through the pool), set up as the pool's are."""
        import psycopg

        try:
            con = psycopg.connect(
                self.address.conninfo,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                **KEEPALIVE,
            )
        except psycopg.Error as exc:
            raise StoreConnectionError(
                f"cannot connect to the store {self.location}: {self.address.describe(exc)}"
            ) from None
        self._configure(con)
        return con

    def _configure(self, con: Connection[Any]) -> None:
        """Set up a new connection as DuckDB returns values: JSON as its text, ``numeric``
        (sum, avg of integers) as float; read-only when the store is."""
        from psycopg.types.numeric import FloatLoader
        from psycopg.types.string import TextLoader

        for name in ("json", "jsonb"):
            con.adapters.register_loader(name, TextLoader)
        con.adapters.register_loader("numeric", FloatLoader)
        if self.read_only:
            con.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

    def checkout(self) -> tuple[Connection[Any], bool]:
        """A connection and whether it is the pool's. When the pool has none to give in time
        (every one busy, or the pool still backing off after the server was away), a direct
        connection is made instead, or the server's reason it cannot be is raised."""
        from psycopg_pool import PoolClosed, PoolTimeout

        try:
            return self.pool.getconn(), True
        except PoolClosed:
            raise StoreConnectionError(f"the store {self.location} is closed") from None
        except PoolTimeout:
            return self.connect(), False

    def give_back(self, con: Connection[Any], pooled: bool) -> None:
        """Return a borrowed connection (a broken one is replaced by the pool)."""
        if pooled:
            self.pool.putconn(con)
        else:
            con.close()

    @contextmanager
    def held(self) -> Iterator[Any]:
        """The calling thread's connection: the one it holds (in a transaction or an advisory
        lock), else one borrowed until the block ends."""
        con = getattr(self._local, "con", None)
        if con is not None:
            if con.closed or con.broken:
                raise StoreConnectionError(
                    f"the connection to the store {self.location} was lost in a transaction; "
                    "what was not committed is not stored; try again"
                )
            yield con
            return
        con, pooled = self.checkout()
        self._local.con = con
        try:
            yield con
        finally:
            self._local.con = None
            self.give_back(con, pooled)

    @contextmanager
    def own(self) -> Iterator[Any]:
        """A connection for a block that may be suspended (a generator): the thread's own when
        it holds one, else one borrowed for the block alone, never pinned to the thread."""
        con = getattr(self._local, "con", None)
        if con is not None:
            yield con
            return
        con, pooled = self.checkout()
        try:
            yield con
        finally:
            self.give_back(con, pooled)

    @property
    def depth(self) -> int:
        """How many transactions the calling thread has open (nested ones count)."""
        return getattr(self._local, "depth", 0)

    @depth.setter
    def depth(self, value: int) -> None:
        self._local.depth = value

    @staticmethod
    def cursor_name() -> str:
        """A server-side cursor's name, unique in this process."""
        return f"localmem_batches_{next(_names)}"

    def close(self) -> None:
        """Close every connection of the pool."""
        self.pool.close()
