"""localmem demo: build the sample store and show search on it."""

from __future__ import annotations

import argparse

from localmem.console import open_memory, short, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add the demo command."""
    p = sub.add_parser("demo", parents=[store_options()], help="a sample store, searched")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    """localmem demo"""
    from localmem.demo import DEMO_QUERIES, load_demo

    if not args.store:
        from localmem.config import localmem_home

        args.store = str(localmem_home() / "demo")
    with open_memory(args) as mem:
        if mem.count() == 0:
            added = load_demo(mem)
            print(
                f"demo store {mem.path}: {added['sessions']} sessions, "
                f"{added['thoughts']} thoughts, {added['messages']} messages"
            )
        for query in DEMO_QUERIES:
            result = mem.search(query, k=3)
            print(f"\n> {query}")
            for h in result.hits:
                print(f"  {h.rank}. {h.score:.4f}  {short(h.memory.content, 88)}")
            print("  " + result.explain().replace("\n", "\n  "))
    print(f'\nTry: localmem search "sliding window" --store {args.store} --explain')
    return 0
