"""A learned update decision (issue 35): collect labelled pairs, fit a combiner, score it.

Usage:
    python scripts/fit_update_decision.py collect --out pairs.json
        [--locomo /path/to/locomo_dev.json --conversations 2]
    python scripts/fit_update_decision.py fit --pairs pairs.json --out combiner.json
        [--leave-out dev4] [--mode learned|rescue]
    python scripts/fit_update_decision.py bench --decision combiner.json -- <bench args>

``collect`` stores the in-sample sets (dev, dev2, dev3, dev4, dev5; never dev6..dev9, never the
written held-out half) with ``infer=True`` as ``lab.infer_eval.ingest`` does, with main's
decision (the chain), and records every (new fact, stored memory) pair the decision is asked
about: the pair's :class:`~localmem.infer.conflict.Evidence`, the chain's verdict, and a label
(1: the dialogue labels the new fact's turn as superseding the stored memory's turn; 0
otherwise). With ``--locomo``, the first ``--conversations`` LoCoMo dev conversations are
stored the same way and every pair is a background negative (LoCoMo's people rarely change a
fact).

``fit`` fits :class:`lab.update_decision.Combiner` (a logistic regression with an L2
penalty, Newton's method, numpy; deterministic: the same pairs give the same file, byte for
byte) on every pair but the vetoed ones (:func:`lab.update_decision.vetoed`) and those of
the ``--leave-out`` sets ("pooled" leaves dev, dev2 and dev3 out), and chooses its bars on
the pairs it was fitted on:

- ``threshold`` (the learned decision): the lowest bar at which the model ends no more
  negative pairs than the chain does on the same pairs (hand-written and background counted
  apart);
- ``rescue`` (the chain with the combiner as a rescue): the lowest bar at which at most
  ``--rescue-false`` (default 0) negative pairs that fail exactly one soft check are ended
  (hand-written or background).

Both bars are chosen on out-of-fold probabilities (:func:`out_of_fold`: the fitted pairs
dealt to five folds by dialogue, a LoCoMo fact its own group), not on the fitted model's own
scores.

``bench`` runs ``scripts/bench_understanding.py`` with the combiner in place of the chain
(``conflict.decide``), always with ``--dev-only``: a candidate never meets the written held-out
half.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np
from lab import update_decision as combine
from lab.infer_eval import Run, ingest, ingest_conversation, load_dialogues
from lab.locomo import load_locomo

from localmem import Memory
from localmem.embed import make_embedder
from localmem.infer import conflict

HERE = Path(__file__).resolve().parent
IN_SAMPLE = ("dev", "dev2", "dev3", "dev4", "dev5")
POOLED = ("dev", "dev2", "dev3")
#: the L2 penalty on the standardised weights
PENALTY = 1.0
#: the folds of the out-of-fold probabilities the bars are chosen on
FOLDS = 5


class PairRecorder:
    """Stands in for :func:`conflict.endings` while a set is stored: the same decision, with
    every pair's evidence and verdict kept."""

    def __init__(self) -> None:
        self.where = ("", "")
        self.rows: list[dict] = []

    def __call__(self, reader, fact, vector, memories, **kw) -> list[conflict.Ending]:
        found = conflict.evidences(reader, fact, vector, memories, **kw)
        if found is None:
            return []
        out = []
        for i, ((text, _), e) in enumerate(zip(memories, found, strict=True)):
            verdict = conflict.decide(e, i)
            ended = isinstance(verdict, conflict.Ending)
            self.rows.append(
                {
                    "set": self.where[0],
                    "dialogue": self.where[1],
                    "fact": fact,
                    "text": text,
                    "evidence": asdict(e),
                    "chain": "ended" if ended else verdict,
                }
            )
            if ended:
                out.append(verdict)
        return sorted(out, key=lambda e: -e.confidence)


def _label(memory: Memory, dlg: dict, rows: list[dict]) -> None:
    """Label a dialogue's pairs: 1 where the new fact's turn supersedes the stored one's."""
    turns: dict[str, set[str]] = {}
    for m in memory.list(user_id=dlg["id"], limit=1000):
        turns.setdefault(m.content, set()).add(m.metadata.get("turn", ""))
    for s, session in enumerate(dlg["sessions"]):
        for t, text in enumerate(session["turns"]):
            turns.setdefault(text, set()).add(f"{s}.{t}")
    pairs = {tuple(p) for p in dlg["supersede"]}
    for row in rows:
        news, olds = turns.get(row["fact"], set()), turns.get(row["text"], set())
        row["label"] = int(any((o, n) in pairs for o in olds for n in news))


def collect(args) -> int:
    embedder = make_embedder()
    recorder = PairRecorder()
    original = conflict.endings
    conflict.endings = recorder
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in IN_SAMPLE:
                dialogues = load_dialogues(HERE / f"lab/data/infer/{name}.json")
                with Memory.open(Path(tmp) / name, embedder=embedder) as memory:
                    for dlg in dialogues:
                        recorder.where = (name, dlg["id"])
                        start = len(recorder.rows)
                        ingest(memory, dlg, infer=True, run=Run("infer"))
                        _label(memory, dlg, recorder.rows[start:])
                print(name, len(recorder.rows), flush=True)
            if args.locomo:
                with Memory.open(Path(tmp) / "locomo", embedder=embedder) as memory:
                    for conv in load_locomo(args.locomo)[: args.conversations]:
                        recorder.where = ("locomo", conv.sample_id)
                        start = len(recorder.rows)
                        ingest_conversation(memory, conv)
                        for row in recorder.rows[start:]:
                            row["label"] = 0
                        print(conv.sample_id, len(recorder.rows), flush=True)
    finally:
        conflict.endings = original
    Path(args.out).write_text(json.dumps(recorder.rows, indent=1, default=str))
    return 0


def evidence_of(row: dict) -> conflict.Evidence:
    return conflict.Evidence(**row["evidence"])


def design(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """The features and labels of the pairs that are not vetoed."""
    kept = [r for r in rows if not combine.vetoed(evidence_of(r))]
    x = np.array([combine.features(evidence_of(r)) for r in kept]).reshape(
        -1, len(combine.FEATURES)
    )
    y = np.array([r["label"] for r in kept], dtype=np.float64)
    return x, y


def fit_logistic(
    x: np.ndarray, y: np.ndarray, penalty: float = PENALTY
) -> tuple[np.ndarray, float]:
    """A logistic regression with an L2 penalty on the standardised weights (Newton's method),
    returned as weights and bias over the raw features."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    ridge = np.full(z.shape[1], penalty)
    ridge[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        grad = z.T @ (p - y) + ridge * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(ridge) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    weights = w[:-1] / scale
    bias = float(w[-1] - (w[:-1] * mean / scale).sum())
    return weights, bias


def _group(row: dict) -> str:
    """Which pairs are held out together when the bars are chosen: a hand-written dialogue,
    or one LoCoMo fact."""
    return f"{row['set']}/{row['dialogue']}" + (f"/{row['fact']}" if row["set"] == "locomo" else "")


def out_of_fold(rows: list[dict], folds: int = FOLDS) -> np.ndarray:
    """Each kept pair's probability under a model fitted without its fold (dialogues and
    LoCoMo facts dealt to ``folds`` folds in sorted order)."""
    kept = [r for r in rows if not combine.vetoed(evidence_of(r))]
    groups = sorted({_group(r) for r in kept})
    fold_of = {g: i % folds for i, g in enumerate(groups)}
    fold = np.array([fold_of[_group(r)] for r in kept])
    x, y = design(rows)
    ps = np.zeros(len(kept))
    for k in range(folds):
        w, b = fit_logistic(x[fold != k], y[fold != k])
        ps[fold == k] = 1.0 / (1.0 + np.exp(-(x[fold == k] @ w + b)))
    return ps


def _bars(rows: list[dict], rescue_false: int = 0) -> tuple[float, float]:
    """The bars of the module docstring, chosen on the out-of-fold probabilities of the pairs
    the model is fitted on."""
    kept = [r for r in rows if not combine.vetoed(evidence_of(r))]
    ps = out_of_fold(rows)
    y = np.array([r["label"] for r in kept])
    background = np.array([r["set"] == "locomo" for r in kept])
    chain_ended = np.array([r["chain"] == "ended" for r in kept])
    allowed_hand = int((chain_ended & (y == 0) & ~background).sum())
    allowed_bg = int((chain_ended & (y == 0) & background).sum())
    threshold = 1.0
    for bar in sorted(set(np.round(ps, 6)), reverse=True):
        ended = ps >= bar
        if (ended & (y == 0) & ~background).sum() > allowed_hand:
            break
        if (ended & (y == 0) & background).sum() > allowed_bg:
            break
        threshold = float(bar)
    one_soft = np.array(
        [
            len(f := conflict.failed_gates(evidence_of(r))) == 1 and f[0] in combine.SOFT
            for r in kept
        ]
    )
    negatives = np.sort(ps[one_soft & (y == 0)])[::-1]
    rescue = float(negatives[rescue_false]) + 1e-6 if len(negatives) > rescue_false else 0.5
    found = int((one_soft & (y == 1) & (ps >= rescue)).sum())
    print(
        f"  out of fold: learned finds {int(((ps >= threshold) & (y == 1)).sum())} of "
        f"{int(y.sum())} (chain {int((chain_ended & (y == 1)).sum())}); rescue adds {found}"
    )
    return threshold, max(rescue, 0.5)


def fit(args) -> int:
    rows = json.loads(Path(args.pairs).read_text())
    left = set(POOLED if args.leave_out == "pooled" else (args.leave_out or "").split(","))
    train = [r for r in rows if r["set"] not in left]
    x, y = design(train)
    weights, bias = fit_logistic(x, y)
    base = {
        "features": list(combine.FEATURES),
        "weights": [round(float(w), 8) for w in weights],
        "bias": round(bias, 8),
        "mode": args.mode,
        "threshold": 1.0,
        "rescue": 1.0,
    }
    threshold, rescue = _bars(train, args.rescue_false)
    data = {
        **base,
        "threshold": round(threshold, 6),
        "rescue": round(rescue, 6),
        "fitted_on": {
            "sets": sorted({r["set"] for r in train}),
            "pairs": len(y),
            "positives": int(y.sum()),
            "penalty": PENALTY,
            "rescue_false": args.rescue_false,
        },
    }
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    print(
        f"{args.out}: {len(y)} pairs, {int(y.sum())} positive; threshold {threshold:.4f}, "
        f"rescue {rescue:.4f}"
    )
    per_sd = zip(combine.FEATURES, weights * x.std(axis=0), strict=True)
    for name, w in sorted(per_sd, key=lambda t: -abs(t[1])):
        print(f"  {name:20s} {w:+.3f} (per sd)")
    return 0


def bench(args) -> int:
    conflict.decide = combine.Combiner.load(args.decision)
    # a candidate never meets the written held-out half (bench_understanding's --reader rule)
    dev_only = [] if "--dev-only" in args.rest else ["--dev-only"]
    sys.argv = ["bench_understanding.py", *args.rest, *dev_only]
    runpy.run_path(str(HERE / "bench_understanding.py"), run_name="__main__")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--out", required=True)
    c.add_argument("--locomo", default=None)
    c.add_argument("--conversations", type=int, default=2)
    f = sub.add_parser("fit")
    f.add_argument("--pairs", required=True)
    f.add_argument("--out", required=True)
    f.add_argument("--leave-out", default=None, help="pooled, dev4, dev5 (comma-separated)")
    f.add_argument("--mode", default="learned", choices=("learned", "rescue"))
    f.add_argument(
        "--rescue-false",
        type=int,
        default=0,
        help="negative pairs (out of fold) a rescue may end on the fitted pairs",
    )
    b = sub.add_parser("bench")
    b.add_argument("--decision", required=True)
    b.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.command == "bench" and args.rest[:1] == ["--"]:
        args.rest = args.rest[1:]
    return {"collect": collect, "fit": fit, "bench": bench}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
