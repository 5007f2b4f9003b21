"""Running the server: the store opened once, the loopback socket, the discovery file, the jobs.

The order matters for the guarantees: the store is opened first (its writer lock makes a second
server on the same store fail with the pid of the first), the token file is written before the
discovery file (a client that finds the one finds the other), and both are removed on a clean
exit; after a crash the discovery file stays, and clients ignore it because its pid is gone.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
import secrets
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from localmem.atomic import write_private
from localmem.discovery import DISCOVERY_FILE, TOKEN_FILE
from localmem.errors import InputError, StoreError, StoreLockedError
from localmem.store.address import is_postgres
from localmem.store.lock import StoreLock

if TYPE_CHECKING:
    import asyncio

    from uvicorn.protocols.http.h11_impl import RequestResponseCycle

    from localmem.memory import Memory

log = logging.getLogger("localmem.server")


def loopback_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on a loopback address, never on another.

    Raises:
        InputError: ``host`` is not a loopback address.
        StoreError: the port cannot be bound.
    """
    try:
        address = ipaddress.ip_address("127.0.0.1" if host == "localhost" else host)
    except ValueError:
        raise InputError(
            f"--host must be a loopback address such as 127.0.0.1, not {host!r}"
        ) from None
    if not address.is_loopback:
        raise InputError(
            f"localmem serve listens on the loopback interface only; {host} is not loopback"
        )
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # answers go out at once (accepted sockets inherit it): with Nagle's algorithm a
        # kept-alive connection waits for the client's delayed ACK, 40 ms a request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((str(address), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise StoreError(f"cannot listen on {host}:{port}: {exc}") from None
    return sock


def serve(
    memory: Memory,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    ready=None,
    ingest_roots: Sequence[Path] | None = None,
) -> None:
    """Serve ``memory`` until SIGINT or SIGTERM; ``ready(url)`` is called once it listens.
    ``ingest_roots``: the folders clients may have it read files from (default: home)."""
    import uvicorn

    from localmem.server.app import build_app
    from localmem.worker import JobWorker

    folder = Path(memory.kernel.store.folder)
    # a folder store is open here, so its lock is ours: a discovery file left in the folder is
    # from a server that died, and is replaced below. A database has no lock of ours: the
    # local folder's own lock keeps a second server of this LOCALMEM_HOME out, even one
    # started at the same moment (which would share, then delete, the discovery files)
    home_lock = _one_server_per_home(memory, folder)
    sock = loopback_socket(host, port)
    bound_host, bound_port = sock.getsockname()[:2]
    url = f"http://{'[' + bound_host + ']' if ':' in bound_host else bound_host}:{bound_port}"
    token = secrets.token_urlsafe(32)
    workers = [JobWorker(memory).start()]

    def wake_jobs() -> None:
        """After a write: look at the job queue now; a worker that died is replaced."""
        if workers[-1].error is not None:
            log.warning("job worker stopped (%s); starting a new one", workers[-1].error)
            workers.append(JobWorker(memory).start())
        workers[-1].wake()

    app = build_app(
        memory, token, on_write=wake_jobs, ingest_roots=ingest_roots, host=str(bound_host)
    )
    config = uvicorn.Config(
        app, log_level="warning", lifespan="on", access_log=False, http=_bounded_headers()
    )
    server = uvicorn.Server(config)
    write_private(folder / TOKEN_FILE, token, fsync=True)
    discovery = {"pid": os.getpid(), "url": url, "token_file": TOKEN_FILE}
    write_private(folder / DISCOVERY_FILE, json.dumps(discovery), fsync=True)
    if ready is not None:
        ready(url)
    previous = signal.signal(signal.SIGTERM, lambda *_: setattr(server, "should_exit", True))
    try:
        server.run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        workers[-1].stop()
        if _ours(folder / DISCOVERY_FILE):  # never another server's files
            for name in (DISCOVERY_FILE, TOKEN_FILE):
                with contextlib.suppress(OSError):
                    (folder / name).unlink()
        sock.close()
        if home_lock is not None:
            home_lock.release()
        print("localmem: server stopped", file=sys.stderr)


def _one_server_per_home(memory: Memory, folder: Path) -> StoreLock | None:
    """For a store on a database, the lock of its local folder, held while serving.

    Raises:
        StoreError: another server of this store runs from this LOCALMEM_HOME.
    """
    location = memory.kernel.store.location
    if not is_postgres(location):
        return None  # the store's own lock, held since it was opened, does this
    lock = StoreLock(folder)
    try:
        lock.acquire()
    except StoreLockedError as exc:
        who = f"process {exc.pid}" if exc.pid else "another process"
        raise StoreError(
            f"store {location} is already served by {who} from this LOCALMEM_HOME "
            "(give another server its own)"
        ) from None
    return lock


def _ours(discovery: Path) -> bool:
    """Whether a discovery file names this process."""
    try:
        return int(json.loads(discovery.read_text(encoding="utf-8"))["pid"]) == os.getpid()
    except (OSError, ValueError, KeyError, TypeError):
        return False


#: seconds a connection may take to send a request's headers (a slow sender holds a connection)
HEADER_TIMEOUT_S = 10.0


def _bounded_headers() -> type:
    """uvicorn's HTTP/1.1 protocol with a limit on how long a request's headers may take:
    uvicorn has none (its keep-alive timer restarts with every byte), so 30 connections sending
    a header byte now and then were held for as long as they liked."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedHeaders(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        # uvicorn's own connection_made takes a Transport, narrower than asyncio's
        # BaseTransport, and silences mypy the same way
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # the next request on a kept-alive connection gets its own time

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            waiting_for = self.cycle  # the request before the one whose headers are awaited
            self._deadline = self.loop.call_later(HEADER_TIMEOUT_S, lambda: self._late(waiting_for))

        def _disarm(self) -> None:
            deadline = self._deadline
            if deadline is not None:
                deadline.cancel()
                self._deadline = None

        def _late(self, waiting_for: RequestResponseCycle) -> None:
            if self.cycle is waiting_for and not self.transport.is_closing():
                self.transport.close()  # no new request's headers in time

    return BoundedHeaders
