"""The MemInsight experiment (seed 000): does attribute filtering make retrieval more precise?

Protocol (the seed's, on labelled fixture sessions shipped in ``eval/data/meminsight``):

1. every session becomes a session of thoughts in a fresh store; every thought is mined;
2. each query is searched within its session, top-5, as plain embedding search (baseline) and
   with the attribute stage in each variation (threshold 1/2/3 of 3, priority on/off, each axis
   alone, refined vs comprehensive, boost);
3. per query: precision of what the mechanism returns (the hits that passed the filter, "strict"),
   P@5 of the final list (fill included), recall (the seed's: the share of relevant thoughts that
   survive the filter; and recall@5), tokens of the returned thoughts, filter ratio.

Consistency: each text mined twice must give the same attributes, and paraphrase pairs are
compared (same intent, same topic, entity term overlap).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any

from localmem.errors import InputError

if TYPE_CHECKING:
    from localmem.memory import Memory

K = 5
DATASETS = ("quick", "sessions")


@dataclass(frozen=True)
class Variation:
    """One way of searching, named as in the report."""

    name: str
    group: str
    options: dict[str, Any]


#: every variation the seed asks for; "seed" is the mechanism as the seed sketches it
VARIATIONS: tuple[Variation, ...] = (
    Variation("baseline (embedding only)", "baseline", {"attributes": "off"}),
    Variation("filter 2/3 (seed)", "threshold", {"attributes": "filter", "min_matches": 2}),
    Variation("filter 1/3", "threshold", {"attributes": "filter", "min_matches": 1}),
    Variation("filter 3/3", "threshold", {"attributes": "filter", "min_matches": 3}),
    Variation(
        "filter 2/3, priority off",
        "priority",
        {"attributes": "filter", "min_matches": 2, "priority": False},
    ),
    Variation(
        "filter 2/3, comprehensive",
        "strategy",
        {"attributes": "filter", "min_matches": 2, "strategy": "comprehensive"},
    ),
    Variation(
        "filter 1/3, comprehensive",
        "strategy",
        {"attributes": "filter", "min_matches": 1, "strategy": "comprehensive"},
    ),
    Variation(
        "entities only", "axis", {"attributes": "filter", "axes": ("entities",), "min_matches": 1}
    ),
    Variation(
        "intent only", "axis", {"attributes": "filter", "axes": ("intent",), "min_matches": 1}
    ),
    Variation("topic only", "axis", {"attributes": "filter", "axes": ("topic",), "min_matches": 1}),
    Variation("boost", "boost", {"attributes": "boost"}),
    Variation("boost, priority off", "boost", {"attributes": "boost", "priority": False}),
)
SEED = "filter 2/3 (seed)"
BASELINE = "baseline (embedding only)"


# -- fixtures ----------------------------------------------------------------------------------
def load_fixture(name: str) -> dict[str, Any]:
    """A labelled fixture shipped with localmem (``quick``, ``sessions`` or ``paraphrases``)."""
    try:
        text = (
            resources.files("lab")
            .joinpath(f"data/meminsight/{name}.json")
            .read_text(encoding="utf-8")
        )
    except FileNotFoundError:
        raise InputError(f"no MemInsight fixture named {name!r}") from None
    return json.loads(text)


# -- pure metrics ------------------------------------------------------------------------------
@dataclass
class QueryResult:
    """What one variation returned for one query."""

    session: str
    variety: str
    query: str
    complexity: str
    relevant: frozenset[int]
    ranked: list[int]  # thought numbers, best first (every thought: k = session size)
    fill: set[int]  # numbers that came in as fill (failed the filter)
    tokens: dict[int, int]  # tokens per thought number
    size: int  # thoughts in the session
    ms: float = 0.0

    @property
    def kept(self) -> list[int]:
        """What passed the filter (everything when nothing filters), best first."""
        return [n for n in self.ranked if n not in self.fill]

    def metrics(self, k: int = K) -> dict[str, float]:
        """The seed's metrics for this query."""
        top = self.ranked[:k]
        strict = self.kept[:k]
        rel = self.relevant
        return {
            "precision": len(rel & set(strict)) / len(strict) if strict else 0.0,
            "P@5": len(rel & set(top)) / k,
            "filter_recall": len(rel & set(self.kept)) / len(rel),
            "R@5": len(rel & set(top)) / len(rel),
            "strict_R@5": len(rel & set(strict)) / len(rel),
            "returned": float(len(strict)),
            "tokens": float(sum(self.tokens[n] for n in strict)),
            "tokens_with_fill": float(sum(self.tokens[n] for n in top)),
            "filter_ratio": 1.0 - len(self.kept) / self.size,
            "empty": float(not strict),
            "ms": self.ms,
        }


def aggregate(results: Sequence[QueryResult], k: int = K) -> dict[str, float]:
    """Mean of every metric over queries."""
    rows = [r.metrics(k) for r in results]
    return {key: mean(row[key] for row in rows) for key in rows[0]} if rows else {}


def consistency(pairs: Sequence[tuple[Any, Any]]) -> dict[str, float]:
    """Agreement of the attributes of paraphrase pairs (each a pair of ``Mined``)."""
    from localmem.attributes.normalise import overlap

    intent = [float(a.first("intent") == b.first("intent")) for a, b in pairs]
    topic = [float(a.first("topic") == b.first("topic")) for a, b in pairs]
    ents = []
    for a, b in pairs:
        ta = {t for x in a.axis("entities") for t in x.terms}
        tb = {t for x in b.axis("entities") for t in x.terms}
        ents.append(len(ta & tb) / len(ta | tb) if ta | tb else 1.0)
    best = []
    for a, b in pairs:  # entity match as search uses it: some entity of a matches some of b
        hit = any(
            overlap(x.terms, y.terms) >= 0.5 for x in a.axis("entities") for y in b.axis("entities")
        )
        best.append(float(hit))
    return {
        "pairs": float(len(pairs)),
        "intent_agreement": mean(intent),
        "topic_agreement": mean(topic),
        "entity_jaccard": mean(ents),
        "entity_match": mean(best),
        "overall": mean([mean(intent), mean(topic), mean(ents)]),
    }


# -- running -----------------------------------------------------------------------------------
@dataclass
class MinerRun:
    """Everything measured with one miner."""

    miner: str
    served_by: str = ""
    mining_ms_per_thought: float = 0.0
    results: dict[str, dict[str, list[QueryResult]]] = field(default_factory=dict)
    consistency: dict[str, float] = field(default_factory=dict)
    agreement: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    deterministic: float = 0.0
    failed_jobs: int = 0


def _ingest(memory: Memory, session: dict[str, Any]) -> tuple[str, dict[str, int]]:
    """One fixture session as a session of thoughts; returns its id and memory id -> number."""
    s = memory.start_session(session["title"])
    numbers = {}
    for text in session["thoughts"]:
        thought = memory.add_thought(s.id, text, mine="off")
        numbers[thought.memory.id] = thought.number
    return s.id, numbers


def axis_agreement(memory: Memory, sessions, *, miner: str) -> dict[str, dict[str, float]]:
    """How often the query's main value of each axis matches a thought's, for the relevant and
    the other thoughts (an axis helps a filter only when the first is far above the second)."""
    from localmem import attributes
    from localmem.attributes.mining import miner_for
    from localmem.attributes.normalise import overlap

    m = miner_for(memory, miner)
    counts: dict[str, dict[str, list[float]]] = {}
    for session, numbers in sessions:
        stored = attributes.stored(memory, list(numbers))
        for q in session["queries"]:
            qm = m.mine(q["text"], query=True)
            for mid, number in numbers.items():
                tm = stored.get(mid)
                if tm is None:
                    continue
                group = "relevant" if number in q["relevant"] else "other"
                same = {
                    "intent": qm.first("intent") == tm.mined.first("intent"),
                    "topic": qm.first("topic") == tm.mined.first("topic"),
                    "entities": any(
                        overlap(a.terms, b.terms) >= memory.config.attributes.entity_match
                        for a in qm.axis("entities")
                        for b in tm.mined.axis("entities")
                    ),
                }
                for axis, hit in same.items():
                    counts.setdefault(axis, {}).setdefault(group, []).append(float(hit))
    return {axis: {g: mean(v) for g, v in groups.items()} for axis, groups in counts.items()}


def run_dataset(
    memory: Memory,
    fixture: dict[str, Any],
    *,
    miner: str,
    mode: str,
    variations: Sequence[Variation] = VARIATIONS,
    agreement: dict | None = None,
) -> tuple[dict[str, list[QueryResult]], float, int]:
    """Ingest, mine and search one fixture; returns results per variation, ms per thought mined,
    and how many mining jobs failed. ``agreement`` (a dict) receives :func:`axis_agreement`."""
    from localmem.attributes.jobs import mine_pending, queue_mining

    ingested = [(s, *_ingest(memory, s)) for s in fixture["sessions"]]
    jobs = queue_mining(memory, which="missing", miner=miner)
    started = time.perf_counter()
    report = mine_pending(memory, jobs)
    per_thought = (time.perf_counter() - started) * 1000 / max(len(jobs), 1)
    out: dict[str, list[QueryResult]] = {v.name: [] for v in variations}
    for session, sid, numbers in ingested:
        size = len(numbers)
        tokens = {
            numbers[i.id]: memory.embedder.count_tokens(i.content)
            for i in memory.get_many(list(numbers))
        }
        for q in session["queries"]:
            for v in variations:
                t0 = time.perf_counter()
                result = memory.search(q["text"], k=size, session_id=sid, mode=mode, **v.options)
                ms = (time.perf_counter() - t0) * 1000
                ranked = [numbers[h.memory.id] for h in result.hits]
                fill = {numbers[h.memory.id] for h in result.hits if "fill" in h.flags}
                out[v.name].append(
                    QueryResult(
                        session["id"],
                        session.get("variety", "varied"),
                        q["text"],
                        q.get("complexity", "simple"),
                        frozenset(q["relevant"]),
                        ranked,
                        fill,
                        tokens,
                        size,
                        ms,
                    )
                )
    if agreement is not None:
        agreement.update(
            axis_agreement(memory, [(s, numbers) for s, _, numbers in ingested], miner=miner)
        )
    return out, per_thought, report["failed"]


def run_consistency(memory: Memory, *, miner: str) -> tuple[dict[str, float], float]:
    """Paraphrase agreement, and the share of texts that mine identically twice."""
    from localmem.attributes.mining import miner_for

    m = miner_for(memory, miner)
    pairs = [tuple(p) for p in load_fixture("paraphrases")["pairs"]]
    texts = [t for pair in pairs for t in pair]
    m.prepare(texts)
    mined = [(m.mine(a), m.mine(b)) for a, b in pairs]
    again = [m.mine(t) for t in texts]
    first = [x for pair in mined for x in pair]
    same = mean(float(a.attributes == b.attributes) for a, b in zip(first, again, strict=True))
    return consistency(mined), same


def run_miner(
    make_memory: Callable[[str], Memory],
    *,
    miner: str,
    mode: str = "dense",
    datasets: Sequence[str] = DATASETS,
    progress: Callable[[str], None] | None = None,
) -> MinerRun:
    """The whole protocol with one miner (``model-free`` or ``engine``)."""
    run = MinerRun(miner)
    for name in datasets:
        if progress:
            progress(f"{miner}: {name}")
        memory = make_memory(f"{miner}-{name}")
        try:
            from localmem.attributes.mining import miner_for

            run.served_by = miner_for(memory, miner).name
            agreement: dict = {}
            results, per_thought, failed = run_dataset(
                memory, load_fixture(name), miner=miner, mode=mode, agreement=agreement
            )
            run.agreement[name] = agreement
            run.results[name] = results
            run.mining_ms_per_thought = per_thought
            run.failed_jobs += failed
            if name == datasets[-1]:
                run.consistency, run.deterministic = run_consistency(memory, miner=miner)
        finally:
            memory.close()
    return run


def criteria(run: MinerRun, dataset: str) -> list[dict[str, Any]]:
    """The seed's success criteria for the seed variation against the baseline, pass or fail."""
    base = aggregate(run.results[dataset][BASELINE])
    seed = aggregate(run.results[dataset][SEED])
    token_change = (seed["tokens"] - base["tokens"]) / base["tokens"] if base["tokens"] else 0.0
    cons = run.consistency
    return [
        {
            "criterion": "Precision@5 improves by >= 20 points",
            "measured": f"{base['precision']:.2f} -> {seed['precision']:.2f} "
            f"({(seed['precision'] - base['precision']) * 100:+.0f} points)",
            "pass": seed["precision"] - base["precision"] >= 0.20,
        },
        {
            "criterion": "Recall stays above 80% (relevant thoughts surviving the filter)",
            "measured": f"{seed['filter_recall']:.2f}",
            "pass": seed["filter_recall"] > 0.80,
        },
        {
            "criterion": "Mining is consistent (identical when repeated; paraphrase agreement "
            ">= 0.7)",
            "measured": f"repeat {run.deterministic:.2f}; paraphrases {cons.get('overall', 0):.2f} "
            f"(intent {cons.get('intent_agreement', 0):.2f}, topic "
            f"{cons.get('topic_agreement', 0):.2f}, entities {cons.get('entity_jaccard', 0):.2f})",
            "pass": run.deterministic == 1.0 and cons.get("overall", 0.0) >= 0.7,
        },
        {
            "criterion": "Tokens retrieved drop by >= 30%",
            "measured": f"{base['tokens']:.0f} -> {seed['tokens']:.0f} "
            f"({token_change * 100:+.0f}%)",
            "pass": token_change <= -0.30,
        },
    ]


def breakdown(results: Sequence[QueryResult], key: str) -> dict[str, dict[str, float]]:
    """Metrics split by a query attribute (``complexity`` or ``variety``)."""
    groups: dict[str, list[QueryResult]] = {}
    for r in results:
        groups.setdefault(getattr(r, key), []).append(r)
    return {g: aggregate(rows) for g, rows in sorted(groups.items())}


def to_json(run: MinerRun) -> dict[str, Any]:
    """A run as plain data (for the JSON file beside the report)."""
    return {
        "miner": run.miner,
        "served_by": run.served_by,
        "mining_ms_per_thought": run.mining_ms_per_thought,
        "failed_jobs": run.failed_jobs,
        "deterministic": run.deterministic,
        "consistency": run.consistency,
        "axis_agreement": run.agreement,
        "datasets": {
            name: {v: aggregate(rows) for v, rows in res.items()}
            for name, res in run.results.items()
        },
        "criteria": {name: criteria(run, name) for name in run.results},
    }


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write results as indented JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
