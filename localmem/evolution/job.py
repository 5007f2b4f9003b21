"""The ``evolve`` background job: plan the neighbours, then apply one step at a time.

A job runs in small atomic units, so a crash anywhere resumes without applying anything twice:

1. the plan (the new memory's neighbours, most similar first) is written once;
2. each step asks for a decision (outside any transaction: a model call is slow), then writes
   the neighbour's new context, its EVOLVE history event, the link and the step's outcome in
   one transaction (the re-embedded vector goes to the index after the commit, as every update);
3. the job is marked done once no step is left.

A step whose neighbour was deleted meanwhile ends as ``gone``; a step the add's token budget
cannot pay for ends as ``over-budget``; an engine failure leaves the job ``failed`` with the
steps done so far kept, and ``localmem jobs retry`` resumes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localmem.evolution import decide, steps
from localmem.evolution.keyphrases import (
    idf,
    new_phrases,
    rare_filter,
    shared_phrases,
    stems_of,
)
from localmem.evolution.neighbours import find_neighbours
from localmem.store import history as history_rows
from localmem.store import memories
from localmem.store.links import add_link
from localmem.types import MemoryItem, embedding_text

if TYPE_CHECKING:
    from localmem.llm.base import Engine
    from localmem.store.jobs import Job
    from localmem.store.kernel import Kernel

KIND = "evolve"
ACTOR = "evolution"


def handle_evolve_job(kernel: Kernel, job: Job) -> None:
    """Run (or resume) the evolution a new memory causes; registered as job kind ``evolve``."""
    db = kernel.db
    source = _live(kernel, job.memory_id)
    if source is None:
        with kernel.writing():
            kernel.store.jobs.drop(job.id, "memory deleted before it could evolve others")
        return
    planned = steps.steps_of(db, source.id)
    if not planned:
        planned = _plan(kernel, source, job.id)
    engine = kernel.engine
    spent = sum(s.tokens for s in planned)
    todo = [s for s in planned if s.status == steps.PLANNED]
    # Model-free decisions are cheap: decide every step, then embed the new contexts in one
    # batch. A model's decision is expensive: apply each as soon as it is made.
    chunk = 1 if engine is not None else max(len(todo), 1)
    for start in range(0, len(todo), chunk):
        decided = []
        for step in todo[start : start + chunk]:
            decided.append(_decide(kernel, source, step, engine=engine, spent=spent))
            spent += decided[-1][2].tokens if decided[-1][2] else 0
        vectors = _embed_new_contexts(kernel, decided)
        for step, neighbour, outcome in decided:
            _apply(kernel, source, neighbour, step, outcome, vectors)
    with kernel.writing():
        kernel.store.jobs.done(job.id)


def _live(kernel: Kernel, memory_id: str | None) -> MemoryItem | None:
    """A memory that exists and is not deleted (else None: also for a job naming none)."""
    if memory_id is None:
        return None
    item = memories.by_ids(kernel, [memory_id]).get(memory_id)
    return None if item is None or item.deleted else item


def _plan(kernel: Kernel, source: MemoryItem, job_id: int) -> list[steps.Step]:
    config = kernel.config.evolution
    found = find_neighbours(
        kernel,
        source,
        k=config.neighbours,
        scope=config.scope,
        min_similarity=config.min_similarity,
    )
    with kernel.writing() as write:
        steps.plan(write.db, source.id, job_id, [(item.id, sim) for item, sim in found])
    return steps.steps_of(kernel.db, source.id)


def _phrases(kernel: Kernel, new: MemoryItem, old: MemoryItem) -> tuple[list[str], list[str]]:
    """Key phrases the memories share (rare enough in the store to mean something), and the
    ones the new memory adds to the old."""
    lexical = kernel.store.lexical
    df = lexical.document_frequencies(stems_of([new.content]))
    is_rare = rare_filter(df, lexical.doc_count, max_share=kernel.config.evolution.rare_share)
    n = max(lexical.doc_count, 1)

    def weight(s: str) -> float:
        return idf(df.get(s, 0), n)

    shared = shared_phrases(new.content, old.content, is_rare=is_rare, weight=weight)
    adds = new_phrases(new.content, old.text_for_embedding, weight=weight)
    return shared, adds


def _decide(
    kernel: Kernel, source: MemoryItem, step: steps.Step, *, engine: Engine | None, spent: int
) -> tuple[steps.Step, MemoryItem | None, decide.Outcome | None]:
    """The decision about one step: (step, neighbour or None if gone, outcome or None if over
    the token budget)."""
    config = kernel.config.evolution
    neighbour = _live(kernel, step.neighbour)
    if neighbour is None:
        return step, None, None
    shared, adds = _phrases(kernel, source, neighbour)
    outcome = decide.ask(
        source,
        neighbour,
        similarity=step.similarity,
        shared=shared,
        adds=adds,
        config=kernel.config,
        engine=engine,
        tokens_left=config.max_tokens_per_add - spent,
    )
    return step, neighbour, outcome


def _rewrites(kernel: Kernel, neighbour: MemoryItem | None, outcome) -> bool:
    return (
        neighbour is not None
        and outcome is not None
        and outcome.decision.update
        and kernel.config.evolution.rewrite_context
        and (outcome.decision.context or "") != (neighbour.context or "")
    )


def _embed_new_contexts(kernel: Kernel, decided) -> dict[str, Any]:
    """Vectors of the neighbours' texts with their new contexts, embedded in one batch."""
    texts = [
        embedding_text(nb.content, out.decision.context)
        for _, nb, out in decided
        if _rewrites(kernel, nb, out)
    ]
    if not texts:
        return {}
    return dict(zip(texts, kernel.embedder.embed_batch(texts), strict=True))


def _apply(
    kernel: Kernel,
    source: MemoryItem,
    neighbour: MemoryItem | None,
    step: steps.Step,
    outcome: decide.Outcome | None,
    vectors: dict[str, Any],
) -> None:
    """Write one step's decision: context + history + link + step outcome, atomically."""
    db = kernel.db
    config = kernel.config.evolution
    if neighbour is None or outcome is None:
        status, why = (
            (steps.GONE, "neighbour deleted before its step ran")
            if neighbour is None
            else (steps.OVER_BUDGET, f"token budget of {config.max_tokens_per_add} per add spent")
        )
        with kernel.writing():
            steps.record(db, step, status, reason=why)
        return
    decision = outcome.decision
    rewrite = decision.update and config.rewrite_context
    link = decision.link or rewrite
    cost = steps.Cost(
        served_by=outcome.served_by,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        reason=decision.link_reason or None,
    )

    def write_rest(history_id: int | None) -> None:
        if link:
            add_link(
                db,
                source.id,
                neighbour.id,
                weight=step.similarity,
                reason=decision.link_reason or "related",
            )
        status = steps.UPDATED if history_id else (steps.LINKED if link else steps.UNCHANGED)
        steps.record(db, step, status, history_id=history_id, **cost)

    if not _rewrites(kernel, neighbour, outcome):
        with kernel.writing():
            write_rest(None)
        return

    def within_update() -> None:
        write_rest(history_rows.latest_history_id(db, neighbour.id, event="EVOLVE"))

    memories.update(
        kernel,
        neighbour.id,
        context=decision.context,
        actor=ACTOR,
        event="EVOLVE",
        info={
            "source": source.id,
            "similarity": round(step.similarity, 4),
            "served_by": outcome.served_by,
            "reason": decision.link_reason,
        },
        also=within_update,
        embedded=vectors,
    )
