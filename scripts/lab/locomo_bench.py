"""The LoCoMo benchmark: retrieval configurations compared in one run, answers with a model.

One store holds every conversation, each under its own ``user_id`` (the sample id); every
search is scoped to its conversation by that filter, as an application serving several people
would do. A question is asked the day after its conversation's last session (``now``).

Latency: each query's embedding is timed once without the embedder's cache (``embed``), then
the search runs with the vector cached, so the table shows the embedding and the rest of the
pipeline (``search``) apart as well as together.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lab.locomo import Conversation, asked_at, ensure_ingested
from lab.retrieval import KS, QuestionResult, summarize
from localmem.errors import InputError

if TYPE_CHECKING:
    from localmem.memory import Memory


@dataclass(frozen=True)
class BenchConfig:
    """One retrieval configuration: search options over the store's defaults."""

    name: str
    options: dict[str, Any]
    description: str


_OFF = {"temporal": False, "rerank": "off"}


def _configs() -> dict[str, BenchConfig]:
    everything = {"expand": "auto", "temporal": True, "rerank": "auto"}
    rows = [
        BenchConfig("dense", {"mode": "dense"}, "MiniLM cosine only"),
        BenchConfig("bm25", {"mode": "lexical"}, "BM25 only"),
        BenchConfig("hybrid-rrf", {"mode": "hybrid", "fusion": "rrf"}, "reciprocal-rank fusion"),
        BenchConfig("hybrid", {"mode": "hybrid"}, "dense + BM25, the store's default fusion"),
        BenchConfig("+expand", {"expand": "auto"}, "hybrid + query expansion"),
        BenchConfig("+temporal", {"temporal": True}, "hybrid + temporal attention"),
        BenchConfig("+rerank", {"rerank": "auto"}, "hybrid + reranking"),
        BenchConfig(
            "+expand+temporal",
            {"expand": "auto", "temporal": True},
            "expansion and temporal attention together (what the reranker reranks)",
        ),
        BenchConfig(
            "+temporal+rerank",
            {"temporal": True, "rerank": "auto"},
            "every stage but expansion (which costs the most time and adds no recall here)",
        ),
        BenchConfig("everything", everything, "every stage on"),
        BenchConfig("default", {}, "what search(q) runs with no options"),
    ]
    out: dict[str, BenchConfig] = {}
    for row in rows:
        # each row names its stages: the ones it does not name are off (since issue 18 a plain
        # search(q) runs temporal attention and the reranker, which "hybrid" must not)
        if row.name != "default":
            row = BenchConfig(row.name, {**_OFF, **row.options}, row.description)
        if row.name in out:
            raise ValueError(f"duplicate benchmark configuration {row.name}")
        out[row.name] = row
    return out


#: configuration name -> search options; the run compares them in this order
CONFIGS: dict[str, BenchConfig] = _configs()


def register_config(config: BenchConfig, *, before: str | None = "everything") -> None:
    """Add a configuration (e.g. a stage another issue brings); names must be new."""
    if config.name in CONFIGS:
        raise ValueError(f"benchmark configuration {config.name!r} already exists")
    items = list(CONFIGS.items())
    at = next((i for i, (n, _) in enumerate(items) if n == before), len(items))
    items.insert(at, (config.name, config))
    CONFIGS.clear()
    CONFIGS.update(items)


def pick_configs(names: Sequence[str] | None) -> list[BenchConfig]:
    """The named configurations (all when None); an unknown name lists the known ones."""
    if not names:
        return list(CONFIGS.values())
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise InputError(
            f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}"
        )
    return [CONFIGS[n] for n in names]


@dataclass
class RunTotals:
    """What a run saw and skipped."""

    conversations: int = 0
    turns: int = 0
    questions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, why: str, n: int = 1) -> None:
        """Count ``n`` items skipped for a reason."""
        if n:
            self.skipped[why] = self.skipped.get(why, 0) + n


def run_config(
    memory: Memory,
    convs: Sequence[Conversation],
    config: BenchConfig,
    *,
    k: int = max(KS),
    limit: int | None = None,
    budget_tokens: int | None = None,
    weights: dict[str, str] | None = None,
    embed_ms: dict[str, float] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[QuestionResult], int]:
    """Search every scorable question (categories 1-4 with evidence) of every conversation.

    ``weights`` maps a sample id to the model-free reranker weights to rank it with (the
    held-out weights of :func:`heldout_reranker`); other conversations use the configured ones.
    ``embed_ms`` keeps each query's embedding time across configurations.
    """
    measured = {} if embed_ms is None else embed_ms
    results: list[QuestionResult] = []
    no_evidence = 0
    for conv in convs:
        with reranker_weights(memory, (weights or {}).get(conv.sample_id)):
            no_evidence += _run_conversation(
                memory, conv, config, k, limit, budget_tokens, results, measured
            )
        if progress:
            progress(f"{config.name}: {conv.sample_id} done")
    return results, no_evidence


@contextmanager
def reranker_weights(memory: Memory, path: str | None) -> Iterator[None]:
    """Search with the model-free reranker weights in ``path`` for a while (None: unchanged)."""
    saved = memory.config
    if path is not None:
        memory.config = saved.with_updates(search={"reranker_weights": path})
    try:
        yield
    finally:
        memory.config = saved


def heldout_reranker(
    memory: Memory,
    convs: Sequence[Conversation],
    folder: Path,
    *,
    progress: Callable[[str], None] | None = None,
) -> dict[str, str]:
    """Leave-one-conversation-out reranker weights: for each conversation, weights fitted on
    the others' questions, written to ``folder``; returns ``{sample_id: weights file}``.

    So a configuration that reranks is measured on conversations its weights never saw.
    """
    from lab import reranker_training as training

    if len({c.sample_id for c in convs}) < 2:
        raise InputError("held-out reranker weights need at least two conversations")
    names = list(training.DEFAULT_FEATURES)
    examples = training.collect(memory, convs, names, training.PIPELINE, progress=progress)
    try:
        folds = training.heldout_weights(examples, names)
    except ValueError as exc:
        raise InputError(f"cannot fit held-out reranker weights: {exc}") from None
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for sample_id, weights in folds.items():
        path = folder / f"reranker-without-{sample_id}.json"
        path.write_text(json.dumps({"weights": weights}, indent=2) + "\n", encoding="utf-8")
        out[sample_id] = str(path)
    return out


def embedding_ms(memory: Memory, text: str, measured: dict[str, float]) -> float:
    """Milliseconds to embed a query, measured once per text (in ``measured``) without the
    cache, which held-out training or an earlier configuration may have filled; the vector is
    left in the embedder's cache, so the search that follows measures the rest alone."""
    if text not in measured:
        t0 = time.perf_counter()
        memory.embedder.embed_batch([text])
        measured[text] = (time.perf_counter() - t0) * 1000
    memory.embedder.embed_query(text)
    return measured[text]


def _run_conversation(
    memory: Memory,
    conv: Conversation,
    config: BenchConfig,
    k: int,
    limit: int | None,
    budget_tokens: int | None,
    results: list[QuestionResult],
    measured: dict[str, float],
) -> int:
    """Search one conversation's questions into ``results``; returns those without evidence."""
    no_evidence = 0
    now = asked_at(conv)
    questions = [q for q in conv.questions if q.category in (1, 2, 3, 4)]
    if limit is not None:
        questions = questions[:limit]
    for q in questions:
        if not q.evidence:
            no_evidence += 1
            continue
        embed_ms = embedding_ms(memory, q.question, measured)
        options = dict(config.options, user_id=conv.sample_id, now=now)
        if budget_tokens is not None:
            options["budget_tokens"] = budget_tokens
        result = memory.search(q.question, k=k, **options)
        stage_ms = {"embed": embed_ms}
        for report in result.stages:
            stage_ms[report.stage] = stage_ms.get(report.stage, 0.0) + report.ms
        stage_ms["search"] = result.total_ms
        results.append(
            QuestionResult(
                conv.sample_id,
                q.category,
                q.question,
                q.evidence,
                [h.memory.metadata.get("dia_id", "") for h in result.hits],
                embed_ms + result.total_ms,
                stage_ms,
                result.packed_tokens,
            )
        )
    return no_evidence


def run_retrieval(
    memory: Memory,
    convs: Sequence[Conversation],
    configs: Sequence[BenchConfig],
    *,
    limit: int | None = None,
    budget_tokens: int | None = None,
    heldout: Path | None = None,
    progress: Callable[[str], None] | None = None,
    plain: bool = False,
) -> dict[str, Any]:
    """Ingest what is missing, then run each configuration; returns the JSON-ready results.

    ``plain`` stores the turns as plain text (see
    :func:`lab.locomo.ingest_conversation`).

    With ``heldout`` (a folder for the weight files), configurations that use the model-free
    reranker rank each conversation with weights fitted on the other ones
    (:func:`heldout_reranker`); otherwise with the configured (shipped) weights.
    """
    totals = RunTotals()
    for conv in convs:
        added = ensure_ingested(memory, conv, plain=plain)
        totals.conversations += 1
        totals.turns += len(conv.turns)
        for why, n in conv.skipped.items():
            totals.skip(why, n)
            if progress:
                progress(f"{conv.sample_id}: skipped {n} x {why}")
        for problem in conv.problems:
            if progress:
                progress(f"skipped: {problem}")
        no_evidence = sum(
            1 for q in conv.questions if q.category in (1, 2, 3, 4) and not q.evidence
        )
        if progress and no_evidence:
            progress(f"{conv.sample_id}: skipped {no_evidence} x question without evidence")
        if progress and added:
            progress(f"ingested {conv.sample_id}: {added} turns")
    weights = None
    reranker = (
        "shipped weights"
        if memory.config.search.reranker_weights is None
        else (f"weights from {memory.config.search.reranker_weights}")
    )
    if heldout is not None and any(_model_free_rerank(memory, c) for c in configs):
        weights = heldout_reranker(memory, convs, heldout, progress=progress)
        reranker = "held out: each conversation ranked with weights fitted on the others"
    summaries: dict[str, Any] = {}
    per_question: dict[str, list[dict[str, Any]]] = {}
    embed_ms: dict[str, float] = {}
    for config in configs:
        results, no_evidence = run_config(
            memory,
            convs,
            config,
            limit=limit,
            budget_tokens=budget_tokens,
            weights=weights if _model_free_rerank(memory, config) else None,
            embed_ms=embed_ms,
            progress=progress,
        )
        if config is configs[0]:
            totals.questions = len(results)
            totals.skip("question without evidence", no_evidence)
        if not results:
            raise InputError("no question could be scored (none in categories 1-4 with evidence)")
        summary = summarize(results)
        for group in summary.values():  # the pipeline without the query embedding
            group["search_p50_ms"] = group["stage_p50_ms"]["search"]
            group["search_p95_ms"] = group["stage_p95_ms"]["search"]
        summaries[config.name] = summary
        per_question[config.name] = [
            {"sample_id": r.sample_id, "category": r.category, "retrieved": r.retrieved[:10]}
            for r in results
        ]
    return {
        "configs": {c.name: {"options": c.options, "description": c.description} for c in configs},
        "summaries": summaries,
        "totals": totals.__dict__,
        "reranker": reranker,
        "reranker_files": weights or {},
        "per_question": per_question,
    }


def _model_free_rerank(memory: Memory, config: BenchConfig) -> bool:
    mode = config.options.get("rerank", memory.config.search.rerank)  # unnamed: the store's
    return mode == "model-free" or (mode == "auto" and memory.engine is None)
