"""``localmem migrate-store SRC DST``: copy a store between a folder and PostgreSQL."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from localmem.console import CommandError, counted, print_json


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands."""
    p = sub.add_parser(
        "migrate-store",
        help="copy a store to another backend (a folder <-> postgresql://...), verified",
    )
    p.add_argument("src", metavar="SRC", help="the store to copy: a folder or postgresql://...")
    p.add_argument("dst", metavar="DST", help="a new, empty store: a folder or postgresql://...")
    p.add_argument("--samples", type=int, default=20, help="searches compared (default 20)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.set_defaults(func=cmd_migrate_store)


def _address(text: str) -> str | Path:
    from localmem.store.address import store_target

    if not text.strip():
        raise CommandError("a store address is empty")
    return store_target(text)


def cmd_migrate_store(args: argparse.Namespace) -> int:
    """localmem migrate-store"""
    from localmem.migrate import migrate_store

    report = migrate_store(_address(args.src), _address(args.dst), samples=args.samples)
    if args.json:
        print_json(report)
    else:
        rows = report["rows"]
        print(f"copied {report['from']} -> {report['to']}")
        print(
            f"  {counted(rows.get('memories', 0), 'memory')}; {counted(sum(rows.values()), 'row')} "
            f"in {counted(len(rows), 'table')}"
        )
        for mode, same in report["same_results"].items():
            print(f"  {mode:<8} {same}/{report['searches']} sampled searches identical")
    differ = sum(report["searches"] - n for n in report["same_results"].values())
    if differ:
        print(
            f"localmem: {differ} sampled search(es) differ (see above); the approximate "
            "indexes may order near-ties differently",
            file=sys.stderr,
        )
    return 0
