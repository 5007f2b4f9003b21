"""Do two facts fill the same slot? Read from the pair, without a model.

The reader (:mod:`localmem.infer.reading`) classifies each fact alone, and the decision
multiplies the two slot distributions. A fact can read confidently as one slot while the fact
it replaces reads as a neighbouring one ("I take the train to work" as a schedule, "we got an
e-bike, so I ride to work now" as something else): the product is then near 0. This pair model
reads both at once: a small MLP (one hidden relu layer) over ``[a*b, |a-b|]`` of the two
embeddings (symmetric in the two facts), Platt-calibrated on generated pairs the training
never saw. Fitted by ``scripts/train_pair.py`` on pairs of the generated sentences the reader
learnt from (same slot, the same value, look-alikes of another slot), shipped as
``localmem/infer/data/pair.npz``. The decision uses it only where it is sure
(``conflict.PAIR_P``, calibrated on the dev dialogues and LoCoMo's background): at the bar
where it passes as many generated pairs of two slots as the product does (``bar``, .72), it
ended more of LoCoMo's turns.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

import numpy as np

DATA = "pair.npz"


class PairModel:
    """The shipped pair model (see the module docstring)."""

    def __init__(self, data: dict[str, np.ndarray]) -> None:
        meta = json.loads(str(data["meta"]))
        self.embedder: str = meta["embedder"]
        self.dim: int = int(meta["dim"])
        self.w1 = data["pair_w1"].astype(np.float32)
        self.b1 = data["pair_b1"].astype(np.float32)
        self.w = data["pair_w"].astype(np.float32)
        self.b = float(data["pair_b"])
        self.scale, self.shift = (float(v) for v in data["platt"])
        #: the probability at which it passes as many generated pairs of two slots as the
        #: product of the slot distributions does at ``SAME_SLOT_P`` (a validation figure)
        self.bar = float(data["bar"])

    def same_slot(self, a: np.ndarray, b: np.ndarray) -> float:
        """The calibrated probability that the facts embedded as ``a`` and ``b`` fill the
        same slot (none, a fact that fills no slot, is not one)."""
        a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
        hidden = np.maximum(np.concatenate([a * b, np.abs(a - b)]) @ self.w1 + self.b1, 0.0)
        z = float(hidden @ self.w + self.b)
        return 1.0 / (1.0 + float(np.exp(-(self.scale * z + self.shift))))

    def fits(self, embedder: str, dim: int) -> bool:
        """Whether the model was fitted on this embedder's vectors (as the reader was)."""
        return dim == self.dim and embedder.split("+")[0] == self.embedder.split("+")[0]


@lru_cache(maxsize=1)
def shipped() -> PairModel:
    """The pair model shipped with the package (loaded once)."""
    with resources.files("localmem.infer.data").joinpath(DATA).open("rb") as fh:
        data = dict(np.load(fh, allow_pickle=False))
    return PairModel(data)
