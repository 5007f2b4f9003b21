"""Calibrate the model-free miner's abstention (issue 35) on the dev half of the hand-labelled
memories: for each axis, the largest margin (best label's score minus the runner-up's) below
which the labels the miner would give are right at most half the time: guesses, so it says
nothing there.

Usage:
    python scripts/calibrate_attributes.py [--label-set everyday]

Prints, per axis, accuracy and coverage at each candidate margin and the margin chosen; the
chosen values go into ``localmem/attributes/modelfree.py`` (``ABSTAIN_MARGIN``) by hand, so a
change is a reviewed commit. Reads only ``scripts/lab/data/attributes/dev.json``.
"""

from __future__ import annotations

import argparse

import numpy as np
from lab.attributes_eval import load, predict

from localmem.attributes import modelfree
from localmem.attributes.labels import get_label_set
from localmem.config import AttributeConfig
from localmem.embed import make_embedder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label-set", default="everyday")
    args = parser.parse_args()
    memories = load("dev")
    saved = dict(modelfree.ABSTAIN_MARGIN)
    modelfree.ABSTAIN_MARGIN.update({"topic": 0.0, "intent": 0.0})  # see every best label
    miner = modelfree.ModelFreeMiner(
        make_embedder(), get_label_set(args.label_set), AttributeConfig()
    )
    preds = predict(miner, memories)
    modelfree.ABSTAIN_MARGIN.update(saved)
    for axis in ("topic", "intent"):
        right = np.array(
            [
                (p.topic in m["topics"]) if axis == "topic" else (p.intent == m["intent"])
                for m, p in zip(memories, preds, strict=True)
            ]
        )
        margin = np.array([getattr(p, f"{axis}_margin") for p in preds])
        chosen = None
        print(f"{axis}: accuracy with no abstention {right.mean():.3f}")
        chosen = 0.0
        for t in np.round(np.arange(0.005, 0.101, 0.005), 3):
            kept = margin >= t
            acc = right[kept].mean() if kept.any() else 0.0
            below = right[~kept].mean() if (~kept).any() else 1.0
            print(
                f"  margin {t:.3f}: given {kept.mean():.2f}, accuracy {acc:.3f}, "
                f"accuracy below {below:.3f}"
            )
            if below <= 0.5:
                chosen = float(t)
        print(f"  chosen {axis} margin: {chosen}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
