"""localmem search: the read pipeline from the command line."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from localmem.api import operations
from localmem.console import (
    json_option,
    open_memory,
    print_json,
    short,
    store_options,
    to_jsonable,
)
from localmem.retrieval.options import EXPANSIONS, FUSIONS, MODES, RERANKERS, STRATEGIES
from localmem.types import KINDS, LEVELS


def register(sub: argparse._SubParsersAction) -> None:
    """Add the search command."""
    p = sub.add_parser(
        "search",
        parents=[store_options()],
        help="find memories for a query",
        description="Search a store: each hit shows its relevance (the calibrated chance, 0 "
        "to 1, that it is what you asked for), where it came from, and its text. --json and "
        "--explain add the raw ranking score and what every stage did.",
    )
    p.add_argument("query", help="what to look for, in your own words")
    p.add_argument("-k", type=int, default=5, help="hits to return (default 5)")
    p.add_argument(
        "--mode", choices=MODES, help="dense (vectors), lexical (words) or hybrid (default)"
    )
    p.add_argument(
        "--fusion", choices=FUSIONS, help="how hybrid joins the two lists (default: the store's)"
    )
    p.add_argument("--user", dest="user_id", help="only this user's memories (default: all)")
    p.add_argument("--agent", dest="agent_id", help="only this agent's memories (default: all)")
    p.add_argument("--session", dest="session_id", help="only this session's (default: all)")
    p.add_argument(
        "--kind", dest="kinds", action="append", choices=KINDS, help="only this kind (repeatable)"
    )
    p.add_argument(
        "--level",
        dest="levels",
        action="append",
        choices=LEVELS,
        help="only this consolidation level (repeatable; default: all)",
    )
    p.add_argument("--since", help="only memories from this time on (ISO-8601 with offset)")
    p.add_argument("--until", help="only memories up to this time")
    p.add_argument(
        "--as-of",
        dest="as_of",
        help="answer for a past moment: the memories true then (default: now, superseded "
        "memories left out)",
    )
    p.add_argument("--where", metavar="JSON", help="metadata equality filter, a JSON object")
    p.add_argument("--expand", choices=EXPANSIONS, help="query expansion")
    p.add_argument(
        "--attributes",
        choices=("off", "filter", "boost"),
        help="mined attributes: filter or boost the hits by them (default off)",
    )
    p.add_argument("--min-matches", type=int, help="filter: axes a memory must match (default 2)")
    p.add_argument(
        "--axes",
        help="attribute axes to match, comma-separated (default entities,intent,topic)",
    )
    p.add_argument(
        "--no-priority",
        dest="priority",
        action="store_const",
        const=False,
        help="ignore priority ranking",
    )
    p.add_argument("--strategy", choices=STRATEGIES, help="refined (default) or comprehensive")
    p.add_argument(
        "--temporal",
        action=argparse.BooleanOptionalAction,
        help="temporal attention (on by default: the store's search.temporal)",
    )
    p.add_argument("--links", action="store_const", const=True, help="add linked memories (A-Mem)")
    p.add_argument(
        "--rerank", choices=RERANKERS, help="reranker (default: the store's, model-free)"
    )
    p.add_argument("--budget", type=int, dest="budget_tokens", help="pack hits into N tokens")
    p.add_argument(
        "--min-relevance",
        type=float,
        dest="min_relevance",
        metavar="P",
        help="leave out hits whose relevance (0 to 1) is below P (default: keep all)",
    )
    p.add_argument("--explain", action="store_true", help="print what every stage did")
    p.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    """localmem search"""
    # every option named as a parameter of the declared search is passed on when given (the
    # contract test holds the parser's names and choices to the declaration)
    declared = {p.name for p in operations()["search"].params} - {"query", "k"}
    options = {
        name: value for name, value in vars(args).items() if name in declared and value is not None
    }
    options.pop("axes", None)  # given as one comma-separated text
    if args.axes:
        options["axes"] = tuple(a.strip() for a in args.axes.split(",") if a.strip())
    metadata = json_option(args.where, "--where")
    if metadata is not None:
        options["metadata"] = metadata
    with open_memory(args, create=False) as mem:
        result = mem.search(args.query, k=args.k, **options)
        derived = _provenance(mem, result.hits)
        if args.json:
            # the one encoding of a search result (localmem.wire), each hit with the memories
            # a consolidated one came from
            out = to_jsonable(result)
            for hit in out["hits"]:
                hit["derived_from"] = derived.get(hit["id"], [])
            print_json(out)
            return 0
        for h in result.hits:
            # relevance: the calibrated 0-1 chance the hit is relevant (the raw ranking score
            # is in --json and --explain); then where it came from, then the text
            flags = f" [{', '.join(h.flags)}]" if h.flags else ""
            level = f"[{h.memory.level}] " if h.memory.level != "episodic" else ""
            relevance = "  -  " if h.relevance is None else f"{h.relevance:.2f}"
            print(f"{h.rank:>2}. {relevance}  {h.memory.id[:8]}  {_origin(h.memory)}")
            print(f"      {level}{short(h.memory.content, 90)}{flags}")
            if h.memory.id in derived:
                sources = derived[h.memory.id]
                print(f"      from {len(sources)}: {' '.join(s[:8] for s in sources[:8])}")
        if not result.hits:
            print("(no hits)")
        if args.explain:
            print()
            print(result.explain())
    return 0


def _origin(item, width: int = 80) -> str:
    """Where a hit came from, short: a path under the working folder relative to it, a long
    one cut on the left (the file name and line are what tell two hits apart)."""
    origin = " ".join(item.origin.split())
    here = str(Path.cwd()) + os.sep
    if origin.startswith(here):
        origin = origin[len(here) :]
    return origin if len(origin) <= width else "…" + origin[-(width - 1) :]


def _provenance(mem, hits) -> dict[str, list[str]]:
    """The sources of the consolidated (semantic, meta) hits."""
    ids = [h.memory.id for h in hits if h.memory.level != "episodic"]
    return mem.sources_of(ids) if ids else {}
