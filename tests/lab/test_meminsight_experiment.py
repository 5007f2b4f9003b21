"""The MemInsight experiment: packaged fixtures, metrics, a run of the quick protocol."""

from __future__ import annotations

import pytest
from lab.meminsight import (
    BASELINE,
    SEED,
    VARIATIONS,
    QueryResult,
    aggregate,
    load_fixture,
    run_dataset,
)


def test_fixtures_are_package_data_and_labels_are_valid():
    quick = load_fixture("quick")
    session = quick["sessions"][0]
    assert len(session["thoughts"]) == 10
    assert session["queries"][0]["text"] == "How should we handle rate limit errors in the API?"
    sessions = load_fixture("sessions")["sessions"]
    assert len(sessions) >= 5
    assert {s["variety"] for s in sessions} == {"varied", "focused"}
    for s in sessions:
        assert 10 <= len(s["thoughts"]) <= 20 and len(s["queries"]) >= 5
        for q in s["queries"]:
            assert q["complexity"] in ("simple", "complex")
            assert all(1 <= n <= len(s["thoughts"]) for n in q["relevant"])
    assert len(load_fixture("paraphrases")["pairs"]) >= 10


def test_metrics_follow_the_seed_definitions():
    r = QueryResult(
        "s",
        "varied",
        "q",
        "simple",
        frozenset({1, 2, 3}),
        ranked=[1, 4, 2, 5, 6, 3],
        fill={5, 6, 3},  # 1, 4, 2 passed the filter
        tokens={n: 10 for n in range(1, 7)},
        size=10,
    )
    m = r.metrics(k=5)
    assert m["precision"] == pytest.approx(2 / 3)  # of what the filter returned
    assert m["P@5"] == pytest.approx(2 / 5)  # of the five shown, fill included
    assert m["filter_recall"] == pytest.approx(2 / 3)
    assert m["R@5"] == pytest.approx(2 / 3)
    assert m["tokens"] == 30 and m["tokens_with_fill"] == 50
    assert m["filter_ratio"] == pytest.approx(0.7)
    assert aggregate([r, r])["precision"] == pytest.approx(2 / 3)


@pytest.mark.slow
def test_quick_protocol_runs_end_to_end(memory):
    wanted = [v for v in VARIATIONS if v.name in (BASELINE, SEED)]
    results, ms, failed = run_dataset(
        memory, load_fixture("quick"), miner="model-free", mode="dense", variations=wanted
    )
    assert failed == 0 and ms > 0
    base, seed = results[BASELINE][0], results[SEED][0]
    assert base.ranked and sorted(base.ranked) == list(range(1, 11))
    assert base.metrics()["filter_recall"] == 1.0 and not base.fill
    assert set(seed.ranked) == set(base.ranked)
    assert seed.metrics()["filter_ratio"] == 1 - len(seed.kept) / 10
