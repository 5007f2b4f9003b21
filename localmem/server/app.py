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
import functools
import hmac
import inspect
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from localmem import wire
from localmem.discovery import TOKEN_HEADER
from localmem.errors import InputError, LocalMemError, NotFoundError
from localmem.ingest import ingest_file
from localmem.mcp_server import build_server

if TYPE_CHECKING:
    from localmem.memory import Memory

log = logging.getLogger("localmem.server")

#: the largest request body accepted (a batch of add_many included)
MAX_BODY = 32 * 1024 * 1024

#: the Memory methods a client may call, by the name in the URL
METHODS: dict[str, Callable[[Memory], Callable[..., Any]]] = {
    name: (lambda n: lambda m: getattr(m, n))(name)
    for name in (
        "add",
        "add_many",
        "infer",
        "get",
        "get_many",
        "update",
        "delete",
        "restore",
        "purge",
        "history",
        "list",
        "count",
        "search",
        "start_session",
        "add_thought",
        "complete_session",
        "thoughts",
        "get_session",
        "sessions",
        "consolidate",
        "run_jobs",
        "stats",
        "status",
        "users",
        "links",
        "thought_of",
        "attributes_of",
        "sources_of",
    )
}
for _name in (
    "find",
    "record",
    "list",
    "matches",
    "versions",
    "history",
    "get",
    "retire",
    "restore",
):
    METHODS[f"procedures.{_name}"] = (lambda n: lambda m: getattr(m.procedures, n))(_name)
# properties and facts of the store, for clients that show it (the TUI)
METHODS["describe"] = lambda m: (
    lambda: {
        "path": str(m.path),
        "add_options": list(m.add_options),
        "stage_names": list(m.stage_names),
        "config": m.config.model_dump(mode="json"),
    }
)
# a file on this machine, read by the server (its path made absolute by the client)
METHODS["ingest_file"] = lambda m: functools.partial(ingest_file, m)

#: methods that never write (the job worker need not look at the queue after them)
_READS = {
    "get",
    "get_many",
    "history",
    "list",
    "count",
    "search",
    "stats",
    "status",
    "users",
    "links",
    "thought_of",
    "attributes_of",
    "describe",
    "thoughts",
    "get_session",
    "sessions",
    "procedures.find",
    "procedures.list",
    "procedures.matches",
    "procedures.versions",
    "procedures.history",
    "procedures.get",
    "sources_of",
}

#: arguments that are Python callables or in-process values: never from a client
_LOCAL_ONLY = {"progress", "also", "embedded", "on_write"}

_STATUS = {"InputError": 400, "NotFoundError": 404, "StoreLockedError": 409}


def _error(exc: LocalMemError, status: int | None = None) -> JSONResponse:
    name = type(exc).__name__
    return JSONResponse(
        {"error": wire.encode_error(exc)}, status_code=status or _STATUS.get(name, 500)
    )


def build_app(
    memory: Memory,
    token: str,
    *,
    instance: str = "",
    on_write: Callable[[], None] | None = None,
) -> Starlette:
    """The ASGI app serving ``memory`` to clients that present ``token``.

    ``instance`` is this server's random name, the one answer given without the token (at
    ``GET /v1/health``): a client checks it against the discovery file before it sends the
    token, so a stale file whose pid or port now belongs to another program is never trusted.
    ``on_write`` is called after every method that may have queued jobs (to wake the worker).
    """
    mcp = build_server(memory)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp")
    expected = f"Bearer {token}".encode()

    def authorised(request: Request) -> bool:
        given = request.headers.get(TOKEN_HEADER, "").encode()
        return hmac.compare_digest(given, expected)

    async def call(request: Request) -> Response:
        name = request.path_params["method"]
        if name not in METHODS:
            return _error(NotFoundError(f"no method {name!r} (methods: {', '.join(METHODS)})"))
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
            return _error(InputError(f"request body over {MAX_BODY} bytes"), 413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return _error(InputError(f"request body over {MAX_BODY} bytes"), 413)
        try:
            args = json.loads(body or b"{}")
        except (ValueError, UnicodeDecodeError) as exc:
            return _error(InputError(f"the request body is not JSON: {exc}"))
        if not isinstance(args, dict) or _LOCAL_ONLY & set(args):
            return _error(InputError("the arguments must be a JSON object of plain values"))
        fn = METHODS[name](memory)
        try:
            inspect.signature(fn).bind(**args)
        except TypeError as exc:
            return _error(InputError(f"bad arguments for {name}: {exc}"))
        try:
            result = await anyio.to_thread.run_sync(lambda: fn(**args))
        except LocalMemError as exc:
            return _error(exc)
        except TypeError as exc:  # an argument of the wrong kind the method did not check
            return _error(InputError(f"bad arguments for {name}: {exc}"))
        except Exception as exc:  # a fault of ours: say so, keep serving
            log.exception("unexpected error in %s", name)
            return _error(LocalMemError(f"unexpected {type(exc).__name__} in {name}: {exc}"), 500)
        if on_write is not None and name not in _READS:
            on_write()
        return JSONResponse({"result": wire.encode(result)})

    async def health(request: Request) -> Response:
        return JSONResponse({"result": {"instance": instance}})

    async def elsewhere(scope: dict, receive: Any, send: Any) -> None:
        """/mcp goes to the MCP app; any other path is a typed 404."""
        path = scope.get("path", "")
        if scope["type"] != "http" or path == "/mcp" or path.startswith("/mcp/"):
            await mcp_app(scope, receive, send)
            return
        await _error(NotFoundError(f"nothing at {path}; the API is POST /v1/METHOD"))(
            scope, receive, send
        )

    class TokenGate:
        """Refuses every request without the store's token (the MCP endpoint included)."""

        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
            if (
                scope["type"] == "http"
                and scope.get("path") != "/v1/health"
                and not authorised(Request(scope))
            ):
                response = _error(LocalMemError("missing or wrong token"), 401)
                await response(scope, receive, send)
                return
            await self.app(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        async with mcp.session_manager.run():  # the MCP endpoint's sessions
            yield

    async def refused(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        detail = f"{request.method} {request.url.path}: the API is POST /v1/METHOD"
        kind = NotFoundError(detail) if status == 404 else InputError(detail)
        return _error(kind, status)

    app = Starlette(
        exception_handlers={404: refused, 405: refused},
        routes=[
            Route("/v1/health", health, methods=["GET"]),
            Route("/v1/{method}", call, methods=["POST"]),
            Mount("/", app=elsewhere),
        ],
        lifespan=lifespan,
    )
    app.add_middleware(TokenGate)
    return app
