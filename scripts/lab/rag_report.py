"""The report of the RAG experiments: markdown beside the published table, and PNG plots.

Plots use matplotlib's Agg backend (no display): one figure per experiment (Hit@k, MRR, answer
similarity, latency; published vs ours) and the summary table, as the seed's
``results/plots/`` has.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab.plots import pyplot, skipped

SERIES = (
    ("published", "published (OpenAI emb. + GPT-4o)"),
    ("ours:published", "ours: published chunks"),
    ("ours:ours", "ours: our chunker"),
)
TITLES = {
    "A": "A. Chunk size",
    "B": "B. Chunking strategy",
    "C": "C. Embedding model",
    "D": "D. Memory policy",
}
PLOT_FILES = {
    "A": "exp_a_chunk_size.png",
    "B": "exp_b_chunking_strategy.png",
    "C": "exp_c_embedding.png",
    "D": "exp_d_memory_policy.png",
    "summary": "summary_table.png",
}


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per configuration and series: the published numbers and each of our runs."""
    out = []
    k = results["settings"]["k"]
    for name, pub in results["published"].items():
        order = [name for name, _ in SERIES]
        runs = sorted(
            (r for r in results["runs"] if r["config"] == name),
            key=lambda r: order.index(f"ours:{r['chunks']}"),
        )
        if not runs:
            continue
        first = runs[0]
        if pub:
            m = pub["aggregated_metrics"]
            out.append(
                {
                    "config": name,
                    "experiment": first["experiment"],
                    "label": first["label"],
                    "series": "published",
                    "hit": m["retrieval"]["hit_rate_mean"],
                    "mrr": m["retrieval"]["mrr_mean"],
                    "similarity": m["answer_quality"]["semantic_similarity_mean"],
                    "p50": m["latency"]["p50"],
                    "p95": m["latency"]["p95"],
                    "tokens_in": m["cost"]["tokens_in_total"],
                    "tokens_out": m["cost"]["tokens_out_total"],
                    "engine": f"{pub['embedding_config']['model']} + GPT-4o",
                    "note": "",
                }
            )
        for r in runs:
            s = r["summary"]
            out.append(
                {
                    "config": name,
                    "experiment": r["experiment"],
                    "label": r["label"],
                    "series": f"ours:{r['chunks']}",
                    "hit": s.get("hit_rate"),
                    "mrr": s.get("mrr"),
                    "article_hit": s.get("article_hit_rate"),
                    "similarity": s.get("similarity"),
                    "p50": s.get("latency_p50_s"),
                    "p95": s.get("latency_p95_s"),
                    "tokens_in": s.get("tokens_in_total"),
                    "tokens_out": s.get("tokens_out_total"),
                    "engine": f"{r['embedder']} + {_served(s)}",
                    "note": r.get("skipped") or "",
                    "same_as": r.get("same_as"),
                    "k": k,
                }
            )
    return out


def _served(summary: dict[str, Any]) -> str:
    return ", ".join(summary.get("served_by") or ["no answers"])


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown(results: dict[str, Any], *, provenance: str, image_dir: str | None = None) -> str:
    """The report: settings, one table per experiment, the summary, plots and caveats."""
    k = results["settings"]["k"]
    table = rows(results)
    head = (
        f"| Config | Series | Hit@{k} | MRR@{k} | Article hit@{k} | Similarity | "
        "Latency p50 (s) | p95 (s) | Tokens in / out | Embedder + answers |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    names = dict(SERIES)
    labels = {r["config"]: f"{r['experiment']}. {r['label']}" for r in table}
    parts = ["## Provenance", provenance, "", "## Results by experiment"]
    for exp in sorted({r["experiment"] for r in table}):
        parts += ["", f"### {TITLES.get(exp, exp)}", "", head]
        for r in (r for r in table if r["experiment"] == exp):
            if r["note"]:
                parts.append(f"| {r['label']} | {names[r['series']]} | {r['note']} |||||||| ")
                continue
            tokens = (
                f"{r['tokens_in']:,} / {r['tokens_out']:,}"
                if r.get("tokens_in") is not None
                else "–"
            )
            series = names[r["series"]]
            if r.get("same_as"):
                series += f" (= {labels.get(r['same_as'], r['same_as'])})"
            parts.append(
                f"| {r['label']} | {series} | {_fmt(r['hit'])} | {_fmt(r['mrr'])} | "
                f"{_fmt(r.get('article_hit'))} | {_fmt(r['similarity'])} | {_fmt(r['p50'])} | "
                f"{_fmt(r['p95'])} | {tokens} | {r['engine']} |"
            )
        if image_dir:
            parts += ["", f"![{TITLES.get(exp, exp)}]({image_dir}/{PLOT_FILES[exp]})"]
    if image_dir:
        parts += ["", "## Summary table", "", f"![summary]({image_dir}/{PLOT_FILES['summary']})"]
    return "\n".join(parts) + "\n"


def _bars(ax: Any, table: Sequence[dict], labels: list[str], metric: str, title: str) -> None:
    import numpy as np

    width = 0.8 / len(SERIES)
    x = np.arange(len(labels))
    for i, (series, name) in enumerate(SERIES):
        vals = []
        for j, label in enumerate(labels):
            row = next((r for r in table if r["label"] == label and r["series"] == series), None)
            value = row[metric] if row else None
            if row and value is None:  # skipped or not measured: say so instead of a 0 bar
                ax.text(
                    x[j] + (i - 1) * width,
                    0.02,
                    "n/a",
                    ha="center",
                    fontsize=7,
                    transform=ax.get_xaxis_transform(),  # x in data, y in axes fraction
                )
            vals.append(value or 0.0)
        ax.bar(x + (i - 1) * width, vals, width, label=name)
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_title(title, fontsize=10)


def plot_experiment(results: dict[str, Any], experiment: str, path: str | Path) -> Path:
    """Hit@k, MRR, similarity and latency of one experiment's configurations."""
    plt = pyplot()
    k = results["settings"]["k"]
    table = [r for r in rows(results) if r["experiment"] == experiment]
    labels = list(dict.fromkeys(r["label"] for r in table))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, (metric, title) in zip(
        axes.flat,
        (
            ("hit", f"Hit rate@{k}"),
            ("mrr", f"MRR@{k}"),
            ("similarity", "Answer similarity (MiniLM cosine)"),
            ("p50", "Latency p50 (s)"),
        ),
        strict=True,
    ):
        _bars(ax, table, labels, metric, title)
        if metric != "p50":
            ax.set_ylim(0, 1.05)
    axes.flat[0].legend(fontsize=7, loc="lower left")
    fig.suptitle(f"{TITLES.get(experiment, experiment)}: published vs local", fontsize=12)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def plot_summary(results: dict[str, Any], path: str | Path) -> Path:
    """The summary table (every configuration and series) as an image."""
    plt = pyplot()
    k = results["settings"]["k"]
    names = {"published": "published", "ours:published": "ours/pub. chunks", "ours:ours": "ours"}
    table = rows(results)
    cells = [
        [
            f"{r['experiment']}. {r['label']}",
            names[r["series"]],
            _fmt(r["hit"]),
            _fmt(r["mrr"]),
            _fmt(r["similarity"]),
            _fmt(r["p50"]),
        ]
        for r in table
        if not r["note"]
    ]
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(cells) + 1))
    ax.axis("off")
    header = ["Experiment", "Series", f"Hit@{k}", "MRR", "Similarity", "Latency p50 (s)"]
    tbl = ax.table(cellText=cells, colLabels=header, loc="center", cellLoc="center")
    tbl.auto_set_font_size(False)
    tbl.set_fontsize(8)
    tbl.scale(1, 1.2)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def write_plots(results: dict[str, Any], folder: str | Path) -> list[Path]:
    """Every plot of the results into ``folder`` (none without matplotlib)."""
    if pyplot() is None:
        skipped("the plots")
        return []
    folder = Path(folder)
    made = [
        plot_experiment(results, exp, folder / PLOT_FILES[exp])
        for exp in sorted({r["experiment"] for r in results["runs"]})
    ]
    made.append(plot_summary(results, folder / PLOT_FILES["summary"]))
    return made
