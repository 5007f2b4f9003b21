"""``localmem forget``: every memory of a user, agent or session hidden at once, or (with
``--purge``) erased for good: how a person is forgotten entirely."""

from __future__ import annotations

import argparse
import sys

from localmem.console import CommandError, open_memory, print_json, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands."""
    p = sub.add_parser(
        "forget",
        parents=[store_options()],
        help="delete (or --purge: erase for good) every memory of a user, agent or session",
    )
    p.add_argument("--user", dest="user_id", help="forget this user's memories")
    p.add_argument("--agent", dest="agent_id", help="forget this agent's memories")
    p.add_argument("--session", dest="session_id", help="forget this session's memories")
    p.add_argument("--purge", action="store_true", help="erase text and vectors for good")
    p.add_argument("--yes", action="store_true", help="do not ask before --purge")
    p.set_defaults(func=cmd_forget)


def cmd_forget(args: argparse.Namespace) -> int:
    """localmem forget"""
    scope = {
        key: value
        for key, value in (
            ("user_id", args.user_id),
            ("agent_id", args.agent_id),
            ("session_id", args.session_id),
        )
        if value is not None
    }
    if not scope:
        raise CommandError("name the scope to forget: --user, --agent or --session")
    if args.purge and not args.yes:
        if not sys.stdin.isatty():
            raise CommandError("--purge erases text for good; pass --yes to confirm")
        named = ", ".join(f"{k.removesuffix('_id')} {v}" for k, v in scope.items())
        if input(f"erase every memory of {named} for good? [y/N] ").strip().lower() not in (
            "y",
            "yes",
        ):
            print("nothing forgotten")
            return 1
    with open_memory(args, create=False) as mem:
        n = (mem.purge_all if args.purge else mem.delete_all)(**scope)
    verb = "purged" if args.purge else "deleted"
    print_json({verb: n}) if args.json else print(f"{verb} {n} memories")
    return 0
