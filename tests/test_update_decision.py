"""The learned combination of the update decision's evidence (``scripts/lab/update_decision.py``,
measured in place of the chain and not shipped): how it decides, on made-up evidence."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from lab.update_decision import FEATURES, Combiner, features  # scripts/ is on the path above

from localmem.infer import conflict

PASSING = conflict.Evidence(
    slot="home",
    single=True,
    new_slot_p=0.9,
    new_none_p=0.05,
    sentences=1,
    read=True,
    same=0.6,
    cosine=0.7,
    subject="shared",
    aspect="open",
    how="new home: plymouth -> truro",
    how_kind="change",
    new_value=True,
    old_value=True,
)


def _combiner(mode: str, weight_of: dict[str, float], bias: float = 0.0) -> Combiner:
    weights = [weight_of.get(name, 0.0) for name in FEATURES]
    data = {"features": list(FEATURES), "weights": weights, "bias": bias, "mode": mode}
    return Combiner.from_data({**data, "threshold": 0.5, "rescue": 0.8})


def test_features_follow_the_evidence() -> None:
    x = features(PASSING)
    assert x.shape == (len(FEATURES),)
    named = dict(zip(FEATURES, x, strict=True))
    assert named["all pass"] == 1 and named["checks failed"] == 0 and named["change"] == 1
    assert named["confidence"] == pytest.approx(0.42)
    failing = features(replace(PASSING, subject="differ", same=0.01))
    assert dict(zip(FEATURES, failing, strict=True))["checks failed"] == 3


def test_a_combiner_fitted_on_other_features_is_refused() -> None:
    data = {"features": ["same"], "weights": [1.0], "bias": 0.0, "mode": "learned"}
    with pytest.raises(ValueError):
        Combiner.from_data({**data, "threshold": 0.5, "rescue": 0.8})


def test_learned_ends_what_clears_the_bar_but_never_a_veto() -> None:
    sure = _combiner("learned", {"subject ok": 4.0}, bias=-2.0)  # p .88 when the subject passes
    ended = sure(replace(PASSING, aspect="needed"), 2)
    assert isinstance(ended, conflict.Ending) and ended.index == 2
    assert ended.confidence == pytest.approx(1 / (1 + np.exp(-2.0)))
    assert "subject ok" in ended.reason and ended.reason.startswith("new home")
    assert sure(replace(PASSING, subject="differ"), 0) == "learned"
    assert sure(replace(PASSING, question=True), 0) == "question"
    assert sure(replace(PASSING, read=False), 0) == "size"


def test_rescue_overrules_one_soft_check_only() -> None:
    sure = _combiner("rescue", {}, bias=3.0)  # p .95 for every pair
    unsure = _combiner("rescue", {}, bias=0.0)  # p .5, under the rescue bar
    assert isinstance(sure(PASSING, 0), conflict.Ending)  # the chain's own ending
    one = replace(PASSING, aspect="needed")
    assert isinstance(sure(one, 0), conflict.Ending)
    assert unsure(one, 0) == "aspect"
    two = replace(PASSING, aspect="needed", subject="differ")
    assert sure(two, 0) == "subject"  # two checks failed: the chain's verdict
    assert sure(replace(PASSING, old_ending_p=0.9), 0) == "old-ending"  # not a soft check
    assert sure(replace(one, question=True), 0) == "aspect"


def test_bench_never_lets_a_combiner_meet_the_held_out_half(tmp_path, monkeypatch) -> None:
    """``fit_update_decision.py bench`` runs bench_understanding with a candidate decision:
    like its ``--reader``, only with ``--dev-only`` (the written held-out half left out)."""
    import argparse

    import fit_update_decision

    path = tmp_path / "combiner.json"
    weights = [0.0] * len(FEATURES)
    data = {"features": list(FEATURES), "weights": weights, "bias": 0.0, "mode": "learned"}
    path.write_text(json.dumps({**data, "threshold": 0.5, "rescue": 0.8}))
    ran = []
    monkeypatch.setattr(fit_update_decision.runpy, "run_path", lambda *a, **k: ran.append(sys.argv))
    monkeypatch.setattr(conflict, "decide", conflict.decide)  # bench replaces it
    monkeypatch.setattr(sys, "argv", sys.argv)
    fit_update_decision.bench(argparse.Namespace(decision=str(path), rest=["--locomo", "x.json"]))
    assert len(ran) == 1 and "--dev-only" in ran[0] and "--locomo" in ran[0]
