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
    p.add_argument(
        "--ingest-dir",
        dest="ingest_dirs",
        action="append",
        metavar="DIR",
        help="a folder whose files clients may have the server ingest (repeatable; default: "
        "your home folder; hidden files and folders are never read)",
    )
    p.add_argument(
        "--no-ingest", action="store_true", help="read no files for clients (ingest in process)"
    )
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
    from localmem.store.address import StoreAddress

    address = StoreAddress.parse(args.store if args.store else default_store_path())
    postgres = address.is_postgres
    folder = address.folder  # None for a PostgreSQL store
    path: str | Path = args.store.strip() if folder is None else folder
    # a PostgreSQL store may have any number of servers (on several machines, or with their
    # own LOCALMEM_HOME), but one discovery file per home: a second would take it over
    if folder is None:
        from localmem.store.postgres.store import local_folder

        running = find_server(local_folder(address))
    else:
        running = find_server(folder)
    if running is not None:
        beside = " (from this LOCALMEM_HOME: give another server its own)" if postgres else ""
        raise StoreError(
            f"store {address.shown} is already served by process {running.pid} at "
            f"{running.url}{beside}"
        )
    if args.no_ingest and args.ingest_dirs:
        raise InputError("give --ingest-dir or --no-ingest, not both")
    roots = None
    if args.no_ingest:
        roots = []
    elif args.ingest_dirs:
        roots = [Path(d).expanduser().resolve() for d in args.ingest_dirs]
        missing = [str(d) for d in roots if not d.is_dir()]
        if missing:
            raise InputError(f"--ingest-dir {missing[0]} is not a folder")
    with Memory.open(path, actor="server") as memory:
        serve(
            memory,
            ingest_roots=roots,
            host=args.host,
            port=args.port,
            ready=lambda url: print(
                f"localmem: serving {address.shown} at {url}", file=sys.stderr, flush=True
            ),
        )
    return 0
