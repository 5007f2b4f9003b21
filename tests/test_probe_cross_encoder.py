"""Pure logic of scripts/probe_cross_encoder.py (the probe itself runs on LoCoMo, by hand)."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="module")
def probe():
    path = Path(__file__).resolve().parent.parent / "scripts" / "probe_cross_encoder.py"
    spec = importlib.util.spec_from_file_location("probe_cross_encoder", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _pool(probe, ids, evidence, category=4, conv="c1", scores=None):
    return probe.Pool(
        conv,
        category,
        "q?",
        ids,
        [f"text {i}" for i in ids],
        scores or [float(-k) for k in range(len(ids))],
        set(evidence),
        {e: f"text {e}" for e in evidence},
    )


def test_reorder_top_resorts_only_the_first_n(probe):
    ids = ["a", "b", "c", "d", "e"]
    out = probe.reorder_top(ids, np.array([0.1, 0.9, 0.5, 5.0, 9.0]), 3)
    assert out == ["b", "c", "a", "d", "e"]  # d and e keep their place below the top 3


def test_reorder_top_keeps_ties_in_order(probe):
    assert probe.reorder_top(["a", "b", "c"], np.zeros(3), 3) == ["a", "b", "c"]


def test_zscore_and_blend(probe):
    z = probe.zscore(np.array([1.0, 2.0, 3.0]))
    assert z.mean() == pytest.approx(0.0) and z.std() == pytest.approx(1.0)
    assert probe.zscore(np.array([2.0, 2.0])).tolist() == [0.0, 0.0]
    default, ce = np.array([3.0, 2.0, 1.0]), np.array([1.0, 2.0, 3.0])
    assert np.argmax(probe.blend(default, ce, 0.0)) == 0  # w = 0: the default's order
    assert np.argmax(probe.blend(default, ce, 10.0)) == 2  # large w: the cross-encoder's


def test_recall_and_metrics(probe):
    p1 = _pool(probe, list("abcdefghijkl"), {"a", "k"}, category=1)
    p2 = _pool(probe, list("abcdefghijkl"), {"f"}, category=4)
    assert probe.recall(p1.ids, p1.evidence, 10) == 0.5
    m = probe.metrics([p1.ids, p2.ids], [p1, p2])
    assert m["R@5"] == pytest.approx(0.25)  # p1: a of {a, k}; p2: f is sixth
    assert m["R@10"] == pytest.approx(0.75)
    assert m["multi-hop R@10"] == pytest.approx(0.5)


def test_training_group_adds_missing_evidence_and_samples_negatives(probe):
    pool = _pool(probe, list("abcdefghij"), {"b", "z"})  # z is outside the pool
    texts, labels = probe.training_group(pool, 10, 3, random.Random(0))
    assert labels == [1, 1, 0, 0, 0]
    assert set(texts[:2]) == {"text b", "text z"}
    assert not {"text b", "text z"} & set(texts[2:])


def test_chosen_weight_is_fitted_on_the_other_conversations(probe):
    # the cross-encoder lifts "l" (last by default) in every conversation: in c1 and c2 that
    # is the evidence, in c3 it pushes the evidence "j" (tenth) out of the top 10
    ids = list("abcdefghijkl")
    pools, logits = [], []
    for conv, gold in (("c1", "l"), ("c2", "l"), ("c3", "j")):
        pools.append(_pool(probe, ids, {gold}, conv=conv))
        lg = np.zeros(12)
        lg[11] = 5.0
        logits.append(lg)
    ws = probe.chosen_weights(pools, logits, 12)
    assert ws["c3"] > 0  # chosen on c1 and c2, where trusting the cross-encoder pays
    assert ws["c1"] == 0.0  # c2 and c3 tie: the smallest weight (the default's order) wins
