"""Commands of memory evolution (A-Mem): evolve, revert, and the links section of `show`."""

from __future__ import annotations

import argparse

from localmem.cli.memories import SHOW_SECTIONS
from localmem.console import CommandError, open_memory, print_json, short, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands."""
    common = store_options()
    p = sub.add_parser(
        "evolve", parents=[common], help="evolve memories' neighbours now, or run queued evolution"
    )
    p.add_argument("id", nargs="?", help="a memory whose older neighbours to evolve")
    p.add_argument("--pending", action="store_true", help="run the queued evolution jobs")
    p.add_argument("--limit", type=int, help="run at most this many queued jobs")
    p.set_defaults(func=cmd_evolve)

    p = sub.add_parser(
        "revert", parents=[common], help="undo the evolution of a memory's context (recorded)"
    )
    p.add_argument("id", help="memory id, or a unique prefix of it (at least 4 characters)")
    p.add_argument(
        "--to",
        type=int,
        metavar="EVENT_ID",
        help="go back to the context before this history event (see `localmem history ID`)",
    )
    p.set_defaults(func=cmd_revert)


def _step_dict(step) -> dict:
    return {
        "neighbour": step.neighbour,
        "rank": step.rank,
        "similarity": step.similarity,
        "status": step.status,
        "reason": step.reason,
        "served_by": step.served_by,
        "tokens": step.tokens,
        "history_id": step.history_id,
    }


def cmd_evolve(args: argparse.Namespace) -> int:
    """localmem evolve"""
    from localmem import evolution

    if bool(args.id) == bool(args.pending):
        raise CommandError("give a memory id or --pending (not both)")
    if args.limit is not None and (args.limit < 1 or not args.pending):
        raise CommandError("--limit goes with --pending and must be 1 or more")
    with open_memory(args, create=False) as mem:
        if args.pending:
            report = evolution.run_pending(mem, limit=args.limit)
            if args.json:
                print_json(report)
            else:
                print(
                    f"{report.done} done, {report.failed} failed, {report.dropped} dropped, "
                    f"{report.remaining} remaining"
                )
            return 0 if report.failed == 0 else 1
        item = mem.get(args.id)
        steps = evolution.evolve(mem, item.id)
        if args.json:
            print_json({"source": item.id, "steps": [_step_dict(s) for s in steps]})
            return 0
        if not steps:
            print(f"{item.id}: no older memory is similar enough to evolve")
        for s in steps:
            reason = s.reason or ""
            print(f"{s.rank}. {s.neighbour[:8]}  {s.status:<11} {s.similarity:.2f}  {reason}")
    return 0


def cmd_revert(args: argparse.Namespace) -> int:
    """localmem revert"""
    from localmem import evolution

    with open_memory(args, create=False) as mem:
        item = evolution.revert(mem, args.id, to=args.to)
        if args.json:
            print_json({"id": item.id, "context": item.context})
        else:
            print(f"reverted {item.id}; context now: {item.context or '(none)'}")
    return 0


def show_evolution(mem, item) -> None:
    """`localmem show`: the memory's links and how often its context changed."""
    found = mem.links(item.id)  # the API: answered by a server too
    if found:
        others = {o.id: o for o in mem.get_many([x.other for x in found])}
        print(f"\nlinks ({len(found)}):")
        for link in found:
            arrow = "->" if link.direction == "to" else "<-"
            other = others[link.other]
            gone = " [deleted]" if other.deleted else ""
            print(f"  {arrow} {link.other[:8]}  {short(other.content, 60)}{gone}")
            if link.reason:
                print(f"       {short(link.reason, 90)}")
    if item.deleted or not hasattr(mem, "kernel"):  # served: no context versions in the API
        return
    from localmem import evolution

    versions = evolution.context_versions(mem, item.id)
    if len(versions) > 1:
        kinds = ", ".join(f"{v.event} #{v.event_id}" for v in versions[1:])
        print(f"\ncontext versions: {len(versions)} ({kinds}); `localmem history {item.id[:8]}`")


SHOW_SECTIONS.append(show_evolution)
