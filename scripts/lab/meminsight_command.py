"""``python scripts/experiment.py meminsight``: the MemInsight protocol (seed 000) and its report.

Writes the measured tables into ``docs/experiments/meminsight.md`` (between the markers
``meminsight`` and ``meminsight-locomo``, so the hand-written discussion around them stays) and
the raw numbers into ``meminsight.json`` beside it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from lab.command import Experiment
from localmem.console import CommandError, print_json

DEFAULT_OUT = "docs/experiments/meminsight.md"
COLUMNS = (
    ("precision", "precision (returned)"),
    ("P@5", "P@5 (with fill)"),
    ("filter_recall", "recall (survives filter)"),
    ("R@5", "R@5"),
    ("returned", "returned"),
    ("tokens", "tokens"),
    ("filter_ratio", "filter ratio"),
    ("empty", "empty results"),
)


def configure(p: argparse.ArgumentParser) -> None:
    """Options of the experiment."""
    p.add_argument(
        "--miner",
        choices=("model-free", "engine", "all"),
        default="model-free",
        help="which miner(s) to run (engine needs a configured GGUF)",
    )
    p.add_argument("--mode", choices=("dense", "hybrid"), default="dense", help="base retrieval")
    p.add_argument("--locomo", metavar="PATH", help="also run LoCoMo evidence recall (a JSON file)")
    p.add_argument("--locomo-limit", type=int, help="only the first N LoCoMo conversations")
    p.add_argument("--skip-sessions", action="store_true", help="only the LoCoMo part")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"report file (default {DEFAULT_OUT})")
    p.add_argument("--no-write", action="store_true", help="print, do not write the report")


def _table(rows: dict[str, dict[str, float]], columns=COLUMNS) -> str:
    head = "| variation | " + " | ".join(title for _, title in columns) + " |"
    lines = [head, "|---|" + "---|" * len(columns)]
    for name, m in rows.items():
        cells = []
        for key, _ in columns:
            v = m.get(key, 0.0)
            cells.append(f"{v:.0f}" if key == "tokens" else f"{v:.2f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _quick_hits(run) -> str:
    from lab.meminsight import BASELINE, SEED

    out = []
    for name in (BASELINE, SEED):
        r = run.results["quick"][name][0]
        top = [
            f"{n}{'*' if n in r.relevant else ''}{' (fill)' if n in r.fill else ''}"
            for n in r.ranked[:5]
        ]
        out.append(f"- {name}: thoughts {', '.join(top)}")
    out.append(
        "  (* = labelled relevant; relevant are " + ", ".join(map(str, sorted(r.relevant))) + ")"
    )
    return "\n".join(out)


def report_sessions(runs, command: str) -> str:
    """The markdown of the fixture part."""
    from lab.meminsight import BASELINE, SEED, aggregate, breakdown, criteria
    from lab.report import provenance

    parts = [provenance(command), ""]
    for run in runs:
        parts.append(f"### Miner: {run.miner} (served by `{run.served_by}`)\n")
        parts.append(
            f"Mining took {run.mining_ms_per_thought:.1f} ms per thought (this machine, shared); "
            f"{run.failed_jobs} mining job(s) failed.\n"
        )
        for dataset in run.results:
            parts.append(f"**Success criteria, `{dataset}`** (seed variation vs baseline, k=5):\n")
            parts.append("| criterion | measured | result |\n|---|---|---|")
            for c in criteria(run, dataset):
                parts.append(
                    f"| {c['criterion']} | {c['measured']} | {'PASS' if c['pass'] else 'FAIL'} |"
                )
            parts.append("")
        if "quick" in run.results:
            parts.append("**Quick protocol** (10 thoughts, one query):\n")
            parts.append(_quick_hits(run) + "\n")
            parts.append(_table({v: aggregate(r) for v, r in run.results["quick"].items()}) + "\n")
        if "sessions" in run.results:
            res = run.results["sessions"]
            n = len(res[BASELINE])
            parts.append(f"**Labelled sessions** (6 sessions, {n} queries, mean per query):\n")
            parts.append(_table({v: aggregate(r) for v, r in res.items()}) + "\n")
            for key in ("complexity", "variety"):
                rows = {}
                for name in (BASELINE, SEED):
                    for group, m in breakdown(res[name], key).items():
                        rows[f"{name}, {group}"] = m
                parts.append(f"By query {key}:\n\n" + _table(rows) + "\n")
        if run.agreement.get("sessions"):
            parts.append(
                "**Axis agreement** (`sessions`): how often the query's main value equals a "
                "thought's (entities: some pair matches), for the relevant thoughts and for the "
                "others:\n\n| axis | relevant | other |\n|---|---|---|"
            )
            for axis, g in run.agreement["sessions"].items():
                parts.append(f"| {axis} | {g.get('relevant', 0):.2f} | {g.get('other', 0):.2f} |")
            parts.append("")
        c = run.consistency
        if c:
            parts.append(
                f"**Consistency**: mining the same text twice gave identical attributes for "
                f"{run.deterministic:.0%} of texts; over {c['pairs']:.0f} paraphrase pairs the "
                f"intent agreed {c['intent_agreement']:.0%}, the topic {c['topic_agreement']:.0%}, "
                f"entity terms overlapped {c['entity_jaccard']:.2f} (Jaccard) and "
                f"{c['entity_match']:.0%} of pairs share a matching entity.\n"
            )
    return "\n".join(parts)


LOCOMO_CONFIGS = {
    "off": {"attributes": "off"},
    "filter 2/3": {"attributes": "filter", "min_matches": 2},
    "filter 1/3": {"attributes": "filter", "min_matches": 1},
    "boost": {"attributes": "boost"},
}


def run_locomo(path: str, *, limit: int | None, embedder, progress=None) -> dict:
    """Evidence recall on LoCoMo with attributes off / filter / boost (conversation labels).

    Query vectors and query attributes are computed before the timed searches, so every
    configuration's latency is measured warm; the query mining time is reported on its own.
    """
    import time

    from lab.locomo import ingest_conversation, load_locomo
    from lab.retrieval import run_questions, summarize
    from localmem import Memory
    from localmem.attributes.jobs import mine_pending, queue_mining
    from localmem.attributes.mining import miner_for
    from localmem.config import Config

    convs = load_locomo(path)[: limit or None]
    config = Config().with_updates(attributes={"label_set": "conversation", "miner": "model-free"})
    results: dict[str, list] = {name: [] for name in LOCOMO_CONFIGS}
    mined = mining_s = query_s = 0.0
    queries = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, conv in enumerate(convs):
            if progress:
                progress(f"locomo {conv.sample_id} ({i + 1}/{len(convs)})")
            mem = Memory.open(Path(tmp) / conv.sample_id, config=config, embedder=embedder)
            try:
                ingest_conversation(mem, conv)
                jobs = queue_mining(mem)
                t0 = time.perf_counter()
                mine_pending(mem, jobs)
                mining_s += time.perf_counter() - t0
                mined += len(jobs)
                miner = miner_for(mem)
                questions = [q.question for q in conv.questions if q.category in (1, 2, 3, 4)]
                for q in questions:
                    embedder.embed_query(q)
                t0 = time.perf_counter()
                for q in questions:
                    miner.mine(q, vector=embedder.embed_query(q), query=True)
                query_s += time.perf_counter() - t0
                queries += len(questions)
                mem.search("warm up", k=1)  # loads the BM25 postings
                for name, options in LOCOMO_CONFIGS.items():
                    rows, _ = run_questions(mem, conv, options, k=10)
                    results[name] += rows
            finally:
                mem.close()
    summaries = {name: summarize(rows, ks=(5, 10)) for name, rows in results.items()}
    return {
        "conversations": [c.sample_id for c in convs],
        "turns_mined": int(mined),
        "mining_ms_per_turn": mining_s * 1000 / max(mined, 1),
        "query_mining_ms": query_s * 1000 / max(queries, 1),
        "summaries": summaries,
    }


def report_locomo(data: dict, command: str) -> str:
    """The markdown of the LoCoMo part."""
    from lab.report import provenance
    from lab.retrieval import category_table, markdown_table

    s = data["summaries"]
    return "\n".join(
        [
            provenance(command),
            "",
            f"Conversations {', '.join(data['conversations'])}; {data['turns_mined']} turns mined "
            f"with the model-free miner and the `conversation` label set "
            f"({data['mining_ms_per_turn']:.1f} ms per turn, jobs included; mining a question "
            f"took {data['query_mining_ms']:.1f} ms, cached afterwards and not in the latencies "
            "below). Hybrid retrieval (the default), k=10; `filter 2/3` is the seed's mechanism "
            "(2 of 3 axes, refined, priority on), short lists filled from the unfiltered ranking; "
            "`boost` uses the default weight. Questions of categories 1-4 with evidence.",
            "",
            markdown_table(s, metrics=("R@5", "R@10", "hit@10", "MRR", "p50_ms", "p95_ms")),
            "",
            "R@10 by category:",
            "",
            category_table(s, "R@10"),
        ]
    )


def run(args: argparse.Namespace) -> int:
    """python scripts/experiment.py meminsight"""
    from lab import meminsight
    from lab.report import write_section
    from localmem import Memory
    from localmem.embed import make_embedder

    if args.skip_sessions and not args.locomo:
        raise CommandError("--skip-sessions leaves nothing to run without --locomo")
    command = (
        "python scripts/experiment.py " + " ".join(sys.argv[1:])
        if sys.argv[1:]
        else "python scripts/experiment.py meminsight"
    )
    embedder = make_embedder()
    say = (lambda msg: print(msg, file=sys.stderr)) if not args.json else None
    miners = ["model-free", "engine"] if args.miner == "all" else [args.miner]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for miner in [] if args.skip_sessions else miners:
            runs.append(
                meminsight.run_miner(
                    lambda name: Memory.open(Path(tmp) / name, embedder=embedder),
                    miner=miner,
                    mode=args.mode,
                    progress=say,
                )
            )
    locomo = (
        run_locomo(args.locomo, limit=args.locomo_limit, embedder=embedder, progress=say)
        if args.locomo
        else None
    )
    data = {"runs": [meminsight.to_json(r) for r in runs], "locomo": locomo}
    if args.json:
        print_json(data)
    sessions_md = report_sessions(runs, command) if runs else None
    locomo_md = report_locomo(locomo, command) if locomo else None
    if args.no_write:
        if not args.json:
            print("\n\n".join(x for x in (sessions_md, locomo_md) if x))
        return 0
    out = Path(args.out)
    if sessions_md:
        write_section(out, "meminsight", sessions_md)
        meminsight.write_json(out.with_suffix(".json"), {"runs": data["runs"]})
    if locomo_md:
        write_section(out, "meminsight-locomo", locomo_md)
        meminsight.write_json(out.with_name(out.stem + "-locomo.json"), {"locomo": locomo})
    if not args.json:
        print(f"wrote {out}")
    return 0


EXPERIMENT = Experiment(
    "MemInsight (seed 000): attribute-filtered retrieval on labelled sessions (+ LoCoMo)",
    configure,
    run,
)
