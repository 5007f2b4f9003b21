"""A-Mem on LoCoMo: evidence recall@k with evolution and link expansion, against without.

Each conversation is ingested once (every turn a ``message`` memory); the store is then copied
and every turn, in order, evolves its older neighbours in the copy, as it would have had the
turns been added live with ``evolve=True``. A second copy evolves with ``rewrite_context=False``
(links only), which separates the effect of rewritten contexts from that of link expansion.
Configurations compared, all with the same hybrid search:

- ``baseline``: no evolution;
- ``evolved``: evolved contexts, no link expansion;
- ``evolved+links``: evolved contexts and the ``links`` search stage;
- ``links-only+links``: original contexts, links made by evolution, the ``links`` stage.

The time evolution takes is measured per turn.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lab.locomo import Conversation, ingest_conversation, load_locomo
from lab.retrieval import QuestionResult, run_questions, summarize

if TYPE_CHECKING:
    from localmem.memory import Memory

#: configuration -> (store variant, search options)
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "baseline": ("plain", {}),
    "evolved": ("evolved", {}),
    "evolved+links": ("evolved", {"links": True}),
    "links-only+links": ("links-only", {"links": True}),
}
VARIANTS = {"evolved": {}, "links-only": {"rewrite_context": False}}


def evolve_all(memory: Memory, *, progress: Callable[[int, int], None] | None = None) -> dict:
    """Evolve every memory of a store in the order they were added; returns counts and time."""
    from localmem import evolution
    from localmem.evolution import KIND

    everything = memory.list(limit=memory.count() + 1, include_deleted=True)
    ids = [item.id for item in sorted(everything, key=lambda item: item.label)]
    t0 = time.perf_counter()
    evolution.queue(memory, ids)  # as `add_many(..., evolve=True)` queues them when deferred
    done = 0
    while done < len(ids):
        report = memory.run_jobs(kinds=[KIND], limit=25)
        if report.failed:
            raise RuntimeError(f"{report.failed} evolution job(s) failed; see `localmem jobs`")
        done += report.done + report.dropped
        if progress:
            progress(done, len(ids))
        if report.done + report.dropped == 0:
            break
    seconds = time.perf_counter() - t0
    return {
        "memories": len(ids),
        "seconds": seconds,
        "ms_per_memory": 1000 * seconds / max(len(ids), 1),
        "steps": evolution.totals(memory).steps,
        "links": memory.stats()["links"],
    }


def run_locomo(
    path: str | Path,
    make_memory: Callable[..., Memory],
    workdir: Path,
    *,
    conversations: int | None = None,
    k: int = 20,
    progress: Callable[[str], Callable[[int, int], None]] | None = None,
) -> dict[str, Any]:
    """Run every configuration on every conversation; returns summaries and evolution costs.

    ``make_memory(path, **evolution_fields)`` opens a store with those evolution settings.
    """
    convs: list[Conversation] = load_locomo(path)[: conversations or None]
    results: dict[str, list[QuestionResult]] = {name: [] for name in CONFIGS}
    costs: dict[str, dict[str, Any]] = {}
    skipped = 0
    for conv in convs:
        plain = workdir / f"{conv.sample_id}-plain"
        mem = make_memory(plain)
        try:
            ingest_conversation(mem, conv)
        finally:
            mem.close()
        for variant, fields in VARIANTS.items():
            target = workdir / f"{conv.sample_id}-{variant}"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(plain, target)
            mem = make_memory(target, **fields)
            try:
                bar = progress(f"{conv.sample_id} {variant}") if progress else None
                costs[f"{conv.sample_id}/{variant}"] = evolve_all(mem, progress=bar)
            finally:
                mem.close()
        for name, (variant, options) in CONFIGS.items():
            fields = VARIANTS.get(variant, {})
            mem = make_memory(workdir / f"{conv.sample_id}-{variant}", **fields)
            try:
                found, skip = run_questions(mem, conv, options, k=k)
            finally:
                mem.close()
            results[name] += found
            if name == "baseline":
                skipped += skip
    return {
        "conversations": [c.sample_id for c in convs],
        "questions": len(results["baseline"]),
        "skipped_no_evidence": skipped,
        "summaries": {name: summarize(rows) for name, rows in results.items()},
        "evolution": costs,
    }
