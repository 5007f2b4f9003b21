"""Hierarchical consolidation on LoCoMo: episodic -> semantic -> meta, and what it does to recall.

Usage:
    python scripts/bench_consolidation.py /path/to/locomo_dev.json [--out docs/benchmarks.md]

Ingests each conversation into its own fresh store (MiniLM, no model), consolidates it
model-free, and reports the counts per level, the time, and evidence recall@k / hit@k for the
questions of categories 1-4, searching the episodic level only against searching across levels.
A consolidated hit stands for the turns it was derived from: a semantic memory covers the evidence
among its sources, a meta memory the evidence among its facts' sources. Because one consolidated
hit covers several turns, the table also shows how many distinct turns the first k hits cover.
Writes the `consolidation` section.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from lab.locomo import CATEGORIES, ingest_conversation, load_locomo
from lab.report import provenance, write_section
from lab.stats import percentile

from localmem import Memory
from localmem.console import short
from localmem.consolidation import sources_of
from localmem.embed import make_embedder

SETUPS = {
    "episodic only": {"levels": ["episodic"]},
    "across levels": {},
    "semantic + meta only": {"levels": ["semantic", "meta"]},
}


def turns_of(mem: Memory, hits) -> list[set[str]]:
    """The dia_ids each hit stands for (consolidated memories: their sources, recursively)."""
    out = []
    for h in hits:
        frontier, seen, turns = [h.memory.id], set(), set()
        dia = h.memory.metadata.get("dia_id")
        if dia:
            turns.add(dia)
        while frontier:
            found = sources_of(mem.store.db, [i for i in frontier if i not in seen])
            seen.update(frontier)
            frontier = [s for ids in found.values() for s in ids]
            for item in mem.get_many(frontier) if frontier else []:
                if item.metadata.get("dia_id"):
                    turns.add(item.metadata["dia_id"])
        out.append(turns)
    return out


def score(mem: Memory, conv, options: dict, k: int) -> list[dict]:
    rows = []
    for q in conv.questions:
        if q.category not in (1, 2, 3, 4) or not q.evidence:
            continue
        start = time.perf_counter()
        result = mem.search(q.question, k=k, user_id=conv.sample_id, **options)
        ms = (time.perf_counter() - start) * 1000
        covered = turns_of(mem, result.hits)
        gold = set(q.evidence)
        union = set().union(*covered) if covered else set()
        rows.append(
            {
                "category": q.category,
                "recall": len(gold & union) / len(gold),
                "hit": float(any(gold & c for c in covered)),
                "turns": len(union),
                "consolidated": sum(h.memory.level != "episodic" for h in result.hits),
                "ms": ms,
            }
        )
    return rows


def summarise(rows: list[dict]) -> dict:
    def agg(rs):
        return {
            "n": len(rs),
            "R": statistics.fmean(r["recall"] for r in rs) if rs else 0.0,
            "hit": statistics.fmean(r["hit"] for r in rs) if rs else 0.0,
            "turns": statistics.fmean(r["turns"] for r in rs) if rs else 0.0,
            "consolidated": statistics.fmean(r["consolidated"] for r in rs) if rs else 0.0,
            "p95_ms": percentile([r["ms"] for r in rs], 95) if rs else 0.0,
        }

    by_cat = defaultdict(list)
    for r in rows:
        by_cat[r["category"]].append(r)
    return {"overall": agg(rows), **{c: agg(rs) for c, rs in sorted(by_cat.items())}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="locomo10.json-shaped file")
    parser.add_argument("--out", default="docs/benchmarks.md")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument("--json", default=None, help="also write the raw numbers here")
    args = parser.parse_args()
    command = "python " + " ".join(sys.argv)
    head = provenance(command)
    load_before = os.getloadavg()
    convs = load_locomo(args.data)[: args.limit]
    embedder = make_embedder()
    results: dict[str, list] = {name: [] for name in SETUPS}
    per_conv = []
    matched: list = []
    examples: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for conv in convs:
            with Memory.open(Path(tmp) / conv.sample_id, embedder=embedder) as mem:
                t0 = time.perf_counter()
                n = ingest_conversation(mem, conv)
                t1 = time.perf_counter()
                report = mem.consolidate(user_id=conv.sample_id, implementation="model-free")
                t2 = time.perf_counter()
                rerun = mem.consolidate(user_id=conv.sample_id, implementation="model-free")
                t3 = time.perf_counter()
                consolidated = len({s for f in report.semantic for s in f.sources})
                per_conv.append(
                    {
                        "conversation": conv.sample_id,
                        "episodic": n,
                        "clusters": report.clusters,
                        "consolidated": consolidated,
                        "semantic": len(report.semantic),
                        "meta": len(report.meta),
                        "ingest_s": t1 - t0,
                        "consolidate_s": t2 - t1,
                        "rerun_s": t3 - t2,
                        "rerun_changed": rerun.changed,
                    }
                )
                for q in conv.questions:  # the query cache warm: every setup times search alone
                    mem.embedder.embed_query(q.question)
                for name, options in SETUPS.items():
                    results[name] += score(mem, conv, options, args.k)
                matched.append((mem.path, conv))
                if not examples:
                    examples = [f.content for f in report.semantic[:3]]
                    examples += [m.content for m in report.meta[:2]]
            print(f"{conv.sample_id}: {per_conv[-1]}", file=sys.stderr)
        # the same number of turns as across levels, from the episodic level alone: a fair baseline
        turns = summarise(results["across levels"])["overall"]["turns"]
        same_k = max(args.k, round(turns))
        name = f"episodic only, k={same_k} (as many turns)"
        results[name] = []
        for path, conv in matched:
            with Memory.open(path, embedder=embedder) as mem:
                results[name] += score(mem, conv, {"levels": ["episodic"]}, same_k)
    load_after = os.getloadavg()
    summaries = {name: summarise(rows) for name, rows in results.items()}
    if args.json:
        Path(args.json).write_text(json.dumps({"levels": per_conv, "search": summaries}, indent=2))
    k = args.k
    lines = [
        "## Hierarchical consolidation (LoCoMo dev, model-free)",
        "",
        head,
        f"- load average (1 min) before / after: {load_before[0]:.1f} / {load_after[0]:.1f} "
        "(2 cores shared with other work: times are noisy)",
        "",
        "Counts per level and time (model-free consolidation: clustering + extraction):",
        "",
        "| conversation | episodic | clusters | episodic consolidated | semantic | meta "
        "| ingest s | consolidate s | re-run s | re-run wrote |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for c in per_conv:
        lines.append(
            f"| {c['conversation']} | {c['episodic']} | {c['clusters']} | {c['consolidated']} "
            f"| {c['semantic']} | {c['meta']} | {c['ingest_s']:.1f} | {c['consolidate_s']:.1f} "
            f"| {c['rerun_s']:.1f} | {'yes' if c['rerun_changed'] else 'nothing'} |"
        )
    lines += [
        "",
        f"Evidence recall@{k} and hit@{k} (categories 1-4, default hybrid search, scoped to the "
        f"conversation). Turns = distinct turns the first {k} hits stand for; consolidated = "
        f"semantic/meta hits among the first {k}.",
        "",
        f"| setup | n | R@{k} | hit@{k} | turns | consolidated | p95 ms "
        + "".join(f"| R@{k} {CATEGORIES.get(c, c)} " for c in (1, 2, 3, 4))
        + "|",
        "|---|---:|---:|---:|---:|---:|---:" + "|---:" * 4 + "|",
    ]
    for name, s in summaries.items():
        o = s["overall"]
        cats = "".join(f"| {s[c]['R']:.3f} " if c in s else "| - " for c in (1, 2, 3, 4))
        lines.append(
            f"| {name} | {o['n']} | {o['R']:.3f} | {o['hit']:.3f} | {o['turns']:.1f} "
            f"| {o['consolidated']:.1f} | {o['p95_ms']:.0f} {cats}|"
        )
    lines += [
        "",
        "Examples (first conversation; model-free, so the words are the speakers' own):",
        "",
    ]
    lines += [f"- {short(e, 240)}" for e in examples]
    write_section(args.out, "consolidation", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
