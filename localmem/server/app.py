"""The server's HTTP interface: ``POST /v1/METHOD`` with the method's arguments as JSON.

Every request must carry the store's token (``Authorization: Bearer TOKEN``). The answer is
``{"result": ...}``, or ``{"error": {"type": "InputError", "message": ...}}`` with a 4xx or 5xx
status; the error types are those of :mod:`localmem.errors`, so :mod:`localmem.remote` raises
the same class the store raised. Methods run in worker threads: the store serialises its
writes itself (its kernel's lock), reads run beside them. ``/mcp`` serves the MCP tools of
:mod:`localmem.mcp_server` over streamable HTTP, behind the same token.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from string import hexdigits
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from localmem import api, wire
from localmem.api import Operation
from localmem.discovery import MAX_CHALLENGE, TOKEN_HEADER, proof
from localmem.errors import InputError, LocalMemError, NotFoundError
from localmem.mcp_server import build_server
from localmem.server.files import confined_ingest, default_roots

if TYPE_CHECKING:
    from localmem.memory import Memory

log = logging.getLogger("localmem.server")

#: the largest request body accepted (a batch of add_many included)
MAX_BODY = 32 * 1024 * 1024


def method_table(
    memory: Memory, extensions: Mapping[str, Callable[..., Any]]
) -> dict[str, tuple[Operation, Callable[..., Any]]]:
    """Every operation the declaration says a server answers (:func:`localmem.api.served`),
    with the callable that answers it: a method of ``memory`` or of ``memory.procedures``, or
    one of the server's own ``extensions`` (reading a file on this machine)."""
    table = {}
    for name, op in api.served().items():
        if op.owner == "memory":
            fn = getattr(memory, op.attribute)
        elif op.owner == "procedures":
            fn = getattr(memory.procedures, op.attribute)
        else:
            fn = extensions[name]
        table[name] = (op, fn)
    return table


_STATUS = {
    "InputError": 400,
    "NotFoundError": 404,
    "StoreLockedError": 409,
    # the store is fine; what the call asked for (a model) is not there: a 503, not a fault
    "EngineUnavailableError": 503,
}


def _error(exc: LocalMemError, status: int | None = None) -> JSONResponse:
    name = type(exc).__name__
    return JSONResponse(
        {"error": wire.encode_error(exc)}, status_code=status or _STATUS.get(name, 500)
    )


class _TooLarge(InputError):
    """A request body over :data:`MAX_BODY`: answered 413, as an InputError."""


async def _arguments(request: Request, op: Operation) -> dict[str, Any]:
    """The request's JSON arguments for ``op``, checked against its declared parameters.

    Raises:
        InputError: the body is too large (:class:`_TooLarge`), not a JSON object, holds an
            in-process value (a callable's name) or an argument of the wrong kind.
    """
    size = request.headers.get("content-length")
    if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
        raise _TooLarge(f"request body over {MAX_BODY} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise _TooLarge(f"request body over {MAX_BODY} bytes")
    try:
        args = json.loads(body or b"{}")
    except RecursionError:  # [[[[... nested deeper than the parser recurses
        raise InputError("the request body nests too deeply") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"the request body is not JSON: {exc}") from None
    if not isinstance(args, dict):
        raise InputError("the arguments must be a JSON object of plain values")
    local = {p.name for p in op.params if p.local} & set(args)
    if local:
        raise InputError(f"{', '.join(sorted(local))}: an in-process value, never sent over HTTP")
    api.check_arguments(op, args)  # the declared types, before anything reaches the store
    return args


def build_app(
    memory: Memory,
    token: str,
    *,
    on_write: Callable[[], None] | None = None,
    ingest_roots: Sequence[Path] | None = None,
    host: str = "127.0.0.1",
) -> Starlette:
    """The ASGI app serving ``memory`` to clients that present ``token``.

    The one answer given without the token is ``GET /v1/health?challenge=HEX``: the proof that
    this server holds the token (:func:`localmem.discovery.proof`), which a client checks
    before it sends the token or a request, so a stale discovery file whose pid or port now
    belongs to another program is never trusted.
    ``on_write`` is called after every method that may have queued jobs (to wake the worker).
    ``ingest_roots``: the folders whose files a client may have the server ingest (default:
    the home folder; :mod:`localmem.server.files`). ``host``: the loopback address it listens
    on, which MCP clients name in their Host header.
    """
    roots = default_roots() if ingest_roots is None else tuple(ingest_roots)
    methods = method_table(memory, {"ingest_file": confined_ingest(memory, roots)})
    mcp = build_server(memory)
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp", transport_security=_rebinding_guard(host)
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with mcp.session_manager.run():  # the MCP endpoint's sessions
            yield

    app = Starlette(
        exception_handlers={404: _refused, 405: _refused},
        routes=[
            Route("/v1/health", _health(token), methods=["GET"]),
            Route("/v1/{method}", _caller(methods, on_write), methods=["POST"]),
            Mount("/", app=_elsewhere(mcp_app)),
        ],
        lifespan=lifespan,
    )
    app.add_middleware(_TokenGate, token=token)
    return app


def _caller(
    methods: dict[str, tuple[Operation, Callable[..., Any]]],
    on_write: Callable[[], None] | None,
) -> Callable[[Request], Awaitable[Response]]:
    """The handler of ``POST /v1/METHOD``: checked arguments in, the encoded result (or the
    typed error) out; ``on_write`` after a method that writes."""

    async def call(request: Request) -> Response:
        name = request.path_params["method"]
        if name not in methods:
            return _error(NotFoundError(f"no method {name!r} (methods: {', '.join(methods)})"))
        op, fn = methods[name]
        try:
            args = await _arguments(request, op)
        except _TooLarge as exc:
            return _error(InputError(str(exc)), 413)
        except InputError as exc:
            return _error(exc)
        try:
            result = await anyio.to_thread.run_sync(lambda: fn(**args))
        except LocalMemError as exc:
            return _error(exc)
        except (TypeError, RecursionError) as exc:  # an argument the method did not check
            return _error(InputError(f"bad arguments for {name}: {exc}"))
        except Exception as exc:  # a fault of ours: say so (never its text), keep serving
            log.exception("unexpected error in %s", name)
            fault = f"unexpected {type(exc).__name__} in {name}; the server's log has the details"
            return _error(LocalMemError(fault), 500)
        if on_write is not None and op.writes:
            on_write()
        return JSONResponse({"result": wire.encode(result)})

    return call


def _health(token: str) -> Callable[[Request], Awaitable[Response]]:
    """The handler of ``GET /v1/health``: with ``?challenge=HEX``, the proof of the token."""

    async def health(request: Request) -> Response:
        challenge = request.query_params.get("challenge", "")
        if not challenge:
            return JSONResponse({"result": {}})
        if len(challenge) > MAX_CHALLENGE or not all(c in hexdigits for c in challenge):
            return _error(InputError(f"a challenge is at most {MAX_CHALLENGE} hex digits"))
        return JSONResponse({"result": {"proof": proof(token, challenge)}})

    return health


def _elsewhere(mcp_app: ASGIApp) -> ASGIApp:
    """The ASGI app behind every other path: /mcp goes to the MCP app; any other path is a
    typed 404."""

    async def elsewhere(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path == "/mcp" or path.startswith("/mcp/"):
            await mcp_app(scope, receive, send)
            return
        await _error(NotFoundError(f"nothing at {path}; the API is POST /v1/METHOD"))(
            scope, receive, send
        )

    return elsewhere


class _TokenGate:
    """Refuses every request without the store's token (the MCP endpoint included)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    def authorised(self, request: Request) -> bool:
        given = request.headers.get(TOKEN_HEADER, "").encode()
        return hmac.compare_digest(given, self.expected)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and scope.get("path") != "/v1/health"
            and not self.authorised(Request(scope))
        ):
            response = _error(LocalMemError("missing or wrong token"), 401)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


async def _refused(request: Request, exc: Exception) -> Response:
    """A path or verb the API has not: a typed 404 or 405."""
    status = getattr(exc, "status_code", 404)
    detail = f"{request.method} {request.url.path}: the API is POST /v1/METHOD"
    kind = NotFoundError(detail) if status == 404 else InputError(detail)
    return _error(kind, status)


def _rebinding_guard(host: str) -> Any:
    """The MCP endpoint's DNS-rebinding check: Host and Origin must name a loopback name or
    the address the server listens on (the SDK's default knows 127.0.0.1, localhost and ::1
    only, so ``--host 127.1.2.3`` answered every MCP request 421)."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = ["127.0.0.1", "localhost", "[::1]"]
    bound = f"[{host}]" if ":" in host else host
    if bound not in names:
        names.append(bound)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:*" for name in names],
        allowed_origins=[f"http://{name}:*" for name in names],
    )
