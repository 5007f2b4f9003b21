"""localmem session: start a session of thoughts, add thoughts, complete it (and abstract it)."""

from __future__ import annotations

import argparse

from localmem.console import counted, open_memory, print_json, read_content, short, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add `localmem session ...`."""
    common = store_options()
    p = sub.add_parser("session", help="sessions of thoughts (reasoning episodes)")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    a = actions.add_parser("start", parents=[common], help="open a session; prints its id")
    a.add_argument("title", help="the task or goal of the session")
    a.add_argument("--user", dest="user_id", help="the user it is for (default: none)")
    a.add_argument("--agent", dest="agent_id", help="the agent working on it (default: none)")
    a.set_defaults(func=cmd_start)

    a = actions.add_parser("thought", parents=[common], help="add the next thought")
    a.add_argument(
        "session_id", help="session id, or a unique prefix of it (at least 4 characters)"
    )
    a.add_argument("content", help="the thought ('-' reads standard input)")
    a.add_argument("--revises", type=int, help="the number of the thought it revises")
    a.add_argument("--branch", dest="branch_id", help="the branch it is on")
    a.add_argument("--branch-from", type=int, help="the thought the branch starts from")
    a.set_defaults(func=cmd_thought)

    a = actions.add_parser("complete", parents=[common], help="close a session with its outcome")
    a.add_argument(
        "session_id", help="session id, or a unique prefix of it (at least 4 characters)"
    )
    a.add_argument(
        "--outcome", choices=("success", "failure"), default="success", help="(default success)"
    )
    a.add_argument("--notes", help="what was learned, in a sentence (default: none)")
    a.add_argument("--abstract", action="store_true", help="abstract it into a procedure")
    a.add_argument(
        "--level",
        choices=("concrete", "abstract", "hybrid"),
        help="with --abstract: how general the procedure is (default: the store's)",
    )
    a.set_defaults(func=cmd_complete)

    a = actions.add_parser("show", parents=[common], help="a session and its thoughts")
    a.add_argument(
        "session_id", help="session id, or a unique prefix of it (at least 4 characters)"
    )
    a.set_defaults(func=cmd_show)

    a = actions.add_parser("list", parents=[common], help="sessions, newest first")
    a.add_argument("--status", choices=("open", "completed"), help="only these (default: all)")
    a.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    a.set_defaults(func=cmd_list)


def cmd_start(args: argparse.Namespace) -> int:
    """localmem session start"""
    with open_memory(args) as mem:
        session = mem.start_session(args.title, user_id=args.user_id, agent_id=args.agent_id)
    print_json(session) if args.json else print(session.id)
    return 0


def cmd_thought(args: argparse.Namespace) -> int:
    """localmem session thought"""
    content = read_content(args.content)
    with open_memory(args, create=False) as mem:
        thought = mem.add_thought(
            args.session_id,
            content,
            revises=args.revises,
            branch_id=args.branch_id,
            branch_from=args.branch_from,
        )
    if args.json:
        print_json({"id": thought.memory.id, "number": thought.number})
    else:
        print(f"{thought.number} {thought.memory.id}")
    return 0


def cmd_complete(args: argparse.Namespace) -> int:
    """localmem session complete"""
    with open_memory(args, create=False) as mem:
        session = mem.complete_session(
            args.session_id,
            args.outcome,
            notes=args.notes,
            abstract=args.abstract,
            level=args.level,
        )
        pid = session.metadata.get("procedure_id")
        proc = mem.procedures.get(pid) if pid else None
    if args.json:
        print_json({"session": session, "procedure": proc})
        return 0
    thoughts = counted(session.thought_count, "thought")
    print(f"completed {session.id} ({session.outcome}, {thoughts})")
    if proc:
        print(f"procedure {proc.id} ({proc.task_type}, {proc.level}, by {proc.served_by}):")
        print(f"  when: {proc.trigger}")
        for i, step in enumerate(proc.steps, 1):
            print(f"  {i}. {step}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """localmem session show"""
    with open_memory(args, create=False) as mem:
        session = mem.get_session(args.session_id)
        thoughts = mem.thoughts(session.id)
    if args.json:
        print_json({"session": session, "thoughts": thoughts})
        return 0
    outcome = f", {session.outcome}" if session.outcome else ""
    print(f"{session.id}  {session.title}  ({session.status}{outcome})")
    for t in thoughts:
        where = f" [{t.branch_id}]" if t.branch_id else ""
        revises = f" (revises {t.revises})" if t.revises else ""
        print(f"  {t.number}.{where}{revises} {t.memory.content}")
    if session.metadata.get("procedure_id"):
        print(f"procedure: {session.metadata['procedure_id']}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """localmem session list"""
    with open_memory(args, create=False) as mem:
        found = mem.sessions(status=args.status, limit=args.limit)
    if args.json:
        print_json(found)
        return 0
    for s in found:
        outcome = f" {s.outcome}" if s.outcome else ""
        thoughts = counted(s.thought_count, "thought")
        print(f"{s.id}  {s.status}{outcome:<9} {thoughts:>12}  {short(s.title, 60)}")
    if not found:
        print("(no sessions)")
    return 0
