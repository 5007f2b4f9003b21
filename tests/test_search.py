"""Search on a real store: modes, fusion, filters, explanations, bad options."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import numpy as np
import pytest

from localmem import InputError
from localmem.retrieval.fusion import RankedList, minmax, rrf, zscore
from localmem.retrieval.packing import pack

UTC = timezone.utc
NOTES = [
    ("The rate limiter should use a sliding window, not fixed buckets", "u1", "2023-01-05"),
    ("Redis keeps the session cache for the web tier", "u1", "2023-02-10"),
    ("Add an index on orders.user_id to speed up the dashboard query", "u2", "2023-03-15"),
    ("Retry API calls that fail with 429 using exponential backoff", "u2", "2023-04-20"),
    ("Melanie painted a sunrise over the lake last summer", "u3", "2023-05-25"),
]


@pytest.fixture
def filled(memory):
    memory.add_many(
        [{"content": c, "user_id": u, "event_time": f"{d}T12:00:00+00:00"} for c, u, d in NOTES],
        kind="note",
    )
    return memory


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_modes_find_the_obvious_memory(filled, mode):
    result = filled.search("sliding window rate limiter", k=3, mode=mode)
    assert result.hits[0].memory.content.startswith("The rate limiter")
    assert [h.rank for h in result.hits] == list(range(1, len(result.hits) + 1))
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)


def test_dense_finds_paraphrase_without_shared_words(filled):
    result = filled.search("throttling requests per client", k=1, mode="dense")
    assert "rate limiter" in result.hits[0].memory.content


def test_hybrid_evidence_and_explanation(filled):
    result = filled.search("Redis cache", k=2, temporal=False, rerank="off")
    top = result.hits[0]
    assert "Redis" in top.memory.content
    assert {"dense", "bm25"} <= set(top.evidence)  # and the relevance signals
    default = filled.search("Redis cache", k=2)  # the default adds the reranker's score
    assert {"dense", "bm25", "rerank"} <= set(default.hits[0].evidence)
    assert "Redis" in default.hits[0].memory.content
    stage = {r.stage: r for r in result.stages}["candidates"]
    assert stage.implementation == "hnsw+bm25" and stage.candidates_out >= 2
    assert stage.notes["fusion"] == "zscore"  # the default, chosen on LoCoMo dev
    assert re.search(r"^candidates +hnsw\+bm25 ", result.explain(), re.M)


@pytest.mark.parametrize("fusion", ["rrf", "zscore", "minmax"])
def test_every_fusion_runs(filled, fusion):
    assert (
        filled.search("index on user_id", k=1, fusion=fusion)
        .hits[0]
        .memory.content.startswith("Add an index")
    )


def test_scope_kind_time_and_metadata_filters(filled):
    filled.add(
        "A fact about Redis in another scope",
        kind="fact",
        user_id="u9",
        metadata={"source": "wiki", "n": 3},
    )
    hits = filled.search("Redis", k=5, user_id="u9")
    assert [h.memory.user_id for h in hits] == ["u9"]
    assert {h.memory.kind for h in filled.search("Redis", k=10, kinds=["note"])} == {"note"}
    hits = filled.search(
        "anything", k=10, since="2023-03-01T00:00:00+00:00", until=datetime(2023, 4, 30, tzinfo=UTC)
    )
    assert sorted(h.memory.user_id for h in hits) == ["u2", "u2"]
    assert [h.memory.user_id for h in filled.search("Redis", metadata={"source": "wiki"})] == ["u9"]
    assert [h.memory.user_id for h in filled.search("Redis", metadata={"n": 3})] == ["u9"]
    report = {r.stage: r for r in filled.search("Redis", user_id="u9").stages}["filter"]
    assert report.notes["allowed"] == 1


def test_filter_that_matches_nothing(filled):
    assert len(filled.search("Redis", user_id="nobody")) == 0


def test_deleted_memories_never_come_back(filled):
    top = filled.search("Redis session cache", k=1).hits[0]
    filled.delete(top.memory.id)
    for mode in ("hybrid", "dense", "lexical"):
        assert all(h.memory.id != top.memory.id for h in filled.search("Redis", k=5, mode=mode))


def test_empty_store_returns_no_hits(memory):
    assert len(memory.search("anything")) == 0
    assert len(memory.search("anything", mode="lexical")) == 0


def test_packing_into_a_budget(filled):
    full = filled.search("API", k=5)
    packed = filled.search("API", k=5, budget_tokens=20)
    assert len(packed) < len(full)
    assert [h.memory.id for h in packed] == [h.memory.id for h in full][: len(packed)]
    assert packed.packed_tokens <= 20 or len(packed) == 1
    assert {r.stage for r in packed.stages} >= {"pack"}


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "fuzzy"},
        {"k": 0},
        {"k": "3"},
        {"fusion": "max"},
        {"kinds": ["banana"]},
        {"since": "2023-01-01"},
        {"since": "2023-02-01T00:00:00+00:00", "until": "2023-01-01T00:00:00+00:00"},
        {"metadata": {"k": [1]}},
        {"metadata": {"k": None}},
        {"colour": "red"},
        {"attributes": "sometimes"},
        {"dense_weight": 2},
    ],
)
def test_invalid_options_are_refused(filled, options):
    with pytest.raises(InputError):
        filled.search("Redis", **options)


def test_invalid_query(filled):
    with pytest.raises(InputError):
        filled.search("   ")
    with pytest.raises(InputError):
        filled.search(None)


def _lists():
    a = RankedList("dense", np.array([1, 2, 3]), np.array([0.9, 0.8, 0.1]))
    b = RankedList("bm25", np.array([3, 1]), np.array([12.0, 2.0]))
    return [a, b]


def test_rrf_is_sum_of_reciprocal_ranks():
    fused = rrf(_lists(), k=60)
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)


def test_calibrated_fusions_rank_agreement_first():
    for fuse in (zscore, minmax):
        fused = fuse(_lists())
        assert set(fused) == {1, 2, 3}
        assert fused[2] < max(fused[1], fused[3])


def test_pack_keeps_order_and_first_hit():
    assert pack([10, 10, 10], 25) == (2, 20)
    assert pack([50, 1], 10) == (1, 50)
    assert pack([], 10) == (0, 0)


def test_rows_and_placement_in_one_round_trip_match_the_separate_reads(filled):
    """The reranker reads its pool's rows and its neighbours' placement in one query; it must
    return what the two separate reads return (on either backend)."""
    from localmem.store import memories, records

    session = filled.start_session("a task")
    filled.add_thought(session.id, "first step")
    labels = sorted(int(m.label) for m in filled.list(limit=20))
    rows, placed = labels[:3], [*labels[2:], 10_000]  # one label in both, one unknown
    items, places = memories.by_labels_with_placement(filled.kernel, rows, placed)
    assert items == memories.by_labels(filled.kernel, rows)
    assert places == records.placement_by_labels(filled.kernel.db, placed)
    assert set(places) == set(placed) - {10_000}
    assert any(p[0] == session.id for p in places.values())  # a memory in a session
    assert memories.by_labels_with_placement(filled.kernel, [], placed)[1] == places
    assert memories.by_labels_with_placement(filled.kernel, rows, [])[0] == items
