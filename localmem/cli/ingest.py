"""localmem ingest: files into the store, with a progress bar."""

from __future__ import annotations

import argparse
from pathlib import Path

from localmem.console import (
    Progress,
    non_negative_int,
    open_memory,
    plural,
    positive_int,
    print_json,
    store_options,
)
from localmem.files import MAX_FILE_BYTES
from localmem.types import KINDS


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ingest command."""
    p = sub.add_parser(
        "ingest",
        parents=[store_options()],
        help="store a file: text/markdown as chunks, JSONL as one memory per line",
    )
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="text (.txt, .md) or JSON lines (.jsonl)"
    )
    p.add_argument("--chunker", default="paragraph", help="chunking strategy for documents")
    p.add_argument(
        "--chunk-tokens", type=positive_int, default=256, help="tokens per chunk (default 256)"
    )
    p.add_argument(
        "--overlap-tokens",
        type=non_negative_int,
        default=0,
        help="tokens a chunk repeats from the one before (default 0)",
    )
    p.add_argument("--kind", choices=KINDS, help="kind of the memories (default: chunk / note)")
    p.add_argument("--user", dest="user_id", help="the user they belong to (default: none)")
    p.add_argument("--session", dest="session_id", help="an existing session (`session start`)")
    p.add_argument(
        "--allow-duplicates",
        action="store_true",
        help="store lines and chunks again even when the same ones are already stored",
    )
    p.add_argument(
        "--infer",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="JSONL: extract facts from each line and reconcile them with the stored ones "
        "(default: on for a conversation, every line a message; else the store's setting)",
    )
    p.add_argument(
        "--max-mb",
        type=positive_int,
        default=MAX_FILE_BYTES // 2**20,
        help=f"refuse files larger than this many MiB (default {MAX_FILE_BYTES // 2**20})",
    )
    p.set_defaults(func=cmd_ingest)


def ingest_summary(report) -> str:
    """What an ingestion did to the store, in words."""
    if report.moved_from:
        return f"moved from {report.moved_from}: its stored chunks now point here, nothing new"
    stored = f"{report.memories} {plural(report.memories, 'memory', 'memories')} stored"
    if report.replaced:
        return (
            f"{stored}, replacing {report.replaced} "
            f"{plural(report.replaced, 'chunk', 'chunks')} of its earlier version"
        )
    if report.duplicates and not report.memories:
        return f"nothing new: all {report.duplicates} already stored"
    parts = [stored]
    if report.duplicates:
        parts.append(f"{report.duplicates} already stored")
    bad = report.skipped - report.duplicates
    if bad:
        parts.append(f"{bad} {plural(bad, 'line', 'lines')} skipped")
    return ", ".join(parts)


def cmd_ingest(args: argparse.Namespace) -> int:
    """localmem ingest"""
    from localmem.chunking import check_sizes
    from localmem.ingest import ingest_file
    from localmem.remote import RemoteMemory

    check_sizes(args.chunk_tokens, args.overlap_tokens)  # before opening the store
    defaults = {
        k: v
        for k, v in (
            ("kind", args.kind),
            ("user_id", args.user_id),
            ("session_id", args.session_id),
        )
        if v
    }
    reports = []
    with open_memory(args) as mem:
        if args.session_id:  # a typo must not scatter memories into a session nobody started
            defaults["session_id"] = mem.get_session(args.session_id).id
        for path in args.files:
            options = dict(
                chunker=args.chunker,
                chunk_tokens=args.chunk_tokens,
                overlap_tokens=args.overlap_tokens,
                allow_duplicates=args.allow_duplicates,
                max_bytes=args.max_mb * 2**20,
                infer=args.infer,
                **defaults,
            )
            if isinstance(mem, RemoteMemory):  # a served store: its server reads the file
                report = mem.ingest_file(str(Path(path).expanduser().absolute()), **options)
            else:
                bar = Progress(f"ingest {path}", enabled=None if not args.json else False)
                report = ingest_file(mem, path, progress=bar, **options)
            reports.append(report)
            if not args.json:
                if report.resolved:
                    print(f"{path}: a link; read {report.resolved}")
                print(f"{path}: {ingest_summary(report)}")
                if report.inferred:
                    done = ", ".join(f"{n} {e}" for e, n in sorted(report.inferred.items()))
                    print(f"  inferred: {done}")
                for err in [e for e in report.errors or [] if " line " in f" {e}"][:5]:
                    print(f"  skipped {err}")
    if args.json:
        print_json(reports)
    return 0
