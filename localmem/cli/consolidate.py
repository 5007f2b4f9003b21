"""localmem consolidate: episodic memories -> semantic facts -> meta patterns."""

from __future__ import annotations

import argparse

from localmem.cli.memories import SHOW_SECTIONS
from localmem.console import open_memory, print_json, short, store_options
from localmem.types import DERIVED_FROM


def register(sub: argparse._SubParsersAction) -> None:
    """Add the consolidate command."""
    p = sub.add_parser(
        "consolidate",
        parents=[store_options()],
        help="summarise episodic memories into semantic facts and meta patterns",
    )
    p.add_argument("--user", dest="user_id", help="whose memories (default: those without one)")
    p.add_argument("--agent", dest="agent_id", help="only this agent's memories")
    p.add_argument(
        "--within", choices=("scope", "session"), help="session: never mix sessions in a cluster"
    )
    p.add_argument("--window-days", type=float, help="never cluster memories further apart")
    p.add_argument("--threshold", type=float, help="least average similarity in a cluster")
    p.add_argument(
        "--implementation",
        choices=("auto", "model", "model-free"),
        help="the engine, extraction without a model, or auto (default from config)",
    )
    p.add_argument("--no-meta", action="store_true", help="write no meta memories")
    p.add_argument("--dry-run", action="store_true", help="show what would be written")
    p.set_defaults(func=cmd_consolidate)


def cmd_consolidate(args: argparse.Namespace) -> int:
    """localmem consolidate"""
    with open_memory(args, create=False) as mem:
        report = mem.consolidate(
            user_id=args.user_id,
            agent_id=args.agent_id,
            within=args.within,
            window_days=args.window_days,
            threshold=args.threshold,
            implementation=args.implementation,
            meta=not args.no_meta,
            dry_run=args.dry_run,
        )
    if args.json:
        print_json(report)
        return 0
    print(report.summary())
    for item in (*report.semantic, *report.meta):
        ident = "(new)" if report.dry_run else item.id[:8]
        print(f"  {item.level:<8} {ident:<8} {short(item.content, 90)}")
        print(f"           from {len(item.sources)}: {' '.join(s[:8] for s in item.sources)}")
    for warning in report.warnings:
        print(f"  warning: {warning}")
    if not report.changed:
        print("nothing new to consolidate")
    return 0


def show_provenance(mem, item) -> None:
    """`localmem show`: what a consolidated memory was made from, and what was made from it."""
    sources = mem.sources_of([item.id]).get(item.id, [])  # the API: answered by a server too
    if sources:
        print(f"\nderived from ({len(sources)}):")
        for other in mem.get_many(sources):
            gone = " [deleted]" if other.deleted else ""
            print(f"  <- {other.id[:8]} {other.level:<8} {short(other.content, 70)}{gone}")
    # the links of the API (a served store answers too)
    into = [x.other for x in mem.links(item.id) if x.kind == DERIVED_FROM and x.direction == "from"]
    live = [other for other in mem.get_many(into) if not other.deleted]
    if live:
        print(f"\nconsolidated into ({len(live)}):")
        for other in live:
            print(f"  -> {other.id[:8]} {other.level:<8} {short(other.content, 70)}")


SHOW_SECTIONS.append(show_provenance)
