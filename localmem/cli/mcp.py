"""localmem mcp: the store as an MCP server over stdio (for Claude Desktop, Cursor, agents)."""

from __future__ import annotations

import argparse

from localmem.console import CommandError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the mcp command."""
    p = sub.add_parser(
        "mcp",
        help="serve a store to MCP clients over stdio (an agent's memory)",
        description="Run an MCP server over standard input and output on a store: tools to add, "
        "search, get, update, delete and list memories, sessions of thoughts, procedures and "
        "consolidation. An MCP client (Claude Desktop, Claude Code, Cursor...) starts this "
        "command itself; see the README for its configuration.",
    )
    p.add_argument(
        "store",
        nargs="?",
        metavar="STORE",
        help="the store folder (default: $LOCALMEM_HOME/default, else ~/.localmem/default)",
    )
    p.add_argument("--store", dest="store_option", metavar="PATH", help="the same, as an option")
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve until the client disconnects."""
    try:
        from localmem.mcp_server import serve_stdio
    except ImportError as exc:  # the SDK is a dependency; a broken install says so
        raise CommandError(f"the MCP server needs the mcp package ({exc})") from None
    from localmem import Memory
    from localmem.config import default_store_path
    from localmem.discovery import find_server
    from localmem.remote import connect

    if args.store is not None and args.store_option is not None:
        raise CommandError("give the store once: STORE or --store")
    given = args.store if args.store is not None else args.store_option
    if given is not None and not given.strip():
        raise CommandError("the store path is empty")
    from localmem.store.address import StoreAddress

    address = StoreAddress.parse(given if given is not None else default_store_path())
    path = address.folder
    if path is None:  # PostgreSQL: a database serves any number of processes: open it directly
        with Memory.open(address, actor="mcp") as memory:
            serve_stdio(memory)
        return 0
    if find_server(path) is not None:  # `localmem serve` holds the store: go through it
        serve_stdio(connect(path))
        return 0
    with Memory.open(path, actor="mcp") as memory:
        serve_stdio(memory)
    return 0
