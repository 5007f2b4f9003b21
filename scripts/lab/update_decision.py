"""A learned combination of the evidence the update decision reads (issue 35, tenth pass).

The chain of :mod:`localmem.infer.conflict` ends a stored memory only when every check passes.
A :class:`Combiner` weighs the same evidence (:class:`~localmem.infer.conflict.Evidence`)
instead: a logistic regression over a handful of features of one (new fact, stored memory)
pair (:func:`features`), fitted on the in-sample hand-written dialogues and LoCoMo background
pairs by ``scripts/fit_update_decision.py`` (a small JSON file; numpy only). Measured in place
of the chain (``compare_readers.py --decision``, ``fit_update_decision.py bench``) and not
shipped: it lives here, not in the package (docs/benchmarks.md, "tenth pass"). It decides in
one of two ways (its ``mode``):

- ``learned``: the pair is ended when its probability clears ``threshold``; the hard vetoes
  stay (a long message, a question, a fact of no slot are never compared);
- ``rescue``: the chain as it is, and a pair that fails exactly one soft check (same slot,
  subject, aspect, value, confidence) is ended when its probability clears ``rescue``.

The Ending's reason says why: the chain's reason where the value check found one, and the
evidence that weighed most for the pair.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from localmem.infer.conflict import Ending, Evidence, chain, failed_gates

#: the features of one pair, in the order of a combiner's weights
FEATURES = (
    "same",
    "cosine",
    "confidence",
    "subject ok",
    "subject shared",
    "aspect ok",
    "aspect shared",
    "ends named",
    "ending",
    "change",
    "numbers differ",
    "new ending",
    "old ending",
    "single",
    "new none",
    "new slot",
    "new value",
    "old value",
    "value shared",
    "first person both",
    "checks failed",
    "all pass",
)
#: the checks a rescue may overrule (one at a time): evidence, not safety
SOFT = frozenset({"same-slot", "subject", "aspect", "value", "confidence"})


def features(e: Evidence) -> np.ndarray:
    """The :data:`FEATURES` of one pair's evidence."""
    kind = e.how_kind
    failed = len(failed_gates(e))
    return np.array(
        [
            e.same,
            e.cosine,
            e.confidence,
            e.subject_ok,
            e.subject == "shared",
            e.aspect_ok,
            e.aspect == "shared",
            kind in ("named", "handover", "ending-named"),
            kind == "ending",
            kind == "change",
            e.numbers_differ,
            e.new_ending_p,
            e.old_ending_p,
            e.single,
            e.new_none_p,
            e.new_slot_p,
            e.new_value,
            e.old_value,
            e.value_shared,
            e.new_first_person and e.old_first_person,
            failed,
            failed == 0,
        ],
        dtype=np.float64,
    )


def vetoed(e: Evidence) -> bool:
    """Whether a pair is never ended, whatever its evidence: a memory too long to read (a
    message says more than the one fact that changed), a question (it states no value)."""
    return not e.read or e.question


@dataclass(frozen=True)
class Combiner:
    """A fitted logistic regression over :data:`FEATURES` and how it decides."""

    weights: np.ndarray
    bias: float
    mode: str  # "learned" or "rescue"
    threshold: float  # the learned decision's bar
    rescue: float  # the rescue's bar

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Combiner:
        if tuple(data["features"]) != FEATURES:
            raise ValueError("the combiner was fitted on other features")
        return cls(
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=float(data["bias"]),
            mode=str(data["mode"]),
            threshold=float(data["threshold"]),
            rescue=float(data["rescue"]),
        )

    @classmethod
    def load(cls, path: str) -> Combiner:
        with open(path, encoding="utf-8") as f:
            return cls.from_data(json.load(f))

    def p(self, e: Evidence) -> float:
        """The probability that the new fact ends the stored memory."""
        z = float(features(e) @ self.weights) + self.bias
        return 1.0 / (1.0 + float(np.exp(-z)))

    def why(self, e: Evidence, p: float) -> str:
        """The reason an Ending gives: the chain's where the value check found one, the
        features that weighed most for the pair, and the probability."""
        x = features(e)
        top = np.argsort(-(x * self.weights))[:3]
        said = ", ".join(FEATURES[j] for j in top if x[j] * self.weights[j] > 0)
        head = e.how or f"learned {e.slot}"
        return f"{head} (p {p:.2f}; most for it: {said or '-'})"

    def __call__(self, e: Evidence, i: int) -> Ending | str:
        """The decision on one pair: an :class:`Ending`, or the first check that said no
        (``learned``: "size" or "question" for a veto, "learned" for a probability under
        the bar)."""
        if self.mode == "rescue":
            found = chain(e, i)
            if isinstance(found, Ending):
                return found
            failed = failed_gates(e)
            if len(failed) != 1 or failed[0] not in SOFT or e.question:
                return found
            p = self.p(e)
            return Ending(i, p, self.why(e, p)) if p >= self.rescue else found
        if not e.read:
            return "size"
        if e.question:
            return "question"
        p = self.p(e)
        return Ending(i, p, self.why(e, p)) if p >= self.threshold else "learned"
