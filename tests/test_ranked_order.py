"""The candidates' ranking: best score first, ties in label order (the order every stage and
the hits follow; computed by two sorts on plain attributes, checked against the tuple key)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from localmem.retrieval.context import Candidate, SearchContext
from localmem.retrieval.options import SearchOptions

# few distinct values, so that ties are common; both zeros, which compare equal
_SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e-6]),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)


def _context(cands: list[Candidate]) -> SearchContext:
    ctx = SearchContext(None, "a query", SearchOptions(), datetime(2026, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    ctx.candidates = {c.label: c for c in cands}
    return ctx


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.integers(0, 10**6), _SCORES, max_size=200))
def test_ranked_is_score_then_label(scores: dict[int, float]) -> None:
    ctx = _context([Candidate(label, score) for label, score in scores.items()])
    expected = sorted(ctx.candidates.values(), key=lambda c: (-c.score, c.label))
    assert [c.label for c in ctx.ranked()] == [c.label for c in expected]


def test_ties_go_by_label_whatever_the_insertion_order() -> None:
    ctx = _context([Candidate(9, 0.5), Candidate(2, 0.5), Candidate(5, 1.0), Candidate(1, 0.0)])
    assert [c.label for c in ctx.ranked()] == [5, 2, 9, 1]
    ctx.keep_top(2)
    assert sorted(ctx.candidates) == [2, 5]
