"""Scoring evidence retrieval on LoCoMo: run searches, then recall@k, hit@k, MRR and latency."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from lab.locomo import (
    CATEGORIES,
    Conversation,
    evidence_recall,
    hit_at,
    reciprocal_rank,
)
from lab.stats import percentile

if TYPE_CHECKING:
    from localmem.memory import Memory

KS = (1, 5, 10, 20)


@dataclass
class QuestionResult:
    """What one search returned for one question."""

    sample_id: str
    category: int
    question: str
    evidence: tuple[str, ...]
    retrieved: list[str]
    ms: float
    stage_ms: dict[str, float] = field(default_factory=dict)
    tokens: int | None = None


def run_questions(
    memory: Memory,
    conv: Conversation,
    options: dict[str, Any],
    *,
    k: int = 20,
    categories: Iterable[int] = (1, 2, 3, 4),
) -> tuple[list[QuestionResult], int]:
    """Search every question of a conversation; returns the results and how many were skipped.

    A question with no evidence turns cannot be scored and is skipped (and counted).
    """
    cats = set(categories)
    out, skipped = [], 0
    for q in conv.questions:
        if q.category not in cats:
            continue
        if not q.evidence:
            skipped += 1
            continue
        result = memory.search(q.question, k=k, **options)
        retrieved = [h.memory.metadata.get("dia_id", "") for h in result.hits]
        stage_ms: dict[str, float] = {}
        for report in result.stages:
            stage_ms[report.stage] = stage_ms.get(report.stage, 0.0) + report.ms
        out.append(
            QuestionResult(
                conv.sample_id,
                q.category,
                q.question,
                q.evidence,
                retrieved,
                result.total_ms,
                stage_ms,
                result.packed_tokens,
            )
        )
    return out, skipped


def summarize(results: Sequence[QuestionResult], ks: Sequence[int] = KS) -> dict[str, Any]:
    """Per category and overall: recall@k, hit@k, MRR, latency p50/p95 (per stage too)."""
    groups: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in results:
        groups[str(r.category)].append(r)
        groups["overall"].append(r)
    summary: dict[str, Any] = {}
    for name, rows in groups.items():
        entry: dict[str, Any] = {"n": len(rows)}
        for k in ks:
            entry[f"R@{k}"] = float(
                np.mean([evidence_recall(r.retrieved, r.evidence, k) for r in rows])
            )
            entry[f"hit@{k}"] = float(np.mean([hit_at(r.retrieved, r.evidence, k) for r in rows]))
        entry["MRR"] = float(np.mean([reciprocal_rank(r.retrieved, r.evidence) for r in rows]))
        ms = np.array([r.ms for r in rows])
        entry["p50_ms"], entry["p95_ms"] = (
            percentile(ms, 50),
            percentile(ms, 95),
        )
        stages = sorted({s for r in rows for s in r.stage_ms})
        entry["stage_p50_ms"] = {
            s: percentile([r.stage_ms.get(s, 0.0) for r in rows], 50) for s in stages
        }
        entry["stage_p95_ms"] = {
            s: percentile([r.stage_ms.get(s, 0.0) for r in rows], 95) for s in stages
        }
        tokens = [r.tokens for r in rows if r.tokens is not None]
        if tokens:
            entry["tokens_mean"] = float(np.mean(tokens))
        summary[name] = entry
    return summary


def category_label(key: str) -> str:
    """ "1" -> "1 multi-hop"; "overall" stays."""
    return f"{key} {CATEGORIES[int(key)]}" if key.isdigit() and int(key) in CATEGORIES else key


def markdown_table(
    summaries: dict[str, dict[str, Any]],
    *,
    metrics: Sequence[str] = ("R@1", "R@5", "R@10", "R@20", "hit@10", "MRR", "p50_ms", "p95_ms"),
    group: str = "overall",
) -> str:
    """One row per configuration for one group (a category or overall)."""
    head = "| config | " + " | ".join(metrics) + " |"
    sep = "|---|" + "---|" * len(metrics)
    rows = [head, sep]
    for config, summary in summaries.items():
        entry = summary.get(group, {})
        cells = []
        for m in metrics:
            v = entry.get(m)
            cells.append("" if v is None else (f"{v:.1f}" if m.endswith("_ms") else f"{v:.3f}"))
        rows.append(f"| {config} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def category_table(summaries: dict[str, dict[str, Any]], metric: str = "R@10") -> str:
    """One row per configuration, one column per category, for one metric."""
    groups = ["1", "2", "3", "4", "overall"]
    head = f"| {metric} | " + " | ".join(category_label(g) for g in groups) + " |"
    rows = [head, "|---|" + "---|" * len(groups)]
    for config, summary in summaries.items():
        cells = [f"{summary[g][metric]:.3f}" if g in summary else "" for g in groups]
        rows.append(f"| {config} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
