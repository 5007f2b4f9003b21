"""Commands on single memories: add, show, list, history, delete, restore, purge."""

from __future__ import annotations

import argparse
import json

from localmem.console import (
    CommandError,
    json_option,
    open_memory,
    positive_int,
    print_json,
    read_content,
    short,
    store_options,
)
from localmem.types import KINDS


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands."""
    common = store_options()
    p = sub.add_parser("add", parents=[common], help="store a memory")
    p.add_argument("content", help="the text ('-' reads standard input)")
    p.add_argument("--kind", default="note", choices=KINDS, help="what it is (default note)")
    p.add_argument("--user", dest="user_id", help="the user it belongs to (default: none)")
    p.add_argument("--agent", dest="agent_id", help="the agent it belongs to (default: none)")
    p.add_argument(
        "--session", dest="session_id", help="an existing session it belongs to (default: none)"
    )
    p.add_argument("--event-time", help="when it happened (ISO-8601 with offset)")
    p.add_argument("--context", help="a description of the memory's context")
    p.add_argument("--metadata", help="a JSON object")
    p.add_argument("--mine", choices=("off", "inline", "deferred"), help="mine attributes")
    p.add_argument("--evolve", action="store_true", help="evolve related memories (A-Mem)")
    p.add_argument(
        "--dedupe",
        action="store_true",
        help="store nothing when the same text (kind, scope, event time) is already stored",
    )
    p.add_argument(
        "--infer",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="extract facts and reconcile them with the stored ones (add, update, supersede "
        "or skip; default: the store's infer.on_add); prints each decision",
    )
    p.add_argument("--speaker", help="with --infer: who said it ('I' becomes this name)")
    p.set_defaults(func=cmd_add)

    p = sub.add_parser("show", parents=[common], help="show a memory")
    p.add_argument("id", help="memory id, or a unique prefix of it (at least 4 characters)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("list", parents=[common], help="list memories, newest first")
    p.add_argument("--kind", choices=KINDS, help="only this kind (default: every kind)")
    p.add_argument("--session", dest="session_id", help="only this session's (default: all)")
    p.add_argument("--user", dest="user_id", help="only this user's (default: all)")
    p.add_argument("--limit", type=positive_int, default=20, help="at most this many (default 20)")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("history", parents=[common], help="every change of a memory")
    p.add_argument("id", help="memory id, or a unique prefix of it (at least 4 characters)")
    p.add_argument("--full", action="store_true", help="print old and new values in full")
    p.set_defaults(func=cmd_history)

    for name, helptext, func in (
        ("delete", "hide a memory (soft delete; `restore` undoes it)", cmd_delete),
        ("restore", "bring a deleted memory back", cmd_restore),
        ("purge", "erase a memory's text for good (privacy)", cmd_purge),
    ):
        p = sub.add_parser(name, parents=[common], help=helptext)
        p.add_argument("id", help="memory id, or a unique prefix of it (at least 4 characters)")
        if name == "purge":
            p.add_argument("--yes", action="store_true", help="do not ask")
        p.set_defaults(func=func)


def cmd_add(args: argparse.Namespace) -> int:
    """localmem add"""
    metadata = json_option(args.metadata, "--metadata")
    content = read_content(args.content)
    with open_memory(args) as mem:
        session_id = args.session_id
        if session_id:  # a typo must not start a session nobody opened (NotFoundError)
            session_id = mem.get_session(session_id).id
        fields = {
            "kind": args.kind,
            "user_id": args.user_id,
            "agent_id": args.agent_id,
            "session_id": session_id,
            "event_time": args.event_time,
            "context": args.context,
            "metadata": metadata,
            "mine": args.mine,
            "evolve": args.evolve or None,
        }
        if mem.infers(args.infer):
            if args.dedupe:
                raise CommandError("--dedupe and --infer do not go together (--infer dedupes)")
            _print_applied(mem.infer(content, speaker=args.speaker, **fields), args.json)
            return 0
        if args.speaker:
            raise CommandError("--speaker needs --infer")
        item = mem.add(content, dedupe=args.dedupe, infer=False, **fields)
        if args.json:
            print_json(item)
        else:
            print(item.id)
    return 0


def _print_applied(applied, as_json: bool) -> None:
    if as_json:
        print_json(applied)  # the one encoding of a decision (localmem.wire)
        return
    for a in applied:
        touched = f" (was {a.target.id}: {short(a.target.content, 50)})" if a.target else ""
        if a.event in ("NONE", "UPDATE"):
            touched = ""
        print(f"{a.event:<10} {a.memory.id}  {short(a.memory.content, 60)}{touched}")
        print(f"           why: {a.reason} [{a.decider}]")


def validity_line(item) -> str | None:
    """When a memory is (or was) true, for a person; None when it is simply current."""
    if item.valid_to is None:
        return None
    start = item.valid_from or item.when
    return (
        f"{start:%Y-%m-%d %H:%M} to {item.valid_to:%Y-%m-%d %H:%M} UTC, "
        f"superseded by {item.superseded_by}"
    )


def print_item(mem, item) -> None:
    """A memory in full, for a person."""
    print(f"id:         {item.id}")
    print(f"kind:       {item.kind} ({item.level})" + ("  [deleted]" if item.deleted else ""))
    for label, value in (
        ("user", item.user_id),
        ("agent", item.agent_id),
        ("session", item.session_id),
    ):
        if value:
            print(f"{label + ':':<11} {value}")
    print(f"created:    {item.created_at:%Y-%m-%d %H:%M:%S} UTC")
    if item.event_time:
        print(f"happened:   {item.event_time.isoformat()}")
    ended = validity_line(item)
    start = item.valid_from or item.when
    print(f"valid:      {ended}" if ended else f"valid:      since {start:%Y-%m-%d %H:%M} UTC")
    if item.metadata:
        print(f"metadata:   {json.dumps(item.metadata, ensure_ascii=False)}")
    print()
    print(item.content)
    if item.context:
        print(f"\ncontext: {item.context}")
    for section in SHOW_SECTIONS:
        section(mem, item)


#: extra sections of `localmem show` (attributes, links, ...): section(memory, item) prints
SHOW_SECTIONS: list = []


def cmd_show(args: argparse.Namespace) -> int:
    """localmem show"""
    with open_memory(args, create=False) as mem:
        item = mem.get(args.id, include_deleted=True)
        if args.json:
            print_json(item)
        else:
            print_item(mem, item)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """localmem list"""
    with open_memory(args, create=False) as mem:
        items = mem.list(
            kind=args.kind, session_id=args.session_id, user_id=args.user_id, limit=args.limit
        )
        if args.json:
            print_json(items)
            return 0
        for item in items:
            ended = "  [superseded]" if item.valid_to is not None else ""
            print(
                f"{item.id[:8]}  {item.kind:<9} {item.created_at:%Y-%m-%d}  "
                f"{short(item.content, 80)}{ended}"
            )
        if not items:
            print("(no memories)")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """localmem history"""
    with open_memory(args, create=False) as mem:
        events = mem.history(args.id)
        if args.json:
            print_json(events)
            return 0
        for e in events:
            what = f" {e.field}" if e.field else ""
            print(f"#{e.id} {e.at:%Y-%m-%d %H:%M:%S} {e.event}{what} by {e.actor}")
            width = 1_000_000 if args.full else 96
            if e.old_value is not None:
                print(f"    was: {short(e.old_value, width)}")
            if e.new_value is not None:
                print(f"    now: {short(e.new_value, width)}")
            if e.info and e.info.get("reason"):
                by = e.info.get("superseded_by")
                print(f"    why: {e.info['reason']} [{e.info.get('decider', '?')}]")
                if by:
                    print(f"    superseded by: {by}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    """localmem delete"""
    with open_memory(args, create=False) as mem:
        item = mem.delete(args.id)
        print_json({"deleted": item.id}) if args.json else print(f"deleted {item.id}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """localmem restore"""
    with open_memory(args, create=False) as mem:
        item = mem.restore(args.id)
        print_json({"restored": item.id}) if args.json else print(f"restored {item.id}")
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    """localmem purge"""
    if not args.yes:
        import sys

        if not sys.stdin.isatty():
            raise CommandError("purge erases text for good; pass --yes to confirm")
        answer = input(f"erase memory {args.id} for good? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing purged")
            return 1
    with open_memory(args, create=False) as mem:
        item = mem.get(args.id, include_deleted=True)
        mem.purge(item.id)
        print_json({"purged": item.id}) if args.json else print(f"purged {item.id}")
    return 0
