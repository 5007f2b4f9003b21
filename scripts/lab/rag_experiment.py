"""Seed 003's experiments A-D on the agentmemory data, run on the local stack.

Every configuration of the published table is run twice: on chunks made by our chunkers (fixed
and recursive, token counts from the embedder's tokenizer; relevance by overlap with the gold
chunks) and on the exact published chunks (relevance by gold chunk id, so Hit@3 and MRR compare
directly with ``published_results.json``; only the embedder differs).

Each configuration asks the 18 questions in order through :class:`localmem.agent.Agent` with its
own long-term scope (facts, entities and relations grow over the questions) and, as the
published token counts suggest, a fresh short-term conversation per question (``stm="shared"``
keeps one conversation for all of them). Stores with the same chunks and embedder are shared
between configurations. The published table repeats one setup (fixed 256/50, small embedding,
STM + LTM) in A, B, C and D; it is run once and its numbers are shown in each place, marked
``same_as`` (with a deterministic answerer the repeats could only differ by timing noise).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lab.agentmemory import (
    EvalQuestion,
    PublishedChunk,
    Span,
    build_store,
    gold_spans,
    hit_rate,
    load_corpus,
    load_published_chunks,
    load_published_results,
    load_questions,
    reciprocal_rank,
    relevant_by_overlap,
)
from lab.stats import percentile
from localmem.config import EmbedderConfig
from localmem.errors import InputError


@dataclass(frozen=True)
class RagConfig:
    """One configuration of the published table."""

    name: str
    experiment: str
    label: str
    strategy: str
    size: int
    overlap: int
    embedder: str = "minilm"  # or "second"
    use_stm: bool = True
    use_ltm: bool = True

    @property
    def setup(self) -> tuple:
        """What determines the outcome: configurations with the same setup are run once."""
        return (self.strategy, self.size, self.overlap, self.embedder, self.use_stm, self.use_ltm)

    @property
    def chunking(self) -> str:
        """The published chunking with the same strategy and size (its gold ids apply)."""
        return f"{self.strategy}_{self.size}"


CONFIGS: tuple[RagConfig, ...] = (
    RagConfig("exp_a_small_fixed", "A", "Small Fixed (256)", "fixed", 256, 50),
    RagConfig("exp_a_large_fixed", "A", "Large Fixed (1024)", "fixed", 1024, 100),
    RagConfig("exp_b_small_fixed", "B", "Small Fixed (256)", "fixed", 256, 50),
    RagConfig("exp_b_recursive", "B", "Recursive (512)", "recursive", 512, 50),
    RagConfig("exp_c_small", "C", "Small Embedding", "fixed", 256, 50),
    RagConfig("exp_c_large", "C", "Large Embedding", "fixed", 256, 50, embedder="second"),
    RagConfig("exp_d_stm_only", "D", "STM Only", "fixed", 256, 50, use_ltm=False),
    RagConfig("exp_d_stm_ltm", "D", "STM + LTM", "fixed", 256, 50),
)
EXPERIMENTS = ("A", "B", "C", "D")
SOURCES = ("ours", "published")


@dataclass
class QuestionRun:
    """One question of one run."""

    question: str
    retrieved: list[dict[str, Any]]
    hit: float
    rr: float
    article_hit: float
    answer: str | None = None
    similarity: float | None = None
    served_by: str | None = None
    seconds: float = 0.0
    retrieval_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Run:
    """One configuration on one kind of chunks."""

    config: str
    experiment: str
    label: str
    chunks: str  # "ours" | "published"
    embedder: str
    n_chunks: int
    mean_chunk_tokens: float
    questions: list[QuestionRun] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    skipped: str | None = None
    same_as: str | None = None  # an identical configuration already run: its numbers are reused


def summarize(questions: Sequence[QuestionRun]) -> dict[str, Any]:
    """Means and percentiles of one run (pure)."""
    if not questions:
        return {}
    secs = np.array([q.seconds for q in questions])
    sims = [q.similarity for q in questions if q.similarity is not None]
    served = sorted({q.served_by for q in questions if q.served_by})
    return {
        "hit_rate": float(np.mean([q.hit for q in questions])),
        "mrr": float(np.mean([q.rr for q in questions])),
        "article_hit_rate": float(np.mean([q.article_hit for q in questions])),
        "similarity": float(np.mean(sims)) if sims else None,
        "latency_p50_s": percentile(secs, 50),
        "latency_p95_s": percentile(secs, 95),
        "retrieval_p50_ms": percentile([q.retrieval_ms for q in questions], 50),
        "tokens_in_total": int(sum(q.prompt_tokens for q in questions)) if served else None,
        "tokens_out_total": int(sum(q.completion_tokens for q in questions)) if served else None,
        "served_by": served,
        "questions": len(questions),
    }


def run_experiment(
    data: str | Path,
    *,
    work: str | Path,
    k: int = 3,
    experiments: Sequence[str] = EXPERIMENTS,
    sources: Sequence[str] = SOURCES,
    second_model: str | None = None,
    engine: Any = None,
    answers: bool = True,
    stm: str = "per-question",
    embedder: Any = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the configurations; returns a JSON-ready dict (runs, published, settings).

    Args:
        data: The agentmemory folder.
        work: A folder for the stores (emptied first).
        k: Chunks retrieved per question (Hit@k, MRR within the top k).
        experiments: Which of A-D.
        sources: ``ours`` (our chunkers), ``published`` (the exact published chunks).
        second_model: A local sentence-transformers folder for experiment C's second column.
        engine: The model engine for answers (None: the model-free extractive answer).
        answers: False skips answering (retrieval metrics and search latency only).
        stm: ``per-question`` (a fresh conversation for every question) or ``shared``.
        embedder: The MiniLM embedder to reuse (default: loaded here).
        progress: Called with one line per finished run.
    """
    from localmem.embed import make_embedder

    _check_options(experiments, sources, stm)
    articles = load_corpus(data)
    questions = load_questions(data)
    published = load_published_results(data)
    chunk_sets = {c: load_published_chunks(data, c, articles) for c in _chunkings(experiments)}
    minilm = embedder or make_embedder()
    embedders = {"minilm": minilm}
    if second_model:
        embedders["second"] = make_embedder(EmbedderConfig(model=second_model))
    work = Path(work)
    if work.exists():
        shutil.rmtree(work)
    configs = [c for c in CONFIGS if c.experiment in experiments]
    runs: list[Run] = []
    stores: dict[tuple, Any] = {}
    done: dict[tuple, Run] = {}
    try:
        for cfg in configs:
            for source in sources:
                if cfg.embedder not in embedders:
                    runs.append(_skipped(cfg, source))
                    continue
                if (source, cfg.setup) in done:
                    first = done[(source, cfg.setup)]
                    runs.append(_reused(first, cfg))
                    continue
                key = (source, cfg.strategy, cfg.size, cfg.overlap, cfg.embedder)
                if key not in stores:
                    store_at = work / "-".join(map(str, key))
                    chunks, embed = chunk_sets[cfg.chunking], embedders[cfg.embedder]
                    stores[key] = build_store(store_at, source, cfg, articles, chunks, embed)
                run = _run(
                    stores[key],
                    cfg,
                    source,
                    questions,
                    chunk_sets[cfg.chunking],
                    k=k,
                    engine=engine,
                    answers=answers,
                    stm=stm,
                    minilm=minilm,
                )
                runs.append(run)
                done[(source, cfg.setup)] = run
                if progress:
                    progress(_progress_line(run, cfg, source, k))
    finally:
        for mem in stores.values():
            mem.close()
    return {
        "settings": {
            "k": k,
            "stm": stm,
            "answers": bool(answers),
            "embedders": {n: e.name for n, e in embedders.items()},
            "second_model": second_model,
            "articles": len(articles),
            "questions": len(questions),
        },
        "runs": [asdict(r) for r in runs],
        "published": {c.name: published.get(c.name) for c in configs},
    }


def _check_options(experiments: Sequence[str], sources: Sequence[str], stm: str) -> None:
    """Raise InputError for an unknown experiment, chunk source or conversation mode."""
    bad = set(experiments) - set(EXPERIMENTS)
    if bad:
        raise InputError(f"unknown experiment(s) {sorted(bad)}; known: {', '.join(EXPERIMENTS)}")
    if set(sources) - set(SOURCES) or not sources:
        raise InputError(f"chunk sources must be among: {', '.join(SOURCES)}")
    if stm not in ("per-question", "shared"):
        raise InputError(f"stm must be per-question or shared, not {stm!r}")


def _progress_line(run: Run, cfg: RagConfig, source: str, k: int) -> str:
    """One finished run as the progress callback is told it."""
    s = run.summary
    return (
        f"{cfg.name} [{source}] hit@{k} {s['hit_rate']:.3f} "
        f"mrr {s['mrr']:.3f} p50 {s['latency_p50_s']:.3f}s"
    )


def _chunkings(experiments: Sequence[str]) -> list[str]:
    return sorted({c.chunking for c in CONFIGS if c.experiment in experiments})


def _reused(first: Run, cfg: RagConfig) -> Run:
    return Run(
        cfg.name,
        cfg.experiment,
        cfg.label,
        first.chunks,
        first.embedder,
        first.n_chunks,
        first.mean_chunk_tokens,
        questions=[],
        summary=dict(first.summary),
        same_as=first.config,
    )


def _skipped(cfg: RagConfig, source: str) -> Run:
    return Run(
        cfg.name,
        cfg.experiment,
        cfg.label,
        source,
        "(none)",
        0,
        0.0,
        skipped="no second local sentence-transformers model on this machine "
        "(pass --second-model PATH)",
    )


def _run(
    mem: Any,
    cfg: RagConfig,
    source: str,
    questions: Sequence[EvalQuestion],
    published: Sequence[PublishedChunk],
    *,
    k: int,
    engine: Any,
    answers: bool,
    stm: str,
    minilm: Any,
) -> Run:
    from localmem.agent import Agent

    by_id = {c.id: c for c in published}
    chunks = mem.list(kind="chunk", limit=100_000)
    run = Run(
        cfg.name,
        cfg.experiment,
        cfg.label,
        source,
        mem.embedder.name,
        len(chunks),
        float(np.mean([c.metadata.get("tokens", 0) for c in chunks])) if chunks else 0.0,
    )
    agent = Agent(
        mem,
        engine,
        use_stm=cfg.use_stm,
        use_ltm=cfg.use_ltm,
        scope=cfg.name,
        config=mem.config.conversation.model_copy(update={"retrieve_k": k}),
    )
    agent._retrieve("warm up", k)  # load what the first search loads, outside the timings
    for i, q in enumerate(questions):
        gold = gold_spans(q, cfg.chunking, by_id)
        ids = set(q.gold_chunk_ids.get(cfg.chunking, ()))
        if answers:
            conversation = f"{cfg.name}:{i}" if stm == "per-question" else cfg.name
            ans = agent.ask(q.question, conversation_id=conversation, k=k)
            items = [mem.get(s.memory_id) for s in ans.sources]
            seconds, retrieval_ms = ans.seconds, ans.retrieval_ms
        else:
            start = time.perf_counter()
            items = [h.memory for h in agent._retrieve(q.question, k)]
            seconds = time.perf_counter() - start
            retrieval_ms = seconds * 1000
        flags = [_relevant(m, source, ids, gold) for m in items]
        titles = [m.metadata.get("title") for m in items]
        qr = QuestionRun(
            q.question,
            [
                {"chunk_id": m.metadata.get("chunk_id"), "title": t, "relevant": f}
                for m, t, f in zip(items, titles, flags, strict=True)
            ],
            hit_rate(flags, k),
            reciprocal_rank(flags, k),
            1.0 if any(t in q.gold_articles for t in titles[:k]) else 0.0,
            seconds=seconds,
            retrieval_ms=retrieval_ms,
        )
        if answers:
            qr.answer, qr.served_by = ans.answer, ans.served_by
            qr.prompt_tokens, qr.completion_tokens = ans.prompt_tokens, ans.completion_tokens
            vecs = minilm.embed_batch([ans.answer, q.reference_answer])
            qr.similarity = float(np.dot(vecs[0], vecs[1]))
        run.questions.append(qr)
    run.summary = summarize(run.questions)
    if answers:
        run.summary["tokens_counted_by"] = ans.tokens_counted_by
    return run


def _relevant(item: Any, source: str, gold_ids: set[str], gold: Sequence[Span]) -> bool:
    meta = item.metadata
    if source == "published":
        return meta.get("chunk_id") in gold_ids
    if "start" not in meta:
        return False
    return relevant_by_overlap(Span(meta.get("title", ""), meta["start"], meta["end"]), gold)
