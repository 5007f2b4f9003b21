"""A client of ``localmem serve`` with the API of :class:`~localmem.memory.Memory`.

A store is one process's while it is open (its writer lock); ``localmem serve`` is that process
for every other client. :func:`connect` finds the server of a store (the discovery file it
writes into the store folder) or takes its URL, and returns a :class:`RemoteMemory` whose
methods have the same names, arguments, return types and errors as ``Memory``'s, so an agent's
code does not change between in-process and served::

    with Memory.connect("~/notes") as mem:      # a store that `localmem serve` holds
        mem.add("The deploy runs on Fridays", kind="fact")
        print(mem.search("when do we deploy")[0].memory.content)

Requests go over HTTP on the loopback interface (the standard library's ``http.client``: one
short JSON request per call needs no more), each carrying the store's secret token.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from localmem import wire
from localmem.api import MemoryAPI, ServedAPI
from localmem.api.declaration import MineMode
from localmem.discovery import (
    TOKEN_HEADER,
    ServerInfo,
    find_server,
    loopback_host,
    proves_token,
)
from localmem.errors import InputError, StoreError
from localmem.remote.calls import install
from localmem.remote.procedures import RemoteProcedures
from localmem.remote.transport import IDLE_S, NeedsLocalStore, ServerGone
from localmem.types import MemoryItem

if TYPE_CHECKING:
    from localmem.config import Config


def connect(
    target: str | Path | None = None, *, token: str | None = None, timeout: float = 120.0
) -> RemoteMemory:
    """A client of the server that holds a store.

    Args:
        target: a store folder (its server is found through the discovery file), or the
            server's URL (``http://127.0.0.1:PORT``; the token then comes from ``token`` or
            ``$LOCALMEM_TOKEN``). Default: the default store.
        token: the store's secret token, when ``target`` is a URL.
        timeout: seconds to wait for one answer.

    Raises:
        StoreError: no server runs for that store, or no token was given for a URL.
    """
    if isinstance(target, str) and "://" in target:
        token = token or os.environ.get("LOCALMEM_TOKEN")
        if not token:
            raise StoreError("connecting to a URL needs the store's token (or $LOCALMEM_TOKEN)")
        # its methods are made from the declaration by install() below, unseen by mypy
        return RemoteMemory(target, token, timeout=timeout)  # type: ignore[abstract]
    if target is None:
        from localmem.home import default_store_path

        target = default_store_path()
    info = find_server(target)
    if info is None:
        raise StoreError(f"no localmem server runs for {target}; start one with `localmem serve`")
    # its methods are made from the declaration by install() below, unseen by mypy
    return RemoteMemory(info.url, info.token, timeout=timeout, server=info)  # type: ignore[abstract]


class RemoteMemory(ServedAPI, MemoryAPI):
    """The API of ``Memory`` over a server's HTTP interface (see :func:`connect`).

    Its methods are made from the declaration (:mod:`localmem.api`): each binds its arguments
    to the declared signature, sends them and decodes the answer into the declared type, so
    nothing here repeats the API. The few written by hand do more on this side (``add_many``
    sends batches; ``infers`` reads the store's config once).
    """

    def __init__(
        self, url: str, token: str, *, timeout: float = 120.0, server: ServerInfo | None = None
    ) -> None:
        host = loopback_host(url)
        if host is None:  # the server listens on loopback only; the token stays here
            raise InputError(f"not a localmem server URL (http on a loopback address): {url!r}")
        self.url, self.server = url, server
        self._host, self._port = host, urlsplit(url).port or 80
        self._token, self._timeout = token, timeout
        # its methods are made from the declaration by install(), unseen by mypy
        self._procedures = RemoteProcedures(self)  # type: ignore[abstract]
        self._local = threading.local()  # one kept-alive connection per thread
        self._described: dict[str, Any] | None = None

    # -- transport --------------------------------------------------------------------------
    def call(self, method: str, **args: Any) -> Any:
        """Call one method of the server's Memory and return its JSON answer.

        Raises:
            LocalMemError: the same class the server raised; StoreError when the server cannot
                be reached or answers nonsense.
        """
        try:
            body = json.dumps(wire.encode(args)).encode("utf-8")
        except RecursionError:
            raise InputError(f"the arguments of {method} nest too deeply") from None
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            raise InputError(f"the arguments of {method} are not JSON: {exc}") from None
        try:
            conn = self._connection()
        except OSError as exc:  # refused before anything was sent: nothing was applied
            raise ServerGone(
                f"the localmem server at {self.url} is gone ({exc.strerror or exc}); nothing "
                "was applied: reconnect when it runs again, or open the store directly"
            ) from None
        try:
            conn.request(
                "POST",
                f"/v1/{method}",
                body=body,
                headers={
                    "Content-Type": "application/json",
                    TOKEN_HEADER: f"Bearer {self._token}",
                },
            )
        except (BrokenPipeError, ConnectionResetError) as exc:
            # the kept-alive connection was closed by the server before the request went out;
            # when a new one is refused the server is gone and never read it
            self._drop()
            if self._refused():
                raise ServerGone(
                    f"the localmem server at {self.url} is gone ({exc.strerror or exc}); "
                    "nothing was applied: reconnect when it runs again, or open the store "
                    "directly"
                ) from None
            raise StoreError(
                f"the localmem server at {self.url} closed the connection ({exc}); whether the "
                "last request was applied is unknown: check before repeating it"
            ) from None
        try:
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self._drop()
            raise StoreError(
                f"the localmem server at {self.url} did not answer ({exc}); whether the "
                "last request was applied is unknown: check before repeating it"
            ) from None
        self._local.used = time.monotonic()
        if response.will_close:
            self._drop()
        try:
            data = json.loads(raw)
        except ValueError:
            raise StoreError(
                f"the localmem server at {self.url} answered {response.status} with no JSON"
            ) from None
        if response.status != 200 or "error" in data:
            raise wire.decode_error(data.get("error") if isinstance(data, dict) else data)
        return data.get("result")

    def _connection(self) -> http.client.HTTPConnection:
        """This thread's kept-alive connection; a new one after an idle pause (the server
        closes idle ones after 5 s, and a request must never be sent twice)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None and time.monotonic() - self._local.used > IDLE_S:
            self._drop()
            conn = None
        if conn is None:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # nothing secret and no request goes out before the server proves it holds the
            # token: after a crash another program may listen on the old port
            if not proves_token(conn, self._token):
                conn.close()
                raise StoreError(
                    f"the server at {self.url} did not prove that it holds the store's token; "
                    "nothing was sent (a stale address? start `localmem serve` again)"
                )
            self._local.conn, self._local.used = conn, time.monotonic()
        return conn

    def _refused(self) -> bool:
        """Whether the server refuses a new connection now (it has stopped)."""
        try:
            socket.create_connection((self._host, self._port), timeout=self._timeout).close()
        except OSError:
            return True
        return False

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Close this thread's connection to the server."""
        self._drop()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise NeedsLocalStore(name, self.server)

    # -- what the store is -------------------------------------------------------------------
    def _facts(self) -> dict[str, Any]:
        if self._described is None:
            self._described = self.describe()
        return self._described

    @property
    def procedures(self) -> RemoteProcedures:
        """The store's procedures (``memory.procedures``)."""
        return self._procedures

    @property
    def path(self) -> Path:
        """The store folder (on the server's machine, which is this one)."""
        return self.server.store if self.server else Path(self._facts()["path"])

    @property
    def config(self) -> Config:
        """The served store's configuration."""
        from localmem.config import Config  # pydantic: only when asked for

        return Config.model_validate(self._facts()["config"])

    @property
    def add_options(self) -> tuple[str, ...]:
        """The options of :meth:`add` the served store's mechanisms offer."""
        return tuple(self._facts()["add_options"])

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The search stages of the served store, in order."""
        return tuple(self._facts()["stage_names"])

    def infers(self, infer: bool | None) -> bool:
        """As :meth:`Memory.infers`."""
        if infer is None:  # read from the described config as sent: no pydantic model
            return bool(self._facts()["config"]["infer"]["on_add"])
        if not isinstance(infer, bool):
            raise InputError(f"infer must be true or false, not {infer!r}")
        return infer

    def add_many(
        self,
        items: Sequence[str | Mapping[str, Any]],
        *,
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
        mine: MineMode | None = None,
        evolve: bool | None = None,
        dedupe: bool = False,
        infer: bool | None = None,
        **defaults: Any,
    ) -> list[MemoryItem]:
        """As :meth:`Memory.add_many`: one request (and one transaction) per batch, so a long
        import reports progress, stays under the request size limit, and keeps the batches
        stored before a bad one."""
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
            raise InputError("items must be a list of texts or dicts")
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise InputError(f"batch_size must be a positive integer, not {batch_size!r}")
        given = {"mine": mine, "evolve": evolve, "infer": infer}
        options = {k: v for k, v in given.items() if v is not None} | defaults
        if dedupe:
            options["dedupe"] = True
        items, stored = list(items), []
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            data = self.call("add_many", items=batch, batch_size=batch_size, **options)
            stored += wire.decode(list[MemoryItem], data)
            if progress is not None:
                progress(len(stored))
        return stored


install(RemoteMemory, ("memory", "served"))
