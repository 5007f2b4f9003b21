"""localmem demo: build the sample store and show search on it."""

from __future__ import annotations

import argparse

from localmem.console import counted, open_memory, short, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add the demo command."""
    p = sub.add_parser(
        "demo",
        parents=[store_options()],
        help="a sample store, searched",
        description="Fill the demo store with a sample (sessions, thoughts, messages) on first "
        "use and show a few searches on it. --store defaults to $LOCALMEM_HOME/demo (not your "
        "default store).",
    )
    for action in p._actions:  # its own parent parser: the default differs here
        if action.dest == "store":
            action.help = "the store folder (default: $LOCALMEM_HOME/demo)"
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
                f"demo store {mem.path}: {counted(added['sessions'], 'session')}, "
                f"{counted(added['thoughts'], 'thought')}, {counted(added['messages'], 'message')}"
            )
        for query in DEMO_QUERIES:
            result = mem.search(query, k=3)
            print(f"\n> {query}")
            for h in result.hits:
                print(f"  {h.rank}. {h.score:.4f}  {short(h.memory.content, 88)}")
            print("  " + result.explain().replace("\n", "\n  "))
    print(f'\nTry: localmem search "sliding window" --store {args.store} --explain')
    return 0
