"""The Mem^p experiment (seed 002): does a procedure from task A help an agent solve task B?

Three parts, each saying which engine produced its numbers:

1. **Procedures.** Task A's reference session is completed with ``abstract=True`` once per
   abstraction level (the engine's ``procedure`` task with a model, model-free without one).
2. **Retrieval only** (model-free; no agent involved): does ``procedures.find(task B)`` pick
   task A's procedure among all of them, with what score, and what the threshold does.
3. **Agent runs** (needs an engine): the agent loop solves task B without a procedure
   (baseline), with A's procedure at each level, with whatever ``find`` retrieves, and after a
   failure with the procedure revised by reflection. Metrics per the seed: steps (thoughts) to
   completion, success (the pair's rule), tokens, seconds; same-type and cross-type pairs apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from statistics import mean
from typing import TYPE_CHECKING, Any

from lab.memp_agent import AgentRun, Bounds, run_agent
from localmem.errors import ModelError
from localmem.procedures import LEVELS, render

if TYPE_CHECKING:
    from lab.memp_tasks import TaskPair
    from localmem.memory import Memory

THRESHOLDS = (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9)
BASELINE = "baseline"
RETRIEVED = "retrieved"
REFLECTED = "reflected"


@dataclass(frozen=True)
class MempSettings:
    """What the experiment runs."""

    levels: tuple[str, ...] = LEVELS
    retrieval_level: str = "hybrid"
    runs: int = 1
    max_steps: int = 8
    max_tokens: int = 768
    bounds: Bounds = field(default_factory=Bounds)
    reflection: bool = True
    thresholds: tuple[float, ...] = THRESHOLDS


Progress = Callable[[str], None]


def run_memp(
    memory: Memory,
    pairs: list[TaskPair],
    settings: MempSettings,
    *,
    engine: Any = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the experiment in ``memory`` (a fresh store) and return every number as data."""
    say = progress or (lambda _msg: None)
    say(f"abstracting {len(pairs)} task-A sessions at {len(settings.levels)} level(s)")
    procs = make_procedures(memory, pairs, settings.levels)
    say("retrieval")
    retrieval = measure_retrieval(memory, pairs, procs, settings)
    agent = None
    if engine is not None:
        agent = run_agents(memory, engine, pairs, procs, settings, say)
    return {
        "engine": getattr(engine, "name", None),
        "embedder": memory.embedder.name,
        "settings": {
            **asdict(settings),
            "threshold": memory.config.procedures.threshold,
            "pairs": [p.id for p in pairs],
        },
        "procedures": list(procs.values()),
        "retrieval": retrieval,
        "agent": agent,
    }


def make_procedures(
    memory: Memory, pairs: list[TaskPair], levels: tuple[str, ...]
) -> dict[tuple[str, str], dict[str, Any]]:
    """Task A's reference session, completed and abstracted at each level (scope: the level).

    An abstraction the engine gets wrong (no usable steps) is recorded, not fatal: that pair
    then has no procedure at that level, as it would in use.
    """
    out = {}
    for level in levels:
        for pair in pairs:
            session = memory.start_session(pair.a.title, user_id=level)
            for thought in pair.a.thoughts:
                memory.add_thought(session.id, thought)
            entry: dict[str, Any] = {"pair": pair.id, "level": level, "id": None}
            try:
                done = memory.complete_session(session.id, "success", abstract=True, level=level)
            except ModelError as exc:
                memory.complete_session(session.id, "success")
                entry.update(served_by=getattr(memory.engine, "name", "?"), error=str(exc))
                out[(pair.id, level)] = entry
                continue
            proc = memory.procedures.get(done.metadata["procedure_id"])
            entry.update(
                id=proc.id,
                served_by=proc.served_by,
                tokens=memory.procedures.history(proc.id)[0].info.get("tokens", 0),
                task_type=proc.task_type,
                trigger=proc.trigger,
                steps=list(proc.steps),
                example=proc.example,
                coverage_of_b_rule=round(pair.success.coverage(render(proc)), 3),
                error=None,
            )
            out[(pair.id, level)] = entry
    return out


def measure_retrieval(
    memory: Memory,
    pairs: list[TaskPair],
    procs: dict[tuple[str, str], dict[str, Any]],
    settings: MempSettings,
) -> dict[str, Any]:
    """For each level: does find(task B) rank task A's procedure first, and by what margin."""
    threshold = memory.config.procedures.threshold
    per_pair, summary, sweep = [], {}, {}
    for level in settings.levels:
        rows = []
        for pair in pairs:
            ranked = memory.procedures.matches(pair.b.title, k=len(pairs), user_id=level)
            want = procs[(pair.id, level)]["id"]  # None when abstraction failed
            right = next((m for m in ranked if m.procedure.id == want), None)
            other = next((m for m in ranked if m.procedure.id != want), None)
            row = {
                "level": level,
                "pair": pair.id,
                "cross_type": pair.cross_type,
                "task_type_of_b": ranked[0].task_type if ranked else None,
                "rank": 1 + ranked.index(right) if right else None,
                "score": right.score if right else None,
                "similarity": right.similarity if right else None,
                "best_other": other.score if other else None,
                "found": bool(ranked and ranked[0] is right and right.score >= threshold),
                "false_match": bool(
                    ranked and ranked[0] is not right and ranked[0].score >= threshold
                ),
            }
            rows.append(row)
        per_pair += rows
        summary[level] = {
            group: _retrieval_summary([r for r in rows if _group(r) == group])
            for group in ("same-type", "cross-type")
            if any(_group(r) == group for r in rows)
        }
        sweep[level] = [_sweep_point(rows, t) for t in settings.thresholds]
    return {"threshold": threshold, "per_pair": per_pair, "summary": summary, "sweep": sweep}


def _group(row: dict[str, Any]) -> str:
    return "cross-type" if row["cross_type"] else "same-type"


def _retrieval_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    scores = [r["score"] for r in rows if r["score"] is not None]
    others = [r["best_other"] for r in rows if r["best_other"] is not None]
    return {
        "pairs": len(rows),
        "top1": sum(r["rank"] == 1 for r in rows) / len(rows),
        "found_at_threshold": sum(r["found"] for r in rows) / len(rows),
        "false_match_at_threshold": sum(r["false_match"] for r in rows) / len(rows),
        "mean_score_right": mean(scores) if scores else None,
        "mean_similarity_right": mean(r["similarity"] for r in rows if r["similarity"] is not None)
        if scores
        else None,
        "mean_best_other": mean(others) if others else None,
    }


def _sweep_point(rows: list[dict[str, Any]], t: float) -> dict[str, float]:
    """At threshold t: the share of B tasks for which find() returns A's procedure, and the
    share for which it returns another one (the top match is wrong and reaches t)."""
    found = sum(1 for r in rows if r["rank"] == 1 and r["score"] >= t)
    wrong = sum(
        1 for r in rows if r["rank"] != 1 and r["best_other"] is not None and r["best_other"] >= t
    )
    return {"threshold": t, "found": found / len(rows), "false_match": wrong / len(rows)}


# -- agent runs ----------------------------------------------------------------------------------


def run_agents(
    memory: Memory,
    engine: Any,
    pairs: list[TaskPair],
    procs: dict[tuple[str, str], dict[str, Any]],
    settings: MempSettings,
    say: Progress,
) -> dict[str, Any]:
    """Every condition for every pair, ``settings.runs`` times."""
    records: list[dict[str, Any]] = []
    base_seed = getattr(engine, "seed", None)
    for run_no in range(1, settings.runs + 1):
        if base_seed is not None:  # runs differ by their sampling seed (with temperature > 0)
            engine.seed = base_seed + run_no - 1
        for i, pair in enumerate(pairs, 1):
            say(f"run {run_no}/{settings.runs}, pair {i}/{len(pairs)}: {pair.id}")
            records += _pair_runs(memory, engine, pair, procs, settings, run_no)
    if base_seed is not None:
        engine.seed = base_seed
    return {"runs": records, "summary": summarize_agent(records)}


def _pair_runs(memory, engine, pair, procs, settings, run_no) -> list[dict[str, Any]]:
    out = []

    def attempt(condition: str, proc_id: str | None, **extra: Any) -> tuple[dict, AgentRun]:
        block = render(memory.procedures.get(proc_id)) if proc_id else None
        run = run_agent(
            memory,
            engine,
            pair.b,
            procedure_block=block,
            max_steps=settings.max_steps,
            max_tokens=settings.max_tokens,
            bounds=settings.bounds,
            user_id="agent",
            label=f"{pair.id} {condition} run {run_no}",
        )
        ok, missing = pair.success.check(run.answer)
        memory.complete_session(run.session_id, "success" if ok else "failure")
        record = {
            "pair": pair.id,
            "cross_type": pair.cross_type,
            "run": run_no,
            "condition": condition,
            "procedure_id": proc_id,
            "injected": block is not None,
            "success": ok,
            "missing": missing,
            "steps": run.steps,
            "finished": run.finished,
            "tokens": run.tokens,
            "prompt_tokens": run.prompt_tokens,
            "completion_tokens": run.completion_tokens,
            "seconds": round(run.seconds, 3),
            "engine": run.engine,
            "error": run.error,
            "session_id": run.session_id,
            "answer": run.answer,
            **extra,
        }
        out.append(record)
        return record, run

    attempt(BASELINE, None)
    used = None  # the run with A's procedure at the retrieval level, for the reflection
    for level in settings.levels:
        pid = procs[(pair.id, level)]["id"]
        if pid is None:
            continue  # abstraction failed at this level: nothing to inject
        record, _ = attempt(level, pid)
        if level == settings.retrieval_level:
            used = record
    match = memory.procedures.find(pair.b.title, user_id=settings.retrieval_level)
    attempt(
        RETRIEVED,
        match.procedure.id if match else None,
        retrieved_right=bool(
            match and match.procedure.id == procs[(pair.id, settings.retrieval_level)]["id"]
        ),
        score=match.score if match else None,
    )
    if used is not None and settings.reflection:
        _reflect(memory, pair, used, attempt)
    return out


def _reflect(memory, pair, record, attempt) -> None:
    """After a failed use, revise by reflection and try B again.

    The revision is made on a copy of the procedure, so the other conditions (and later runs)
    keep using the procedure as it was abstracted. When the engine's revision is unusable the
    failure is recorded without one and B is not tried again (the record says why).
    """
    if record["success"]:
        return
    original = memory.procedures.get(record["procedure_id"])
    copy = memory.procedures.add(
        original.trigger,
        original.steps,
        task_type=original.task_type,
        level=original.level,
        example=original.example,
        user_id=f"reflection-{record['run']}",
    )
    missing = record["missing"]
    note = ("missing from the answer: " + "; ".join(missing)) if missing else None
    try:
        result = memory.procedures.record(
            copy.id, False, task=pair.b.title, session_id=record["session_id"], note=note
        )
    except ModelError as exc:
        record["reflection_error"] = str(exc)
        return
    attempt(
        REFLECTED,
        copy.id,
        version=result.procedure.version,
        revised_by=result.served_by,
        diagnosis=result.diagnosis,
    )


def summarize_agent(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per group (same-type, cross-type) and condition: success, steps, tokens, seconds."""
    out: dict[str, Any] = {}
    for group in ("same-type", "cross-type"):
        rows = [r for r in records if _group(r) == group]
        if not rows:
            continue
        conditions = list(dict.fromkeys(r["condition"] for r in rows))
        table = {c: _agent_stats([r for r in rows if r["condition"] == c]) for c in conditions}
        base = table.get(BASELINE)
        if base:
            for c, stats in table.items():
                if c != BASELINE:
                    stats["delta_vs_baseline"] = _delta(base, stats)
        out[group] = table
    failed = [r for r in records if r["condition"] == REFLECTED]
    out["reflection"] = {
        "failed_runs_revised": len(failed),
        "succeeded_after_revision": sum(r["success"] for r in failed),
        "revision_errors": sum(1 for r in records if r.get("reflection_error")),
    }
    return out


def _agent_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "attempts": len(rows),
        "success_rate": sum(r["success"] for r in rows) / len(rows),
        "steps": mean(r["steps"] for r in rows),
        "tokens": mean(r["tokens"] for r in rows),
        "seconds": mean(r["seconds"] for r in rows),
        "finished_rate": sum(r["finished"] for r in rows) / len(rows),
        "errors": sum(1 for r in rows if r["error"]),
        "injected": sum(r["injected"] for r in rows),
    }


def _delta(base: dict[str, Any], other: dict[str, Any]) -> dict[str, float | None]:
    def pct(key: str) -> float | None:
        return (other[key] - base[key]) / base[key] if base[key] else None

    return {
        "steps_pct": pct("steps"),
        "tokens_pct": pct("tokens"),
        "success_pp": other["success_rate"] - base["success_rate"],
    }
