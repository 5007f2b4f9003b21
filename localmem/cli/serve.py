"""localmem serve: one process owns a store; the CLI, the MCP server and agents go through it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from localmem.console import add_store_argument, given_store


def register(sub: argparse._SubParsersAction) -> None:
    """Add the serve command."""
    p = sub.add_parser(
        "serve",
        help="own a store and serve it to other processes (CLI, agents, MCP) on localhost",
        description="Open a store and serve it on the loopback interface until interrupted. "
        "Other localmem commands, `localmem mcp`, `Memory.connect()` and MCP clients over "
        "HTTP (/mcp) find it through the store folder and use it instead of failing on the "
        "store's lock. Every request needs the token written to STORE/serve.token (readable by "
        "you only).",
    )
    add_store_argument(
        p,
        "the store folder or a postgresql:// address (default: $LOCALMEM_HOME/default, "
        "else ~/.localmem/default)",
    )
    p.add_argument("--host", default="127.0.0.1", help="a loopback address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="the port (default: any free one)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve until SIGINT or SIGTERM."""
    from localmem import Memory
    from localmem.config import default_store_path
    from localmem.errors import InputError
    from localmem.server.run import loopback_socket, serve

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port must be 0-65535, not {args.port}")
    from localmem.discovery import find_server
    from localmem.errors import StoreError

    args.store = given_store(args)
    loopback_socket(args.host, 0).close()  # refuse a non-loopback host before opening the store
    if args.store is not None and not args.store.strip():
        raise InputError("the store path is empty")
    from localmem.store.address import is_postgres, redact

    postgres = is_postgres(args.store)
    path = (
        args.store.strip()
        if postgres
        else (Path(args.store).expanduser() if args.store else default_store_path())
    )
    # a PostgreSQL store may have any number of servers (on several machines, or with their
    # own LOCALMEM_HOME), but one discovery file per home: a second would take it over
    if postgres:
        from localmem.store.postgres.store import local_folder

        running = find_server(local_folder(path))
    else:
        running = find_server(path)
    if running is not None:
        beside = " (from this LOCALMEM_HOME: give another server its own)" if postgres else ""
        raise StoreError(
            f"store {redact(path)} is already served by process {running.pid} at "
            f"{running.url}{beside}"
        )
    with Memory.open(path) as memory:
        serve(
            memory,
            host=args.host,
            port=args.port,
            ready=lambda url: print(
                f"localmem: serving {redact(path)} at {url}", file=sys.stderr, flush=True
            ),
        )
    return 0
