"""Retrieval on every data shape the project has, in one run (issue 18).

A *shape* is a labelled set of memories and queries stored the way a user would store them:

- ``locomo``: LoCoMo conversations with their metadata (speaker, session, time), R@10 of the
  evidence turns, categories 1-4 (the ``python scripts/experiment.py locomo`` protocol);
- ``locomo-plain``: the same turns added as plain text ("Caroline: ..."), nothing else;
- ``agentmemory``: seed 003's published ``fixed_256`` chunks, MRR@3 by gold chunk id (the
  protocol of docs/experiments/rag.md);
- ``meminsight``: the six labelled thought sessions shipped for the MemInsight experiment;
- ``amem``: the three A-Mem sessions (a thought graded 4 or 5 counts as relevant);
- ``notes``: the synthetic labelled notes (``scripts/make_notes.py``): paraphrased queries,
  distractors that share the query's words; stored in a seeded shuffled order, and scored on
  the held-out half of its people (:func:`notes_split`; the other half may train the reranker).

Each shape has one *main* metric (R@10 for LoCoMo, MRR otherwise); the table compares
configurations of search options on it. Rerank configurations on LoCoMo rank each conversation
with weights fitted, as the shipped ones are, on the other conversations (in both forms),
never with weights that saw it (:func:`heldout_weights`). The other shapes use the shipped
weights, which never saw them.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lab.stats import percentile

DATA = Path(__file__).with_name("data")
STORE_CONFIG: Any = None  # new stores' config (None: MiniLM; --embedder); a store keeps its own


def _open(folder: Path):
    from localmem.memory import Memory

    return Memory.open(folder, config=None if folder.exists() else STORE_CONFIG)


#: configuration name -> search options (baselines switch every later stage off explicitly)
BASELINES: dict[str, dict[str, Any]] = {
    "dense": {"mode": "dense", "temporal": False, "rerank": "off"},
    "bm25": {"mode": "lexical", "temporal": False, "rerank": "off"},
    "hybrid": {"mode": "hybrid", "temporal": False, "rerank": "off"},
}
CONFIGS: dict[str, dict[str, Any]] = {
    **BASELINES,
    "default": {},  # what search(q) does with no options: hybrid, temporal, model-free rerank
}
MAIN = {
    "locomo": "R@10",
    "locomo-plain": "R@10",
    "agentmemory": "MRR@3",
    "meminsight": "MRR",
    "amem": "MRR",
    "notes": "MRR",
}
SHAPES = tuple(MAIN)


@dataclass
class Scored:
    """One query: what came back (ids, best first), what is relevant, its group, its time."""

    retrieved: list[str]
    relevant: set[str]
    group: str
    ms: float


def metrics(rows: Sequence[Scored]) -> dict[str, float]:
    """R@1/5/10, hit@10, MRR (within 10) and MRR@3 over the queries (pure)."""
    out: dict[str, list[float]] = {m: [] for m in ("R@1", "R@5", "R@10", "hit@10", "MRR", "MRR@3")}
    for r in rows:
        n = max(len(r.relevant), 1)
        for k in (1, 5, 10):
            out[f"R@{k}"].append(len(r.relevant & set(r.retrieved[:k])) / n)
        first = next((i for i, x in enumerate(r.retrieved[:10], 1) if x in r.relevant), None)
        out["hit@10"].append(float(first is not None))
        out["MRR"].append(1.0 / first if first else 0.0)
        out["MRR@3"].append(1.0 / first if first and first <= 3 else 0.0)
    summary = {m: float(np.mean(v)) if v else 0.0 for m, v in out.items()}
    ms = [r.ms for r in rows]
    summary["p50_ms"] = percentile(ms, 50) if ms else 0.0
    summary["p95_ms"] = percentile(ms, 95) if ms else 0.0
    summary["n"] = len(rows)
    return summary


def _search(memory, query: str, options: dict[str, Any], key: str, k: int = 10, **scope):
    from lab.locomo_bench import reranker_weights

    options = dict(options)
    weights = options.pop("_weights", None)  # a weights file to rerank with (a candidate)
    settings = options.pop("_config", None)  # search settings of the store to try (a candidate)
    saved = memory.config
    if settings:
        memory.config = saved.with_updates(search=settings)
    try:
        with reranker_weights(memory, weights):
            result = memory.search(query, k=k, **options, **scope)
    finally:
        memory.config = saved
    ids = [str(h.memory.metadata.get(key, h.memory.id)) for h in result.hits]
    return ids, result.total_ms


def _fresh(folder: Path, expected: int, make: Callable[[Any], None]):
    """A store at ``folder`` holding ``expected`` memories (reused when it does)."""
    if folder.exists():
        memory = _open(folder)
        if memory.count() == expected:
            return memory
        memory.close()
        shutil.rmtree(folder)
    memory = _open(folder)
    make(memory)
    return memory


# -- the shapes -------------------------------------------------------------------------------
def heldout_weights(work: Path, locomo: Path, progress) -> dict[str, str]:
    """Reranker weights for each LoCoMo conversation, fitted as the shipped ones are (on both
    the metadata and the plain-text stores) but without that conversation, in either form.
    Returns ``{sample_id: weights file}``."""
    from lab import reranker_training as training
    from lab.locomo import load_locomo

    convs = load_locomo(locomo)
    names = list(training.DEFAULT_FEATURES)
    examples = []
    for shape, plain in (("locomo", False), ("locomo-plain", True)):
        with _open(work / shape) as memory:
            examples += training.collect(
                memory, convs, names, training.PIPELINE, progress=progress, plain=plain
            )
    folder = work / "heldout-weights"
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for sample_id, weights in training.heldout_weights(examples, names, with_all=True).items():
        path = folder / f"reranker-without-{sample_id}.json"
        path.write_text(json.dumps({"weights": weights}, indent=2) + "\n", encoding="utf-8")
        out[sample_id] = str(path)
    return out


def _reranks(options: dict[str, Any]) -> bool:
    return options.get("rerank", "model-free") != "off" and "_weights" not in options


def _locomo(folder: Path, configs, *, locomo: Path, plain: bool, held, progress, **_):
    from lab.locomo import asked_at, ensure_ingested, load_locomo
    from lab.locomo_bench import reranker_weights

    convs = load_locomo(locomo)
    out: dict[str, list[Scored]] = {}
    with _open(folder) as memory:
        for conv in convs:
            ensure_ingested(memory, conv, plain=plain)
        for name, options in configs.items():
            rows = out[name] = []
            for conv in convs:
                now = asked_at(conv)
                path = None if "_weights" in options else (held or {}).get(conv.sample_id)
                with reranker_weights(memory, path):
                    for q in conv.questions:
                        if q.category not in (1, 2, 3, 4) or not q.evidence:
                            continue
                        ids, ms = _search(
                            memory, q.question, options, "dia_id", user_id=conv.sample_id, now=now
                        )
                        rows.append(Scored(ids, set(q.evidence), str(q.category), ms))
            progress(f"{'locomo-plain' if plain else 'locomo'} {name} done")
    return out


def _agentmemory(folder: Path, configs, *, agentmemory: Path, progress, **_):
    from lab.agentmemory import (
        load_corpus,
        load_published_chunks,
        load_questions,
    )

    articles = load_corpus(agentmemory)
    chunks = load_published_chunks(agentmemory, "fixed_256", articles)
    questions = load_questions(agentmemory)

    def make(memory):
        memory.add_many(
            [
                {
                    "content": c.text,
                    "kind": "chunk",
                    "metadata": {"chunk_id": c.id, "title": c.title},
                }
                for c in chunks
            ]
        )

    out: dict[str, list[Scored]] = {}
    with _fresh(folder, len(chunks), make) as memory:
        for name, options in configs.items():
            out[name] = []
            for q in questions:
                gold = set(q.gold_chunk_ids.get("fixed_256", ()))
                ids, ms = _search(memory, q.question, options, "chunk_id")
                out[name].append(Scored(ids, gold, "all", ms))
    return out


def _sessions(folder: Path, configs, sessions: list[dict], progress) -> dict[str, list[Scored]]:
    """Each session under its own user id, thoughts added in order, queries scoped to it."""

    def make(memory):
        for s in sessions:
            memory.add_many(
                [{"content": t, "metadata": {"n": str(i)}} for i, t in enumerate(s["thoughts"], 1)],
                user_id=s["id"],
            )

    total = sum(len(s["thoughts"]) for s in sessions)
    out: dict[str, list[Scored]] = {}
    with _fresh(folder, total, make) as memory:
        for name, options in configs.items():
            out[name] = []
            for s in sessions:
                for q in s["queries"]:
                    ids, ms = _search(memory, q["text"], options, "n", user_id=s["id"])
                    out[name].append(Scored(ids, set(q["relevant"]), q.get("group", "all"), ms))
    return out


def _meminsight(folder: Path, configs, *, progress, **_):
    data = json.loads((DATA / "meminsight" / "sessions.json").read_text(encoding="utf-8"))
    sessions = [
        {
            "id": s["id"],
            "thoughts": s["thoughts"],
            "queries": [
                {
                    "text": q["text"],
                    "relevant": [str(x) for x in q["relevant"]],
                    "group": q.get("complexity", "all"),
                }
                for q in s["queries"]
            ],
        }
        for s in data["sessions"]
    ]
    return _sessions(folder, configs, sessions, progress)


def _amem(folder: Path, configs, *, progress, **_):
    sessions = []
    for file in sorted((DATA / "amem").glob("*.json")):
        if file.stem == "quick":  # the test suite's tiny copy
            continue
        d = json.loads(file.read_text(encoding="utf-8"))
        queries = [
            {"text": q["query"], "relevant": [n for n, g in q["relevance"].items() if g >= 4]}
            for q in d["queries"]
        ]
        sessions.append({"id": d["name"], "thoughts": d["thoughts"], "queries": queries})
    return _sessions(folder, configs, sessions, progress)


#: the notes are stored in this seeded shuffled order, not the file's: the file writes each
#: answer note right before its distractor, and the neighbour features would tie them together
NOTES_SEED = 18


def notes_order(count: int) -> list[int]:
    """The order the notes shape stores its ``count`` notes in (pure, fixed seed)."""
    order = list(range(count))
    random.Random(NOTES_SEED).shuffle(order)
    return order


def notes_split(queries: Sequence[dict]) -> tuple[set[str], set[str]]:
    """The notes set's people in two halves, (training, held out): every other person in the
    file's order (pure). The reranker may be fitted on the first half's questions; the shape
    scores the second half only."""
    people = list(dict.fromkeys(q["person"] for q in queries))
    return set(people[0::2]), set(people[1::2])


def _notes(folder: Path, configs, *, progress, **_):
    data = json.loads((DATA / "notes" / "notes.json").read_text(encoding="utf-8"))

    notes, (_, held_out) = data["notes"], notes_split(data["queries"])
    rows = [{"content": notes[i], "metadata": {"n": str(i)}} for i in notes_order(len(notes))]
    out: dict[str, list[Scored]] = {}
    with _fresh(folder, len(notes), lambda memory: memory.add_many(rows)) as memory:
        for name, options in configs.items():
            out[name] = []
            for q in (q for q in data["queries"] if q["person"] in held_out):
                ids, ms = _search(memory, q["query"], options, "n")
                out[name].append(Scored(ids, {str(x) for x in q["relevant"]}, q["relation"], ms))
    return out


RUNNERS = {
    "locomo": lambda f, c, **kw: _locomo(f, c, plain=False, **kw),
    "locomo-plain": lambda f, c, **kw: _locomo(f, c, plain=True, **kw),
    "agentmemory": _agentmemory,
    "meminsight": _meminsight,
    "amem": _amem,
    "notes": _notes,
}


def run(
    work: Path,
    shapes: Sequence[str],
    configs: dict[str, dict[str, Any]],
    *,
    locomo: Path,
    agentmemory: Path,
    progress: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    """Score every configuration on every shape; stores are kept (and reused) under ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    held = None
    if {"locomo", "locomo-plain"} & set(shapes) and any(_reranks(o) for o in configs.values()):
        held = heldout_weights(work, locomo, progress)
    for shape in shapes:
        t0 = time.perf_counter()
        scored = RUNNERS[shape](
            work / shape,
            configs,
            locomo=locomo,
            agentmemory=agentmemory,
            held=held,
            progress=progress,
        )
        results[shape] = {
            name: {
                "overall": metrics(rows),
                "groups": {
                    g: metrics([r for r in rows if r.group == g])
                    for g in sorted({r.group for r in rows})
                },
            }
            for name, rows in scored.items()
        }
        progress(f"{shape}: {time.perf_counter() - t0:.0f} s")
    return {"main": {s: MAIN[s] for s in shapes}, "results": results}


def guard(results: dict[str, Any], config: str, *, slack: float = 0.01) -> list[str]:
    """Shapes where ``config`` falls below the best baseline by more than ``slack`` (pure)."""
    failures = []
    for shape, by_config in results["results"].items():
        metric = results["main"][shape]
        scores = [by_config[b]["overall"][metric] for b in BASELINES if b in by_config]
        if not scores or config not in by_config:
            continue  # nothing to compare with
        best, mine = max(scores), by_config[config]["overall"][metric]
        if mine < best - slack:
            failures.append(f"{shape}: {config} {mine:.3f} < best baseline {best:.3f} - {slack}")
    return failures


def table(results: dict[str, Any]) -> str:
    """The markdown table: one row per configuration, one column per shape's main metric."""
    shapes = list(results["results"])
    names = list(next(iter(results["results"].values())))
    head = " | ".join(f"{s} {results['main'][s]}" for s in shapes)
    lines = [f"| config | {head} |", "|---|" + "---|" * len(shapes)]
    for name in names:
        cells = [
            f"{results['results'][s][name]['overall'][results['main'][s]]:.3f}" for s in shapes
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def details(results: dict[str, Any]) -> str:
    """Every metric of every shape and configuration (multi-hop: LoCoMo's category 1)."""
    lines = [
        "| shape | config | n | R@1 | R@5 | R@10 | MRR | multi-hop R@10 | p50 / p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape, by_config in results["results"].items():
        for name, v in by_config.items():
            o, groups = v["overall"], v["groups"]
            multi = f"{groups['1']['R@10']:.3f}" if shape.startswith("locomo") else ""
            lines.append(
                f"| {shape} | {name} | {o['n']} | {o['R@1']:.3f} | {o['R@5']:.3f} | "
                f"{o['R@10']:.3f} | {o['MRR']:.3f} | {multi} | "
                f"{o['p50_ms']:.1f} / {o['p95_ms']:.1f} |"
            )
    return "\n".join(lines)
