"""``scripts/train_infer.py --hand``: the in-sample dev sets' labelled facts for the slot
classifier, labelled from their dialogue's category; the out-of-sample sets are refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import train_infer  # scripts/ is not a package: on the path above
from lab.infer_training import SLOTS

DATA = Path(__file__).resolve().parents[1] / "scripts/lab/data/infer"


def test_hand_facts_are_the_supersession_turns_labelled_by_category() -> None:
    facts = dict(train_infer.hand_facts(["dev4"]))
    dialogues = json.loads((DATA / "dev4.json").read_text())["dialogues"]
    expected: dict[str, str] = {}
    for dlg in dialogues:
        turns = [t for s in dlg["sessions"] for t in s["turns"]]
        for old, new in dlg["supersede"]:
            for turn in (old, new):
                s, t = (int(x) for x in turn.split("."))
                text = dlg["sessions"][s]["turns"][t]
                assert text in turns
                category = dlg["category"].removesuffix("-end")
                expected[text] = train_infer.CATEGORY_SLOT.get(category, category)
    assert facts == expected
    assert set(facts.values()) <= set(SLOTS)
    assert "lookalike" not in facts.values()


@pytest.mark.parametrize("name", ["dev6", "dev7", "dev8", "dev9", "heldout"])
def test_out_of_sample_sets_are_refused(name: str) -> None:
    with pytest.raises(SystemExit, match="in-sample"):
        train_infer.hand_facts(["dev", name])


def test_hand_facts_weigh_in_the_slot_fit() -> None:
    """A weighted fact moves the classifier towards its label (a made-up embedder)."""
    rng = np.random.default_rng(0)
    xt = rng.normal(size=(len(SLOTS) * 8, 6))
    yt = np.repeat(np.arange(len(SLOTS)), 8)

    class Embedder:
        def embed_batch(self, texts):
            return np.full((len(texts), 6), 3.0)

    fact = [("a sentence", "home")]
    plain = train_infer.fit_slots(xt, yt)
    heavy = train_infer.fit_slots(xt, yt, fact, 50.0, Embedder())
    point = np.full((1, 6), 3.0)
    home = SLOTS.index("home")
    assert heavy.predict_proba(point)[0, home] > plain.predict_proba(point)[0, home]
