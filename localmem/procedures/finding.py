"""Finding procedures for a task: the vector index over trigger memories, then the score.

The nearest triggers come from a dense search restricted to memories of kind ``procedure``;
each active procedure among them is scored by :func:`localmem.procedures.scoring.match_score`
(trigger cosine, task-type agreement, record). A threshold turns the ranking into "this one"
or "none".
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from localmem import validate
from localmem.errors import InputError
from localmem.procedures import rows, scoring
from localmem.procedures.model import ProcedureMatch
from localmem.procedures.tasktypes import check_task_type, classify
from localmem.retrieval.pipeline import search

if TYPE_CHECKING:
    from localmem.store.kernel import Kernel

#: where a task that needs several procedures splits into parts
_PARTS = re.compile(r"\n+|;\s+|\.\s+(?=[A-Z])|,?\s+(?:and then|then|after that|finally)\s+")


def matches(
    kernel: Kernel,
    task: str,
    *,
    k: int = 10,
    task_type: str | None = None,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> list[ProcedureMatch]:
    """Active procedures scored for ``task``, best first, no threshold applied."""
    task = validate.content(task, max_chars=kernel.config.store.max_content_chars, what="task")
    validate.positive_int(k, "k", maximum=1000)
    wanted = task_type_of(kernel, task, task_type)
    db = kernel.db
    if not rows.active_count(db):
        return []
    cfg = kernel.config.procedures
    hits = search(
        kernel,
        task,
        k=max(k, cfg.candidates),
        mode="dense",
        kinds=("procedure",),
        user_id=user_id,
        agent_id=agent_id,
    )
    sims = {h.memory.id: float(h.evidence.get("dense", h.score)) for h in hits}
    out = []
    for proc in rows.by_memory_ids(db, list(sims)):
        type_match = None if wanted is None else proc.task_type == wanted
        rel = scoring.reliability(proc.success_count, proc.use_count)
        sim = sims[proc.memory_id]
        score = scoring.match_score(
            sim,
            type_match=type_match,
            reliability_value=rel,
            type_weight=cfg.type_weight,
            reliability_weight=cfg.reliability_weight,
        )
        out.append(ProcedureMatch(proc, score, sim, wanted, type_match, rel))
    out.sort(key=lambda m: (-m.score, m.procedure.id))
    return out[:k]


def find(
    kernel: Kernel, task: str, *, threshold: float | None = None, **options: Any
) -> ProcedureMatch | None:
    """The best match if its score reaches the threshold, else None."""
    limit = threshold_of(kernel, threshold)
    best = matches(kernel, task, k=1, **options)
    return best[0] if best and best[0].score >= limit else None


def find_many(
    kernel: Kernel, task: str, *, k: int = 3, threshold: float | None = None, **options: Any
) -> list[ProcedureMatch]:
    """Procedures for the parts of a task, in the order of the parts (see ``ProcedureStore``)."""
    task = validate.content(task, max_chars=kernel.config.store.max_content_chars, what="task")
    validate.positive_int(k, "k", maximum=100)
    limit = threshold_of(kernel, threshold)
    parts = split_task(task)
    if len(parts) < 2:
        return [m for m in matches(kernel, task, k=k, **options) if m.score >= limit]
    chosen: list[ProcedureMatch] = []
    for part in parts:
        taken = {c.procedure.id for c in chosen}
        for m in matches(kernel, part, k=k + len(chosen), **options):
            if m.score < limit:
                break
            if m.procedure.id not in taken:
                chosen.append(m)
                break
        if len(chosen) >= k:
            break
    return chosen


def split_task(task: str) -> list[str]:
    """The parts of a task ("...; then ...", sentences, lines), each of two words or more."""
    return [p.strip(" .") for p in _PARTS.split(task.strip()) if len(p.split()) >= 2]


def task_type_of(kernel: Kernel, task: str, task_type: str | None) -> str | None:
    """The task's type: as given, None for "any", else classified model-free (None if unclear)."""
    if task_type == "any":
        return None
    if task_type is not None:
        return check_task_type(task_type)
    return classify(kernel.embedder, task).name


def threshold_of(kernel: Kernel, threshold: Any) -> float:
    """The threshold asked for, or the configured one."""
    if threshold is None:
        return kernel.config.procedures.threshold
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise InputError("threshold must be a number")
    if not 0.0 <= threshold <= 2.0:
        raise InputError("threshold must be between 0 and 2")
    return float(threshold)
