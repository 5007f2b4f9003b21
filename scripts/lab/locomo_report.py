"""Reporting the LoCoMo benchmark: markdown tables and a plot from :func:`run_retrieval` results.

Pure functions of the JSON-ready results of :mod:`lab.locomo_bench` (the plot
writes a PNG with matplotlib when it is installed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lab.locomo import CATEGORIES
from lab.plots import pyplot, skipped
from lab.retrieval import category_label


def retrieval_markdown(results: dict[str, Any]) -> str:
    """Tables: overall metrics per configuration, R@10 / R@5 per category, latency."""
    summaries = results["summaries"]
    lines = ["### Evidence retrieval (categories 1-4, no model)", ""]
    head = ["config", "R@1", "R@5", "R@10", "R@20", "hit@1", "hit@5", "hit@10", "hit@20", "MRR"]
    lines += [_row(head), _row(["---"] * len(head))]
    for name, s in summaries.items():
        o = s["overall"]
        cells = [f"{o[m]:.3f}" for m in head[1:]]
        lines.append(_row([name, *cells]))
    for metric in ("R@10", "R@5", "hit@10", "MRR"):
        lines += ["", f"{metric} per category (the file's numbering):", ""]
        groups = [g for g in ("1", "2", "3", "4", "overall") if g in next(iter(summaries.values()))]
        lines += [_row([metric, *[category_label(g) for g in groups]])]
        lines += [_row(["---"] * (len(groups) + 1))]
        for name, s in summaries.items():
            lines.append(_row([name, *[f"{s[g][metric]:.3f}" if g in s else "" for g in groups]]))
    lines += [
        "",
        "Latency per question in ms (p50 / p95): the query embedding, the pipeline "
        "without it, both, and each stage; tokens of the packed hits.",
        "",
    ]
    stages = sorted(
        {st for s in summaries.values() for st in s["overall"]["stage_p50_ms"]}
        - {"embed", "search"}
    )
    head = ["config", "embed", "search", "total", *stages, "tokens"]
    lines += [_row(head), _row(["---"] * len(head))]
    for name, s in summaries.items():
        o = s["overall"]
        p50, p95 = o["stage_p50_ms"], o["stage_p95_ms"]
        cells = [
            f"{p50.get('embed', 0):.1f} / {p95.get('embed', 0):.1f}",
            f"{o['search_p50_ms']:.1f} / {o['search_p95_ms']:.1f}",
            f"{o['p50_ms']:.1f} / {o['p95_ms']:.1f}",
        ]
        cells += [f"{p50[st]:.1f} / {p95[st]:.1f}" if st in p50 else "" for st in stages]
        cells.append(f"{o['tokens_mean']:.0f}" if "tokens_mean" in o else "")
        lines.append(_row([name, *cells]))
    totals = results["totals"]
    lines += [
        "",
        f"{totals['conversations']} conversations, {totals['turns']} turns, "
        f"{totals['questions']} questions scored per configuration.",
    ]
    if totals["skipped"]:
        skipped = ", ".join(f"{why}: {n}" for why, n in sorted(totals["skipped"].items()))
        lines.append(f"Skipped: {skipped}.")
    if "reranker" in results:
        lines.append(f"Model-free reranker: {results['reranker']}.")
    return "\n".join(lines)


def answers_markdown(summary: dict[str, dict[str, float]], served_by: str) -> str:
    """The answer table: F1, BLEU-1, judge per category; category 5 as correct refusals."""
    lines = [f"### Answers ({served_by})", ""]
    if "model-free" in served_by:
        lines += [
            "No model: extractive answers (the best-supported sentence) and a token-overlap "
            "judge. A baseline for the plumbing and the metrics, not an LLM's answers.",
            "",
        ]
    head = ["category", "n", "F1", "BLEU-1", "judge", "s / question", "tokens / question"]
    lines += [_row(head), _row(["---"] * len(head))]
    for key in ("1", "2", "3", "4", "overall"):
        if key not in summary:
            continue
        e = summary[key]
        lines.append(
            _row(
                [
                    category_label(key),
                    str(int(e["n"])),
                    f"{e['f1']:.3f}",
                    f"{e['bleu1']:.3f}",
                    f"{e['judge']:.3f}",
                    f"{e['seconds_mean']:.2f}",
                    f"{e['tokens_mean']:.0f}",
                ]
            )
        )
    if "5" in summary:
        e = summary["5"]
        lines += [
            "",
            f"Category 5 ({CATEGORIES[5]}, {int(e['n'])} questions): correct refusals "
            f"{e['refusal_rate']:.3f}.",
        ]
    return "\n".join(lines)


def plot(results: dict[str, Any], path: str) -> bool:
    """R@10 per category for each configuration (grouped bars), and each configuration's search
    latency p50 / p95 beside it (PNG); False when matplotlib is missing (nothing drawn)."""
    plt = pyplot()
    if plt is None:
        skipped(f"the plot {path}")
        return False

    summaries = results["summaries"]
    groups = [g for g in ("1", "2", "3", "4", "overall") if g in next(iter(summaries.values()))]
    names = list(summaries)
    width = 0.8 / max(len(names), 1)
    fig, (ax, lat) = plt.subplots(
        1, 2, figsize=(max(10, 1.6 * len(groups) + 5), 4.8), gridspec_kw={"width_ratios": [3, 1]}
    )
    for i, name in enumerate(names):
        xs = [j + i * width for j in range(len(groups))]
        ax.bar(xs, [summaries[name].get(g, {}).get("R@10", 0) for g in groups], width, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
    ax.set_xticklabels([category_label(g) for g in groups])
    ax.set_ylabel("evidence recall@10")
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo evidence recall@10 by configuration")
    ax.legend(fontsize=7, ncol=2)
    ys = range(len(names))
    p50 = [summaries[n]["overall"]["search_p50_ms"] for n in names]
    p95 = [summaries[n]["overall"]["search_p95_ms"] for n in names]
    lat.barh(ys, p95, color="#bbbbbb", label="p95")
    lat.barh(ys, p50, color="#4477aa", label="p50")
    lat.set_yticks(list(ys))
    lat.set_yticklabels(names, fontsize=7)
    lat.invert_yaxis()
    lat.set_xlabel("search ms (without the query embedding)")
    lat.set_title("latency")
    lat.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
