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
from localmem.evolution.keyphrases import idf, rare_filter, shared_phrases, stems_of
from localmem.evolution.links import add_link
from localmem.evolution.neighbours import find_neighbours
from localmem.store import records
from localmem.types import MemoryItem

if TYPE_CHECKING:
    from localmem.memory import Memory
    from localmem.store.jobs import Job

KIND = "evolve"
ACTOR = "evolution"


def engine_of(memory: Memory) -> Any:
    """The memory's model engine, or None (model-free) when there is none in this build."""
    try:
        return memory.engine
    except ImportError:  # a build without the model engine package
        return None


def handle_evolve_job(memory: Memory, job: Job) -> None:
    """Run (or resume) the evolution a new memory causes; registered as job kind ``evolve``."""
    db = memory.store.db
    found = records.fetch(db, "id = ?", [job.memory_id])
    if not found or found[0].deleted:
        with db.transaction():
            memory.store.jobs.drop(job.id, "memory deleted before it could evolve others")
        return
    source = found[0]
    planned = steps.steps_of(db, source.id)
    if not planned:
        planned = _plan(memory, source, job.id)
    engine = engine_of(memory)
    spent = sum(s.tokens for s in planned)
    for step in planned:
        if step.status != steps.PLANNED:
            continue
        spent += _run_step(memory, source, step, engine=engine, spent=spent)
    with db.transaction():
        memory.store.jobs.done(job.id)


def _plan(memory: Memory, source: MemoryItem, job_id: int) -> list[steps.Step]:
    config = memory.config.evolution
    found = find_neighbours(
        memory,
        source,
        k=config.neighbours,
        scope=config.scope,
        min_similarity=config.min_similarity,
    )
    db = memory.store.db
    with db.transaction():
        steps.plan(db, source.id, job_id, [(item.id, sim) for item, sim in found])
    return steps.steps_of(db, source.id)


def _shared(memory: Memory, new: MemoryItem, old: MemoryItem) -> list[str]:
    """Key phrases the two memories share that are rare enough in the store to mean something."""
    lexical = memory.store.lexical
    df = lexical.document_frequencies(stems_of([new.content]))
    is_rare = rare_filter(df, lexical.doc_count, max_share=memory.config.evolution.rare_share)
    n = max(lexical.doc_count, 1)
    return shared_phrases(
        new.content, old.content, is_rare=is_rare, weight=lambda s: idf(df.get(s, 0), n)
    )


def _run_step(
    memory: Memory, source: MemoryItem, step: steps.Step, *, engine: Any, spent: int
) -> int:
    """Decide and apply one step; returns the model tokens it spent."""
    db = memory.store.db
    config = memory.config.evolution
    found = records.fetch(db, "id = ?", [step.neighbour])
    if not found or found[0].deleted:
        with db.transaction():
            steps.record(db, step, steps.GONE, reason="neighbour deleted before its step ran")
        return 0
    neighbour = found[0]
    outcome = decide.ask(
        source,
        neighbour,
        similarity=step.similarity,
        shared=_shared(memory, source, neighbour),
        config=config,
        engine=engine,
        tokens_left=config.max_tokens_per_add - spent,
    )
    if outcome is None:
        with db.transaction():
            steps.record(
                db,
                step,
                steps.OVER_BUDGET,
                reason=f"token budget of {config.max_tokens_per_add} per add spent",
            )
        return 0
    _apply(memory, source, neighbour, step, outcome)
    return outcome.prompt_tokens + outcome.completion_tokens


def _apply(
    memory: Memory,
    source: MemoryItem,
    neighbour: MemoryItem,
    step: steps.Step,
    outcome: decide.Outcome,
) -> None:
    """Write one step's decision: context + history + link + step outcome, atomically."""
    db = memory.store.db
    decision = outcome.decision
    rewrite = decision.update and memory.config.evolution.rewrite_context
    link = decision.link or rewrite
    cost = {
        "served_by": outcome.served_by,
        "prompt_tokens": outcome.prompt_tokens,
        "completion_tokens": outcome.completion_tokens,
        "reason": decision.link_reason or None,
    }

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

    if not rewrite or (decision.context or "") == (neighbour.context or ""):
        with db.transaction():
            write_rest(None)
        return

    def within_update() -> None:
        history_id = db.scalar(
            "SELECT max(id) FROM history WHERE memory_id = ? AND event = 'EVOLVE'", [neighbour.id]
        )
        write_rest(int(history_id))

    memory.update(
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
    )
