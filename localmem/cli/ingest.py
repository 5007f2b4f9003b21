"""localmem ingest: files into the store, with a progress bar."""

from __future__ import annotations

import argparse

from localmem.console import Progress, open_memory, print_json, store_options
from localmem.types import KINDS


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ingest command."""
    p = sub.add_parser(
        "ingest",
        parents=[store_options()],
        help="store a file: text/markdown as chunks, JSONL as one memory per line",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--chunker", default="paragraph", help="chunking strategy for documents")
    p.add_argument("--chunk-tokens", type=int, default=256)
    p.add_argument("--overlap-tokens", type=int, default=0)
    p.add_argument("--kind", choices=KINDS, help="kind of the memories (default: chunk / note)")
    p.add_argument("--user", dest="user_id")
    p.add_argument("--session", dest="session_id")
    p.set_defaults(func=cmd_ingest)


def cmd_ingest(args: argparse.Namespace) -> int:
    """localmem ingest"""
    from localmem.ingest import ingest_file

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
        for path in args.files:
            report = ingest_file(
                mem,
                path,
                chunker=args.chunker,
                chunk_tokens=args.chunk_tokens,
                overlap_tokens=args.overlap_tokens,
                progress=Progress(f"ingest {path}", enabled=None if not args.json else False),
                **defaults,
            )
            reports.append(report)
            if not args.json:
                skipped = f", {report.skipped} skipped" if report.skipped else ""
                print(f"{path}: {report.memories} memories stored{skipped}")
                for err in (report.errors or [])[:5]:
                    print(f"  skipped {err}")
    if args.json:
        print_json(reports)
    return 0
