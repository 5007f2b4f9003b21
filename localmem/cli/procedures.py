"""localmem procedures: list, show, find, record, abstract, retire and restore procedures."""

from __future__ import annotations

import argparse
from pathlib import Path

from localmem.cli import memories
from localmem.console import CommandError, open_memory, print_json, short, store_options


def register(sub: argparse._SubParsersAction) -> None:
    """Add `localmem procedures ...`."""
    common = store_options()
    p = sub.add_parser("procedures", help="procedural memory (Mem^p): procedures from sessions")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    a = actions.add_parser("list", parents=[common], help="procedures, newest first")
    a.add_argument(
        "--status", choices=("active", "retired", "all"), default="active", help="(default active)"
    )
    a.add_argument("--type", dest="task_type", help="only this task type")
    a.add_argument("--session", dest="session_id", help="only those from this session")
    a.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    a.set_defaults(func=cmd_list)

    a = actions.add_parser("show", parents=[common], help="a procedure, its versions and uses")
    a.add_argument("id", help="procedure id, or a unique prefix of it (at least 4 characters)")
    a.add_argument("--render", action="store_true", help="print the prompt block only")
    a.set_defaults(func=cmd_show)

    a = actions.add_parser("find", parents=[common], help="the procedure for a task, if any")
    a.add_argument("task", help="the task about to be solved")
    a.add_argument("--threshold", type=float, help="least score (default from config)")
    a.add_argument("--type", dest="task_type", help="the task's type ('any' ignores types)")
    a.add_argument("-k", type=int, default=0, help="show the k best with their scores instead")
    a.add_argument("--many", action="store_true", help="one procedure per part of the task")
    a.add_argument("--render", action="store_true", help="print the prompt block")
    a.set_defaults(func=cmd_find)

    a = actions.add_parser("record", parents=[common], help="record a use (success or failure)")
    a.add_argument("id", help="procedure id, or a unique prefix of it (at least 4 characters)")
    outcome = a.add_mutually_exclusive_group(required=True)
    outcome.add_argument(
        "--success", action="store_true", dest="success", default=None, help="it worked"
    )
    outcome.add_argument("--failure", action="store_false", dest="success", help="it did not")
    a.add_argument("--session", dest="session_id", help="the session of the attempt")
    a.add_argument("--trace", type=Path, help="a text file, one thought per line")
    a.add_argument("--task", help="the task it was used for")
    a.add_argument("--note", help="what went wrong")
    a.add_argument("--no-reflect", action="store_true", help="count the use only")
    a.set_defaults(func=cmd_record)

    a = actions.add_parser("abstract", parents=[common], help="abstract a completed session")
    a.add_argument(
        "session_id", help="session id, or a unique prefix of it (at least 4 characters)"
    )
    a.add_argument(
        "--level",
        choices=("concrete", "abstract", "hybrid"),
        help="how general the procedure is (default: the store's)",
    )
    a.set_defaults(func=cmd_abstract)

    a = actions.add_parser("retire", parents=[common], help="take a procedure out of find")
    a.add_argument("id", help="procedure id, or a unique prefix of it (at least 4 characters)")
    a.add_argument("--reason", help="why, kept in its history (default: none)")
    a.set_defaults(func=cmd_retire)

    a = actions.add_parser("restore", parents=[common], help="bring a retired procedure back")
    a.add_argument("id", help="procedure id, or a unique prefix of it (at least 4 characters)")
    a.add_argument("--reset-counts", action="store_true", help="start its record afresh")
    a.set_defaults(func=cmd_restore)


def _line(p) -> str:
    rate = f"{p.success_count}/{p.use_count}" if p.use_count else "unused"
    flag = " [retired]" if p.retired else ""
    return f"{p.id}  {p.task_type:<13} v{p.version} {rate:<7} {short(p.trigger, 70)}{flag}"


def cmd_list(args: argparse.Namespace) -> int:
    """localmem procedures list"""
    status = None if args.status == "all" else args.status
    with open_memory(args, create=False) as mem:
        procs = mem.procedures.list(
            status=status, task_type=args.task_type, session_id=args.session_id, limit=args.limit
        )
    if args.json:
        print_json(procs)
        return 0
    for p in procs:
        print(_line(p))
    if not procs:
        print("(no procedures)")
    return 0


def print_procedure(proc, versions, events) -> None:
    """A procedure in full, for a person."""
    print(f"id:        {proc.id}  ({proc.status}, version {proc.version}, {proc.level})")
    print(f"type:      {proc.task_type}")
    print(f"trigger:   {proc.trigger}")
    rate = f"{proc.success_rate:.0%}" if proc.success_rate is not None else "-"
    counts = f"{proc.success_count} ok, {proc.failure_count} failed, {rate}"
    print(f"uses:      {proc.use_count} ({counts})")
    if proc.source_session_id:
        print(f"session:   {proc.source_session_id}")
    print(f"memory:    {proc.memory_id}")
    print(f"written:   by {proc.served_by}")
    print("\nsteps:")
    for i, step in enumerate(proc.steps, 1):
        print(f"  {i}. {step}")
    if proc.example:
        print(f"\nexample: {proc.example}")
    for caveat in proc.caveats:
        print(f"caution: {caveat}")
    if len(versions) > 1:
        print("\nversions:")
        for v in versions:
            why = short(v.reason or "", 80)
            print(f"  v{v.version} {v.created_at:%Y-%m-%d %H:%M} by {v.served_by}: {why}")
    print("\nhistory:")
    for e in events:
        ok = "" if e.success is None else (" success" if e.success else " failure")
        print(f"  {e.at:%Y-%m-%d %H:%M:%S} {e.event} v{e.version}{ok}")


def cmd_show(args: argparse.Namespace) -> int:
    """localmem procedures show"""
    with open_memory(args, create=False) as mem:
        proc = mem.procedures.get(args.id)
        versions = mem.procedures.versions(proc.id)
        events = mem.procedures.history(proc.id)
    if args.json:
        print_json({"procedure": proc, "versions": versions, "history": events})
    elif args.render:
        from localmem.procedures.model import render  # the package pulls in DuckDB: lazily

        print(render(proc))
    else:
        print_procedure(proc, versions, events)
    return 0


def _match_dict(m) -> dict:
    return {
        "id": m.procedure.id,
        "score": round(m.score, 4),
        "similarity": round(m.similarity, 4),
        "task_type": m.task_type,
        "type_match": m.type_match,
        "reliability": round(m.reliability, 4),
        "procedure": m.procedure,
    }


def cmd_find(args: argparse.Namespace) -> int:
    """localmem procedures find"""
    if args.k < 0:
        raise CommandError("-k must be 0 or more")
    options = {"task_type": args.task_type}
    near = []
    with open_memory(args, create=False) as mem:
        threshold = args.threshold
        if args.k:
            found = mem.procedures.matches(args.task, k=args.k, **options)
        elif args.many:
            found = mem.procedures.find_many(args.task, threshold=threshold, **options)
        else:
            best = mem.procedures.find(args.task, threshold=threshold, **options)
            found = [best] if best else []
            if not best:
                near = mem.procedures.matches(args.task, k=1, **options)
        limit = threshold if threshold is not None else mem.config.procedures.threshold
    if args.json:
        print_json([_match_dict(m) for m in found])
        return 0
    if not found:
        hint = f"; best {near[0].score:.3f}: {short(near[0].procedure.trigger, 60)}" if near else ""
        print(f"(no procedure reaches the threshold {limit:.2f}{hint})")
        return 0
    for m in found:
        if args.render:
            from localmem.procedures.model import render

            print(render(m))
            print()
            continue
        agree = {True: "type match", False: "other type", None: "type unknown"}[m.type_match]
        print(f"{m.score:.3f}  (cos {m.similarity:.3f}, {agree})  {_line(m.procedure)}")
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    """localmem procedures record"""
    trace = None
    if args.trace:
        try:
            trace = args.trace.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"cannot read {args.trace}: {exc}") from None
    with open_memory(args, create=False) as mem:
        result = mem.procedures.record(
            args.id,
            args.success,
            trace,
            task=args.task,
            session_id=args.session_id,
            note=args.note,
            reflect=not args.no_reflect,
        )
    if args.json:
        print_json(result)
        return 0
    p = result.procedure
    print(f"recorded a {'success' if args.success else 'failure'} of {p.id}: {_line(p)}")
    if result.revised:
        print(f"revised to version {p.version} by {result.served_by}: {result.diagnosis}")
    if result.retired:
        print(
            f"retired ({p.success_count}/{p.use_count} successes); `procedures restore` undoes it"
        )
    return 0


def cmd_abstract(args: argparse.Namespace) -> int:
    """localmem procedures abstract"""
    with open_memory(args, create=False) as mem:
        proc = mem.procedures.abstract(args.session_id, level=args.level)
        versions = mem.procedures.versions(proc.id)
        events = mem.procedures.history(proc.id)
    if args.json:
        print_json(proc)
    else:
        print_procedure(proc, versions, events)
    return 0


def cmd_retire(args: argparse.Namespace) -> int:
    """localmem procedures retire"""
    with open_memory(args, create=False) as mem:
        proc = mem.procedures.retire(args.id, reason=args.reason)
    print_json(proc) if args.json else print(f"retired {proc.id}")
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """localmem procedures restore"""
    with open_memory(args, create=False) as mem:
        proc = mem.procedures.restore(args.id, reset_counts=args.reset_counts)
    print_json(proc) if args.json else print(f"restored {proc.id}")
    return 0


def show_section(mem, item) -> None:
    """`localmem show` of a trigger memory names its procedure."""
    pid = item.metadata.get("procedure_id") if item.kind == "procedure" else None
    if not pid:
        return
    from localmem.errors import NotFoundError

    try:
        proc = mem.procedures.get(pid)
    except NotFoundError:
        return
    print(f"\nprocedure: {_line(proc)}  (`localmem procedures show {proc.id}`)")


memories.SHOW_SECTIONS.append(show_section)
