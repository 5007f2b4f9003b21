"""Packing hits into a token budget (a pure function over token counts)."""

from __future__ import annotations

from collections.abc import Sequence


def pack(token_counts: Sequence[int], budget: int) -> tuple[int, int]:
    """How many hits, in order, fit the budget, and the tokens they take.

    A hit that does not fit ends the packing (the order is the ranking; skipping ahead would put
    a worse hit before a better one that was dropped). The first hit is always kept so a search
    never comes back empty because one memory is long.
    """
    used = 0
    for i, n in enumerate(token_counts):
        if used + n > budget and i > 0:
            return i, used
        used += n
    return len(token_counts), used
