"""``localmem export`` and ``localmem import``: a store to JSON lines and back, and memories
exported from mem0 into a store (:mod:`localmem.backup`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from localmem.console import CommandError, open_memory, print_json, store_options, store_path


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands."""
    common = store_options()
    p = sub.add_parser(
        "export",
        parents=[common],
        help="write the whole store as JSON lines (consistent, also while a server holds it)",
    )
    p.add_argument("-o", "--output", help="the file to write (default: standard output)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import",
        parents=[common],
        help="load an export into a new store; `import mem0 FILE` adds mem0's get_all output",
    )
    p.add_argument(
        "source",
        nargs="+",
        metavar="[mem0] FILE",
        help="a localmem export (JSON lines), or `mem0` and a JSON file of mem0's memories",
    )
    p.set_defaults(func=cmd_import)


def cmd_export(args: argparse.Namespace) -> int:
    """localmem export"""
    from localmem.backup import write_export

    with open_memory(args, create=False) as mem:
        if args.output:
            with open(args.output, "w", encoding="utf-8") as out:
                counts = write_export(mem, out)
        else:
            counts = write_export(mem, sys.stdout)
    if args.output:
        summary = {"file": args.output, "rows": counts}
        if args.json:
            print_json(summary)
        else:
            print(
                f"exported {counts.get('memories', 0)} memories to {args.output}", file=sys.stderr
            )
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """localmem import [mem0] FILE"""
    from localmem import backup

    file = Path(args.source[-1])
    if not file.is_file():
        raise CommandError(f"no such file: {file}")
    if len(args.source) == 2 and args.source[0] == "mem0":
        try:
            with open(args.source[1], encoding="utf-8") as f:
                data = json.load(f)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{args.source[1]}: not JSON ({exc.msg})") from None
        with open_memory(args) as mem:
            added = backup.import_mem0(mem, data)
        if args.json:
            print_json({"added": added})
        else:
            print(f"imported {added} memories from mem0")
        return 0
    if len(args.source) != 1:
        raise CommandError("give one export file, or `mem0` and a file of mem0's memories")
    path = store_path(args)
    from localmem.discovery import find_server

    if not isinstance(path, str) and find_server(path) is not None:
        raise CommandError("a server holds this store; import into a new store, not a served one")
    counts = backup.import_export(path, backup.read_lines(args.source[0]))
    if args.json:
        print_json({"rows": counts})
    else:
        print(f"imported {counts.get('memories', 0)} memories ({sum(counts.values())} rows)")
    return 0
