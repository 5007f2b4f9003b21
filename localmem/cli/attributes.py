"""MemInsight commands: ``localmem attributes`` (see or mine one memory's attributes, or a
text's) and ``localmem mine`` (mine the memories that need it); plus the attributes section of
``localmem show``."""

from __future__ import annotations

import argparse

from localmem.console import CommandError, Progress, counted, open_memory, print_json, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands and the `show` section."""
    from localmem.cli.memories import SHOW_SECTIONS

    common = store_options()
    p = sub.add_parser(
        "attributes",
        parents=[common],
        help="a memory's mined attributes (entities, intent, topic, priority)",
        description="Show the attributes of a memory (ID), mine them again (--mine), or mine "
        "a text without storing it (--text). Without arguments: how much of the store is mined.",
    )
    p.add_argument("id", nargs="?", help="memory id or a unique prefix of it")
    p.add_argument("--text", help="mine this text instead (nothing is stored)")
    p.add_argument("--query", action="store_true", help="mine --text as a search query")
    p.add_argument("--mine", action="store_true", help="mine the memory again now")
    p.add_argument("--miner", choices=("auto", "model-free", "engine"), help="which miner")
    p.set_defaults(func=cmd_attributes)

    p = sub.add_parser(
        "mine",
        parents=[common],
        help="mine attributes for the memories that need them",
        description="Queue a mining job for every memory without attributes (or stale / all) "
        "and run them, unless --deferred (then `localmem jobs run` does).",
    )
    p.add_argument(
        "--which",
        choices=("missing", "stale", "outdated", "all"),
        default="missing",
        help="missing: never mined (default); stale: text changed since; outdated: both",
    )
    p.add_argument("--miner", choices=("auto", "model-free", "engine"), help="which miner")
    p.add_argument("--limit", type=int, help="at most this many memories")
    p.add_argument("--deferred", action="store_true", help="only queue the jobs")
    p.set_defaults(func=cmd_mine)

    if show_attributes not in SHOW_SECTIONS:
        SHOW_SECTIONS.append(show_attributes)


def _rows(mined) -> list[dict]:
    return [
        {
            "axis": a.axis,
            "value": a.value,
            "rank": a.rank,
            "score": a.score,
            "priority": a.priority,
            "terms": list(a.terms),
        }
        for a in sorted(mined.attributes, key=lambda a: (_AXES.index(a.axis), a.rank))
    ]


_AXES = ("entities", "intent", "topic")


def print_mined(mined, *, indent: str = "") -> None:
    """Attributes for a person: one line per axis, then the priority ranking."""
    for axis in _AXES:
        values = mined.axis(axis)
        if values:
            shown = ", ".join(f"{a.value} ({a.score:.2f})" for a in values)
            print(f"{indent}{axis + ':':<10} {shown}")
        elif axis != "entities":  # the miner abstained: no label was clearly best
            print(f"{indent}{axis + ':':<10} (no label clearly best)")
    ranked = mined.priority
    if ranked:
        print(f"{indent}{'priority:':<10} " + " > ".join(a.value for a in ranked))


def show_attributes(mem, item) -> None:
    """The attributes section of `localmem show`."""
    found = mem.attributes_of([item.id]).get(item.id)  # the API: answered by a server too
    print("\nattributes:")
    if found is None:
        print("  (not mined: `localmem attributes ID --mine` or `localmem mine`)")
        return
    stale = " [stale: the text changed since]" if found.stale(item.content_hash) else ""
    print(f"  mined by {found.mined.miner} with labels '{found.mined.label_set}'{stale}")
    print_mined(found.mined, indent="  ")


def cmd_attributes(args: argparse.Namespace) -> int:
    """localmem attributes"""
    from localmem.attributes import counts, mine_now, miner_for, stored

    if args.text is not None and args.id:
        raise CommandError("give a memory id or --text, not both")
    if args.query and args.text is None:
        raise CommandError("--query goes with --text")
    with open_memory(args, create=False) as mem:
        if args.text is not None:
            if not args.text.strip():
                raise CommandError("--text is empty")
            mined = miner_for(mem, args.miner).mine(args.text, query=args.query)
            if args.json:
                print_json(
                    {"miner": mined.miner, "label_set": mined.label_set, "attributes": _rows(mined)}
                )
            else:
                print(f"mined by {mined.miner} with labels '{mined.label_set}'")
                print_mined(mined)
            return 0
        if not args.id:
            found = counts(mem)
            if args.json:
                print_json(found)
            else:
                print(
                    f"{found['mined']} of {counted(found['memories'], 'memory')} mined "
                    f"({found['unmined']} not yet, {found['stale']} stale)"
                )
                for miner, n in found["by_miner"].items():
                    print(f"  {miner:<24}{n}")
            return 0
        item = mem.get(args.id)
        if args.mine:
            mine_now(mem, item.id, miner=args.miner)
        held = stored(mem, [item.id]).get(item.id)
        if args.json:
            print_json(
                {
                    "id": item.id,
                    "mined": held is not None,
                    "miner": held.mined.miner if held else None,
                    "label_set": held.mined.label_set if held else None,
                    "stale": held.stale(item.content_hash) if held else None,
                    "mined_at": held.mined_at if held else None,
                    "attributes": _rows(held.mined) if held else [],
                }
            )
        else:
            show_attributes(mem, item)
    return 0


def cmd_mine(args: argparse.Namespace) -> int:
    """localmem mine"""
    from localmem.attributes import mine_pending, queue_mining

    if args.limit is not None and args.limit < 1:
        raise CommandError("--limit must be 1 or more")
    with open_memory(args, create=False) as mem:
        jobs = queue_mining(mem, which=args.which, miner=args.miner, limit=args.limit)
        if args.deferred:
            report = {"queued": len(jobs)}
        else:
            report = {"queued": len(jobs), **mine_pending(mem, jobs, progress=Progress("mine"))}
        if args.json:
            print_json(report)
        elif args.deferred:
            print(f"{counted(len(jobs), 'mining job')} queued; run them with `localmem jobs run`")
        else:
            print(
                f"{report['done']} mined, {report['failed']} failed, {report['dropped']} dropped"
                + (" (retry with `localmem jobs retry --kind mine`)" if report["failed"] else "")
            )
        return 0 if not report.get("failed") else 1
