"""The Mem^p experiment's results as markdown: what was measured, by which engine, and what not."""

from __future__ import annotations

from typing import Any

PLUMBING_NOTE = (
    "**PLUMBING RUN.** The model is a tiny random-weight test GGUF: the numbers of the agent "
    "section only show that the loop runs end to end through llama.cpp. They are not results "
    "and say nothing about Mem^p."
)
NO_ENGINE_NOTE = (
    "**Not measured: no model.** No GGUF was given (`--model PATH`). The seed's protocol needs "
    "an agent that reasons; a model-free 'agent' is not one, so steps to completion, success "
    "and tokens with and without a procedure cannot be measured here. Run "
    "`python scripts/experiment.py memp --model PATH` with an instruct GGUF to measure them."
)


def _f(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:+.0%}"


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(_f(c) if not isinstance(c, str) else c for c in r) + " |" for r in rows
    ]
    return lines


def markdown(results: dict[str, Any], *, provenance: str, plumbing: bool) -> str:
    """The whole report."""
    s = results["settings"]
    engine = results["engine"]
    served = sorted({p["served_by"] for p in results["procedures"]})
    lines = [
        "# Mem^p experiment (seed 002): procedural memory",
        "",
        provenance,
        f"- engine (agent, abstraction, reflection): {engine or 'none (model-free only)'}",
        f"- procedures written by: {', '.join(served)}",
        f"- embedder (find, task types): {results['embedder']}",
        f"- task pairs: {len(s['pairs'])} ({', '.join(s['pairs'])}), shipped in "
        f"`localmem/eval/data/memp/`; levels: {', '.join(s['levels'])}; find threshold "
        f"{s['threshold']}",
        "",
    ]
    if plumbing:
        lines += [PLUMBING_NOTE, ""]
    lines += _procedures(results)
    lines += _retrieval(results)
    lines += _agent(results, plumbing=plumbing)
    return "\n".join(lines) + "\n"


def _procedures(results: dict[str, Any]) -> list[str]:
    lines = [
        "## Procedures abstracted from the task-A sessions",
        "",
        "Coverage is a proxy, not an outcome: the share of task B's success concepts that the "
        "rendered procedure already mentions.",
        "",
    ]
    rows = []
    for p in results["procedures"]:
        if p.get("error"):
            rows.append([p["pair"], p["level"], p["served_by"], "–", "–", f"failed: {p['error']}"])
            continue
        rows.append(
            [
                p["pair"],
                p["level"],
                p["served_by"],
                p["task_type"],
                len(p["steps"]),
                p["coverage_of_b_rule"],
            ]
        )
    lines += _table(["pair", "level", "written by", "type", "steps", "coverage of B's rule"], rows)
    return [*lines, ""]


def _retrieval(results: dict[str, Any]) -> list[str]:
    r = results["retrieval"]
    lines = [
        "## Retrieval only (model-free baseline, no agent)",
        "",
        "Does `procedures.find(task B)` return task A's procedure among the procedures of every "
        "pair (same level)? Score = trigger cosine (MiniLM) + type bonus + reliability term; "
        f"threshold {r['threshold']}. This measures retrieval, not whether a procedure helps.",
        "",
    ]
    rows = []
    for level, groups in r["summary"].items():
        for group, g in groups.items():
            rows.append(
                [
                    level,
                    group,
                    g["pairs"],
                    g["top1"],
                    g["found_at_threshold"],
                    g["false_match_at_threshold"],
                    g["mean_similarity_right"],
                    g["mean_score_right"],
                    g["mean_best_other"],
                ]
            )
    lines += _table(
        [
            "level",
            "task pairs",
            "n",
            "top-1",
            "found at threshold",
            "wrong at threshold",
            "cos(B, A's trigger)",
            "score of A's",
            "best other score",
        ],
        rows,
    )
    lines += ["", "Threshold sweep (share of B tasks; found = A's procedure returned):", ""]
    thresholds = [p["threshold"] for p in next(iter(r["sweep"].values()))]
    sweep_rows = []
    for level, points in r["sweep"].items():
        sweep_rows.append([f"{level} found", *[p["found"] for p in points]])
        sweep_rows.append([f"{level} wrong", *[p["false_match"] for p in points]])
    lines += _table(["", *[f"{t:.2f}" for t in thresholds]], sweep_rows)
    lines += ["", *_best_thresholds(r), "", "Per pair:", ""]
    pair_rows = [
        [
            x["level"],
            x["pair"],
            x["task_type_of_b"] or "unknown",
            x["rank"],
            x["similarity"],
            x["score"],
            x["best_other"],
            x["found"],
        ]
        for x in r["per_pair"]
    ]
    lines += _table(
        ["level", "pair", "B classified as", "rank of A's", "cos", "score", "best other", "found"],
        pair_rows,
    )
    return [*lines, ""]


def _best_thresholds(r: dict[str, Any]) -> list[str]:
    """Per level, the swept threshold with the most B tasks served right minus served wrong."""
    out = []
    for level, points in r["sweep"].items():
        best = max(points, key=lambda p: (p["found"] - p["false_match"], p["threshold"]))
        out.append(
            f"- {level}: on these pairs the best threshold of the sweep is {best['threshold']:.2f} "
            f"(A's procedure for {best['found']:.0%} of the B tasks, a wrong one for "
            f"{best['false_match']:.0%}); the configured {r['threshold']} gives "
            f"{_at(points, r['threshold'])}."
        )
    return out


def _at(points: list[dict[str, float]], t: float) -> str:
    hit = next((p for p in points if abs(p["threshold"] - t) < 1e-9), None)
    if hit is None:
        return "a value outside the sweep"
    return f"{hit['found']:.0%} right, {hit['false_match']:.0%} wrong"


def _agent(results: dict[str, Any], *, plumbing: bool) -> list[str]:
    lines = ["## Agent runs (steps, success, tokens)", ""]
    agent = results["agent"]
    if agent is None:
        return [*lines, NO_ENGINE_NOTE, ""]
    if plumbing:
        lines += [PLUMBING_NOTE, ""]
    s = results["settings"]
    lines += [
        f"Engine {results['engine']}; {s['runs']} run(s) per condition (runs differ only by the "
        f"sampling seed, so only with a temperature above 0); at most {s['max_steps']} "
        f"thoughts; success = every concept of the pair's rule in the final answer. Conditions: "
        "baseline (no procedure), concrete / abstract / hybrid (task A's procedure at that level, "
        "injected), retrieved (whatever find() returns at the retrieval level, if anything), "
        "reflected (after a failed run: the procedure revised by reflection, then B again).",
        "",
    ]
    for group in ("same-type", "cross-type"):
        table = agent["summary"].get(group)
        if not table:
            continue
        lines += [f"### {group} pairs", ""]
        rows = []
        for cond, st in table.items():
            d = st.get("delta_vs_baseline", {})
            rows.append(
                [
                    cond,
                    st["attempts"],
                    st["success_rate"],
                    st["steps"],
                    st["tokens"],
                    st["seconds"],
                    st["finished_rate"],
                    st["errors"],
                    _pct(d.get("steps_pct")),
                    _pct(d.get("tokens_pct")),
                    "–" if "success_pp" not in d else f"{d['success_pp']:+.2f}",
                ]
            )
        lines += _table(
            [
                "condition",
                "attempts",
                "success",
                "steps",
                "tokens",
                "seconds",
                "done in time",
                "errors",
                "Δ steps",
                "Δ tokens",
                "Δ success",
            ],
            rows,
        )
        lines.append("")
    refl = agent["summary"]["reflection"]
    lines += [
        f"Reflection: {refl['failed_runs_revised']} failed run(s) with the procedure were revised; "
        f"{refl['succeeded_after_revision']} succeeded on the next attempt; "
        f"{refl['revision_errors']} revision(s) were rejected (unusable engine answer).",
        "",
    ]
    return lines
