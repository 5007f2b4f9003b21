"""Pure scoring of procedures: how well one matches a task, and when one is retired."""

from __future__ import annotations


def reliability(successes: int, uses: int) -> float:
    """Smoothed success rate: 0.5 before any use, then moving with the record."""
    return (successes + 1) / (uses + 2)


def match_score(
    similarity: float,
    *,
    type_match: bool | None,
    reliability_value: float,
    type_weight: float,
    reliability_weight: float,
) -> float:
    """Trigger similarity, plus ``type_weight`` when the task types agree, plus a term that
    promotes procedures that worked and demotes ones that failed (zero before any use)."""
    score = similarity
    if type_match:
        score += type_weight
    score += reliability_weight * (reliability_value - 0.5)
    return score


def should_retire(uses: int, successes: int, *, after_uses: int, below: float) -> bool:
    """Retire after ``after_uses`` uses when the success rate is under ``below``."""
    return uses >= after_uses and successes / uses < below
